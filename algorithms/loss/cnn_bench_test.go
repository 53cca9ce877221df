package loss

import (
	"math/rand/v2"
	"testing"
)

// cnnBenchLoss returns the named network on 28×28 images of standard
// normal pixels, from PyTorch's initialization.
func cnnBenchLoss(b *testing.B, name string, n int) (Loss, []float64, []int, *rand.Rand) {
	b.Helper()
	layers, err := Architecture(name, 10)
	if err != nil {
		b.Fatal(err)
	}
	nt, err := NewNet(Shape{C: 1, H: 28, W: 28}, layers, 10)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	l := Loss{Kind: CNN, Classes: 10, Net: nt}
	l.Origin = l.Init(784, r)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return l, make([]float64, nt.Dim()), idx, r
}

// BenchmarkCNNStep measures one SGD step of a batch of 10 (McMahan et al.'s
// B) for the named networks.
func BenchmarkCNNStep(b *testing.B) {
	for _, name := range []string{"mcmahan-cnn", "papernot-cnn"} {
		b.Run(name, func(b *testing.B) {
			l, w, idx, r := cnnBenchLoss(b, name, 10)
			s := classSet(r, 10, 784, 10)
			theta := make([]float64, len(w))
			l.Params(theta, w)
			scratch := make([]float64, len(w))
			for b.Loop() {
				l.Step(w, theta, 0.01, s, idx, nil, scratch)
			}
		})
	}
}

// BenchmarkCNNEvaluate measures the forward pass of 64 examples.
func BenchmarkCNNEvaluate(b *testing.B) {
	for _, name := range []string{"mcmahan-cnn", "papernot-cnn"} {
		b.Run(name, func(b *testing.B) {
			l, w, _, r := cnnBenchLoss(b, name, 64)
			s := classSet(r, 64, 784, 10)
			for b.Loop() {
				l.Evaluate(w, s)
			}
		})
	}
}

// BenchmarkCNNClippedGradSum measures DP-SGD's clipped sum over 64
// examples against the plain batch gradient of the same examples.
func BenchmarkCNNClippedGradSum(b *testing.B) {
	for _, name := range []string{"papernot-cnn"} {
		l, w, idx, r := cnnBenchLoss(b, name, 64)
		s := classSet(r, 64, 784, 10)
		dst, scratch := make([]float64, len(w)), make([]float64, len(w))
		b.Run(name+"/clipped", func(b *testing.B) {
			for b.Loop() {
				l.ClippedGradSum(dst, w, s, idx, 0.1, scratch)
			}
		})
		b.Run(name+"/grad", func(b *testing.B) {
			for b.Loop() {
				l.Grad(dst, w, s, idx, nil)
			}
		})
	}
}
