package loss

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

// By hand, least squares on two 1-D samples at w = 1: the per-example
// gradients ℓ′(xw, y)·x are computed with Deriv and clipped to c = 1.
func TestClippedGradSumByHand(t *testing.T) {
	l := Loss{Kind: LeastSquares, Rho: 0.5}
	s := &data.Set{Dim: 1, X: []float64{2, 0.1}, Y: []float64{0, 0}}
	w := []float64{1}
	g0, g1 := l.Deriv(2, 0)*2, l.Deriv(0.1, 0)*0.1
	want := math.Copysign(math.Min(1, math.Abs(g0)), g0) + math.Copysign(math.Min(1, math.Abs(g1)), g1)
	dst, scratch := make([]float64, 1), make([]float64, 1)
	wantClipped := 0
	for _, g := range []float64{g0, g1} {
		if math.Abs(g) > 1 {
			wantClipped++
		}
	}
	if n := l.ClippedGradSum(dst, w, s, []int{0, 1}, 1, scratch); n != wantClipped || math.Abs(dst[0]-want) > 1e-15 {
		t.Errorf("sum %v (%d clipped), want %v (%d)", dst[0], n, want, wantClipped)
	}
}

// For every model: with a clipping norm no gradient reaches, the clipped
// sum is B times the unregularized mini-batch gradient (the same terms
// summed in another order: 1e-12 relative); with a tiny norm every term is
// clipped and the sum's norm is at most B·c.
func TestClippedGradSumAllModels(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	const n, dim = 12, 5
	for _, l := range []Loss{
		{Kind: LeastSquares, Rho: 0.1}, {Kind: Logistic, Rho: 0.1},
		{Kind: Softmax, Classes: 3, Rho: 0.1}, {Kind: MLP, Classes: 3, Hidden: 4, Activation: Tanh, Rho: 0.1},
	} {
		var s *data.Set
		if l.GLM() {
			s = classSet(r, n, dim, 2)
			for i := range s.Y {
				s.Y[i] = 2*s.Y[i] - 1
			}
		} else {
			s = classSet(r, n, dim, 3)
		}
		if l.Kind == MLP {
			l.Origin = l.Init(dim, r)
		}
		w := make([]float64, l.Dim(dim))
		for i := range w {
			w[i] = 0.3 * r.NormFloat64()
		}
		idx := []int{0, 3, 4, 7, 11}
		dst, scratch, ref := make([]float64, len(w)), make([]float64, len(w)), make([]float64, len(w))
		if c := l.ClippedGradSum(dst, w, s, idx, 1e9, scratch); c != 0 {
			t.Errorf("%v: %d clipped at 1e9", l.Kind, c)
		}
		plain := l
		plain.Rho = 0
		plain.Grad(ref, w, s, idx, nil)
		floats.Scale(float64(len(idx)), ref)
		for i := range ref {
			if math.Abs(dst[i]-ref[i]) > 1e-12*(1+math.Abs(ref[i])) {
				t.Fatalf("%v: coordinate %d: %v, want %v", l.Kind, i, dst[i], ref[i])
			}
		}
		if c := l.ClippedGradSum(dst, w, s, idx, 1e-6, scratch); c != len(idx) || floats.Norm(dst, 2) > float64(len(idx))*1e-6*(1+1e-12) {
			t.Errorf("%v: %d clipped, norm %v", l.Kind, c, floats.Norm(dst, 2))
		}
	}
}

// clippedOneByOne is ClippedGradSum's definition, one example's gradient at
// a time: Grad of the data term, its norm summed by floats.Dot (four lanes
// on amd64; laneDot everywhere), clipped and added to the sum.
func clippedOneByOne(l Loss, dst, w []float64, s *data.Set, idx []int, c float64) (clipped int) {
	l.Rho = 0
	clear(dst)
	g := make([]float64, len(w))
	for _, n := range idx {
		l.Grad(g, w, s, []int{n}, nil)
		dot := laneDot(g, g)
		if dotLanes == 4 && !math.IsNaN(dot) && math.Float64bits(dot) != math.Float64bits(floats.Dot(g, g)) {
			panic("laneDot is not floats.Dot")
		}
		if norm := math.Sqrt(dot); norm > c {
			for j := range dst {
				dst[j] += float64(c / norm * g[j])
			}
			clipped++
		} else {
			floats.Add(dst, g)
		}
	}
	return clipped
}

// Softmax regression's batched clipped sum is the one-example definition
// bit for bit: dense and coded data, feature counts with every remainder
// modulo 4 (the lanes of the gradient's entries shift from class to class
// when it is not 0), two and ten classes (the biases' entries in the lanes
// and in the tail), batches shorter and longer than a block, clipping none,
// some and all, a non-finite θ (the one-example path), assembly and Go
// kernels.
func TestSoftmaxClippedIsOneExampleAtATime(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 7))
	for _, features := range []int{4, 5, 6, 7, 12, 784} {
		for _, classes := range []int{2, 3, 10} {
			dense, coded := pixelSets(r, chunkRows+70, features, classes)
			l := Loss{Kind: Softmax, Classes: classes, Rho: 0.3}
			for _, set := range []*data.Set{dense, coded} {
				for _, batch := range []int{1, 3, 61, chunkRows + 9} {
					idx := r.Perm(set.Len())[:batch]
					w := randomVector(r, l.Dim(features), 0.2)
					if batch == 3 {
						w[0] = math.Inf(1)
					}
					for _, c := range []float64{1e-3, 0.5, 1e9} {
						want := make([]float64, len(w))
						wantN := clippedOneByOne(l, want, w, set, idx, c)
						type result struct {
							dst []float64
							n   int
						}
						asm, plain := withKernels(func() result {
							dst, scratch := make([]float64, len(w)), make([]float64, len(w))
							n := l.ClippedGradSum(dst, w, set, idx, c, scratch)
							return result{dst, n}
						})
						what := fmt.Sprintf("M=%d K=%d coded=%v batch=%d c=%v", features, classes, set.Coded != nil, batch, c)
						if asm.n != wantN || plain.n != wantN {
							t.Fatalf("%s: %d and %d clipped, want %d", what, asm.n, plain.n, wantN)
						}
						sameBits(t, what+": assembly", asm.dst, want)
						sameBits(t, what+": Go", plain.dst, want)
					}
				}
			}
		}
	}
}
