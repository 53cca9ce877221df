package loss

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"maple/algorithms/data"
)

// Step is, bit for bit, Grad into a buffer followed by w_j −= μ·g_j (what
// fedavg's Local.Gradient and Local.Descend do), with θ = θ₀ + w kept beside
// w through several steps: every model, with and without an Origin, with
// and without a regularizer, uniform and importance weights, dense, coded
// and sparse data, a batch longer than termBlock, and both the assembly and
// the Go kernels.
func TestStepIsGradThenDescend(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 4))
	const n, features, classes = termBlock + 40, 13, 3
	dense, coded := pixelSets(r, n, features, classes)
	sets := []struct {
		name string
		s    *data.Set
	}{{"dense", dense}, {"coded", coded}, {"sparse", sparseCopy(dense)}}
	losses := multiLosses(features, r)
	relu := Loss{Kind: MLP, Classes: classes, Hidden: 7, Activation: ReLU} // ρ = 0, from an origin
	relu.Origin = relu.Init(features, r)
	softmax := Loss{Kind: Softmax, Classes: classes} // ρ = 0
	losses = append(losses, relu, softmax, Loss{Kind: Logistic, Rho: 0.01})
	for _, l := range losses {
		for _, set := range sets {
			s := set.s
			if l.GLM() {
				s = &data.Set{Dim: s.Dim, X: s.X, RowPtr: s.RowPtr, Col: s.Col, Val: s.Val, Coded: s.Coded, Y: make([]float64, n)}
				for i := range s.Y {
					s.Y[i] = float64(2*r.IntN(2) - 1)
				}
				if s.Coded != nil {
					continue // the generalized linear losses read coded rows through Grad alone
				}
			}
			for _, batch := range []int{1, 10, termBlock + 3} {
				for _, weighted := range []bool{false, true} {
					idx := r.Perm(n)[:batch]
					var a []float64
					if weighted {
						a = randomVector(r, batch, 0.1)
					}
					dim := l.Dim(features)
					w0 := randomVector(r, dim, 0.1)
					const mu, steps = 0.3, 3
					type result struct{ w, theta []float64 }
					asm, plain := withKernels(func() result {
						w := slices.Clone(w0)
						var theta []float64
						if l.KeepsParams() {
							theta = make([]float64, dim)
							l.Params(theta, w)
						}
						scratch := make([]float64, dim)
						for range steps {
							l.Step(w, theta, mu, s, idx, a, scratch)
						}
						return result{w, theta}
					})
					w := slices.Clone(w0)
					g := make([]float64, dim)
					for range steps {
						l.Grad(g, w, s, idx, a)
						for j := range w {
							w[j] -= float64(mu * g[j])
						}
					}
					what := fmt.Sprintf("%v (origin %v, ρ %v) %s batch %d weighted %v", l.Kind, l.Origin != nil, l.Rho, set.name, batch, weighted)
					sameBits(t, what+": Go kernels", plain.w, w)
					sameBits(t, what+": assembly kernels", asm.w, w)
					if l.KeepsParams() {
						theta := make([]float64, dim)
						l.Params(theta, w)
						sameBits(t, what+": θ, Go kernels", plain.theta, theta)
						sameBits(t, what+": θ, assembly kernels", asm.theta, theta)
					}
				}
			}
		}
	}
}

// Step allocates nothing.
func TestStepDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers on purpose")
	}
	r := rand.New(rand.NewPCG(32, 5))
	s := classSet(r, 50, 20, 3)
	idx := []int{1, 5, 9, 20, 33}
	for _, l := range multiLosses(20, r) {
		w := randomVector(r, l.Dim(20), 0.1)
		theta, scratch := make([]float64, len(w)), make([]float64, len(w))
		if l.KeepsParams() {
			l.Params(theta, w)
		}
		if n := testing.AllocsPerRun(100, func() { l.Step(w, theta, 0.01, s, idx, nil, scratch) }); n != 0 {
			t.Errorf("%v: %v allocations per Step", l.Kind, n)
		}
	}
}
