package loss

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

func randomSet(r *rand.Rand, n, dim int, labels bool) *data.Set {
	s := &data.Set{Dim: dim, X: make([]float64, n*dim), Y: make([]float64, n)}
	for i := range s.X {
		s.X[i] = r.NormFloat64()
	}
	for i := range s.Y {
		s.Y[i] = r.NormFloat64()
		if labels {
			s.Y[i] = 1
			if r.IntN(2) == 0 {
				s.Y[i] = -1
			}
		}
	}
	return s
}

// The analytic gradient must match central finite differences of Value. The
// error of a central difference with step h is h²/6·|Q”'| plus rounding
// ε·|Q|/h; with h = 1e-5 both are below 1e-8 for these O(1) losses.
func TestGradMatchesFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, kind := range []Kind{LeastSquares, Logistic} {
		l := Loss{Kind: kind, Rho: 0.3}
		s := randomSet(r, 5, 4, kind == Logistic)
		w := []float64{0.3, -0.7, 1.1, 0.2}
		g := make([]float64, 4)
		for n := 0; n < s.Len(); n++ {
			l.Grad(g, w, s, []int{n}, nil)
			for j := range w {
				const h = 1e-5
				wp, wm := append([]float64(nil), w...), append([]float64(nil), w...)
				wp[j] += h
				wm[j] -= h
				fd := (l.Value(wp, s, n) - l.Value(wm, s, n)) / (2 * h)
				if math.Abs(fd-g[j]) > 1e-8 {
					t.Errorf("%v sample %d coord %d: grad %v, finite difference %v", kind, n, j, g[j], fd)
				}
			}
		}
	}
}

// A uniform mini-batch over all samples is the full gradient, and explicit
// weights 1/N reproduce it; both sums run in the same order, so they agree to
// the last bit.
func TestBatchFormsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := randomSet(r, 7, 3, false)
	l := Loss{Kind: LeastSquares, Rho: 0.01}
	w := []float64{1, 2, 3}
	all := []int{0, 1, 2, 3, 4, 5, 6}
	weights := make([]float64, 7)
	for i := range weights {
		weights[i] = 1.0 / 7
	}
	full, batch, weighted := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	l.FullGrad(full, w, s)
	l.Grad(batch, w, s, all, nil)
	l.Grad(weighted, w, s, all, weights)
	for j := range full {
		if full[j] != batch[j] || full[j] != weighted[j] {
			t.Errorf("coord %d: full %v, batch %v, weighted %v", j, full[j], batch[j], weighted[j])
		}
	}
	if got, want := l.SampleGradNorm(w, s, 2, make([]float64, 3)), norm(gradOf(l, w, s, 2)); math.Abs(got-want) > 1e-15*want {
		t.Errorf("SampleGradNorm = %v, want %v", got, want)
	}
}

func gradOf(l Loss, w []float64, s *data.Set, n int) []float64 {
	g := make([]float64, len(w))
	l.Grad(g, w, s, []int{n}, nil)
	return g
}

func norm(v []float64) float64 {
	var q float64
	for _, x := range v {
		q += x * x
	}
	return math.Sqrt(q)
}

// The logistic helpers must stay finite far in the tails, where the naive
// formulas overflow.
func TestLogisticTailsAreFinite(t *testing.T) {
	l := Loss{Kind: Logistic}
	for _, z := range []float64{-1000, -40, 0, 40, 1000} {
		for _, y := range []float64{-1, 1} {
			v, d, c := l.Term(z, y), l.Deriv(z, y), l.Curvature(z, y)
			if math.IsNaN(v) || math.IsInf(v, 0) || math.IsNaN(d) || math.IsNaN(c) {
				t.Errorf("z=%v y=%v: term %v deriv %v curvature %v", z, y, v, d, c)
			}
		}
	}
	if got := l.Term(1000, 1); got != 0 {
		t.Errorf("ln(1+e^-1000) = %v, want 0", got)
	}
	if got := l.Term(-1000, 1); got != 1000 {
		t.Errorf("ln(1+e^1000) = %v, want 1000", got)
	}
}

func TestTestError(t *testing.T) {
	s := &data.Set{Dim: 1, X: []float64{1, -2, 3, 0}, Y: []float64{1, 1, -1, 1}}
	if got := (Loss{Kind: Logistic}).TestError([]float64{1}, s); got != 0.75 {
		t.Errorf("TestError = %v, want 0.75 (one correct, one wrong sign, one wrong, one zero score)", got)
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range []Kind{LeastSquares, Logistic, Softmax, MLP} {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseKind("hinge"); err == nil {
		t.Error("ParseKind accepted an unknown loss")
	}
}

// The dense fast path of the generalized linear gradients performs exactly
// the operations of the generic row access: on a dense set and on the same
// matrix stored sparse with every entry present (whose Dot and AddScaledRow
// run the same sums in the same column order), Grad, FullGrad and
// SampleGradNorm agree bit for bit.
func TestDenseGradientsAreTheGenericOnes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, kind := range []Kind{LeastSquares, Logistic} {
		for dim := 1; dim <= 12; dim++ {
			// 23 samples: FullGrad takes five groups of four and a tail of three.
			dense := randomSet(r, 23, dim, kind == Logistic)
			sparse := &data.Set{Dim: dim, Y: dense.Y, RowPtr: make([]int, 24)}
			for n := range 23 {
				for j, v := range dense.Row(n) {
					sparse.Col = append(sparse.Col, int32(j))
					sparse.Val = append(sparse.Val, v)
				}
				sparse.RowPtr[n+1] = len(sparse.Val)
			}
			l := Loss{Kind: kind, Rho: 0.01}
			w := make([]float64, dim)
			for j := range w {
				w[j] = r.NormFloat64()
			}
			gd, gs := make([]float64, dim), make([]float64, dim)
			// Batches of every length up to 9: groups of four and the tails.
			all, a := []int{3, 7, 7, 19, 0, 12, 5, 5, 1}, []float64{0.1, 0.7, 0.2, 1.3, 0.5, 2, 0.9, 0.3, 1.1}
			for k := 1; k <= len(all); k++ {
				for _, weights := range [][]float64{nil, a[:k]} {
					l.Grad(gd, w, dense, all[:k], weights)
					l.Grad(gs, w, sparse, all[:k], weights)
					sameBits(t, "Grad", gd, gs)
				}
			}
			l.FullGrad(gd, w, dense)
			l.FullGrad(gs, w, sparse)
			sameBits(t, "FullGrad", gd, gs)
			for n := range 23 {
				nd, ns := l.SampleGradNorm(w, dense, n, gd), l.SampleGradNorm(w, sparse, n, gs)
				sameBits(t, "SampleGradNorm", []float64{nd}, []float64{ns})
			}
		}
	}
}

// sameBits fails the test unless a and b hold the same bits, entry by entry.
// Two NaNs count as the same whatever their payloads: which NaN an
// operation on NaNs or infinities returns is the processor's choice (the
// race detector's build of the Go kernels gave another than the
// one-example path's for a θ with an infinite entry).
func sameBits(t *testing.T, what string, a, b []float64) {
	t.Helper()
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			t.Fatalf("%s: dense %v, generic %v", what, a, b)
		}
	}
}

// SampleGradNorms is SampleGradNorm sample by sample, bit for bit, for
// dimensions below four (the register path), from four on with every tail
// of floats.Dot's four lanes, and for dense and sparse data (sparseNorm's
// lanes against the stored gradient); and SampleGradNorm is
// √(floats.Dot(g, g)) of the single-sample gradient g that Grad computes.
func TestSampleGradNormsIsSampleGradNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, kind := range []Kind{LeastSquares, Logistic} {
		for _, dim := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 100, 1027} {
			dense := randomSet(r, 30, dim, kind == Logistic)
			sparse := &data.Set{Dim: dim, Y: dense.Y, RowPtr: make([]int, 31)}
			for n := range 30 {
				for j, v := range dense.Row(n) {
					if v > 0 { // a sparse row with gaps
						sparse.Col = append(sparse.Col, int32(j))
						sparse.Val = append(sparse.Val, v)
					}
				}
				sparse.RowPtr[n+1] = len(sparse.Val)
			}
			// A zero regularizer and a zero model make zero coordinates.
			for _, rho := range []float64{0, 0.01} {
				l := Loss{Kind: kind, Rho: rho}
				w := make([]float64, dim)
				for j := range w {
					if r.IntN(3) > 0 {
						w[j] = r.NormFloat64()
					}
				}
				for _, set := range []*data.Set{dense, sparse} {
					got, g, scratch := make([]float64, 30), make([]float64, dim), make([]float64, dim)
					l.SampleGradNorms(got, w, set, scratch)
					for n := range got {
						want := l.SampleGradNorm(w, set, n, scratch)
						if math.Float64bits(got[n]) != math.Float64bits(want) {
							t.Fatalf("%v, dim %d, sample %d: SampleGradNorms %v, SampleGradNorm %v", kind, dim, n, got[n], want)
						}
						l.Grad(g, w, set, []int{n}, nil)
						if math.Float64bits(want) != math.Float64bits(math.Sqrt(floats.Dot(g, g))) {
							t.Fatalf("%v, dim %d, sample %d: SampleGradNorm %v is not √(floats.Dot(g, g)) of Grad's g", kind, dim, n, want)
						}
					}
				}
			}
		}
	}
}

// NormsAndFullGrad is SampleGradNorm for every sample and FullGrad, bit for
// bit, and SampleGradNorms and its norms are √(floats.Dot(g, g)) of Grad's
// single-sample gradients: for both generalized linear losses and a
// multi-class one, on dense, sparse (with gaps, and with a repeated column)
// and coded sets, for dimensions 1 to 5 and 100 and
// sample counts that leave every tail of FullGrad's groups of four, with a
// zero and a positive regularizer and models with zero, negative-zero and
// large coordinates.
func TestNormsAndFullGradIsTheSeparateCalls(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	values := new([256]float64)
	for i := range values {
		values[i] = float64(i)/255 - 0.3
	}
	for _, kind := range []Kind{LeastSquares, Logistic, Softmax} {
		for _, dim := range []int{1, 2, 3, 4, 5, 100} {
			for _, samples := range []int{1, 2, 3, 4, 5, 23, 30} {
				dense := randomSet(r, samples, dim, kind == Logistic)
				if kind == Softmax {
					for n := range dense.Y {
						dense.Y[n] = float64(r.IntN(3))
					}
				}
				for i := range dense.X {
					switch r.IntN(8) {
					case 0:
						dense.X[i] = 0
					case 1:
						dense.X[i] = math.Copysign(0, -1)
					}
				}
				sparse := &data.Set{Dim: dim, Y: dense.Y, RowPtr: make([]int, samples+1)}
				// repeated: a sparse set whose last row repeats a column,
				// which the kernels must treat as the generic path does.
				repeated := &data.Set{Dim: dim, Y: dense.Y, RowPtr: make([]int, samples+1)}
				coded := &data.Set{Dim: dim, Y: dense.Y, Coded: &data.CodedRows{Values: values}}
				for n := range samples {
					for j, v := range dense.Row(n) {
						if v > 0 {
							sparse.Col = append(sparse.Col, int32(j))
							sparse.Val = append(sparse.Val, v)
						}
						coded.Coded.Codes = append(coded.Coded.Codes, byte(r.IntN(256)))
					}
					sparse.RowPtr[n+1] = len(sparse.Val)
					coded.Coded.Rows = append(coded.Coded.Rows, n)
				}
				repeated.Col = append(append([]int32(nil), sparse.Col...), 0, 0)
				repeated.Val = append(append([]float64(nil), sparse.Val...), 0.7, -1.3)
				copy(repeated.RowPtr, sparse.RowPtr)
				repeated.RowPtr[samples] += 2
				for _, rho := range []float64{0, 0.01} {
					l := Loss{Kind: kind, Rho: rho, Classes: 3}
					w := make([]float64, l.Dim(dim))
					for j := range w {
						switch r.IntN(6) {
						case 0:
						case 1:
							w[j] = math.Copysign(0, -1)
						case 2:
							w[j] = 50 * r.NormFloat64()
						default:
							w[j] = r.NormFloat64()
						}
					}
					for _, set := range []*data.Set{dense, sparse, repeated, coded} {
						scratch := make([]float64, len(w))
						norms, grad := make([]float64, samples), make([]float64, len(w))
						l.NormsAndFullGrad(norms, grad, w, set, scratch)
						g := make([]float64, len(w))
						for n := range samples {
							want := l.SampleGradNorm(w, set, n, scratch)
							if math.Float64bits(norms[n]) != math.Float64bits(want) {
								t.Fatalf("%v, dim %d, %d samples, ρ %v: norm %d is %v, SampleGradNorm %v", kind, dim, samples, rho, n, norms[n], want)
							}
							l.Grad(g, w, set, []int{n}, nil)
							if plain := math.Sqrt(floats.Dot(g, g)); math.Float64bits(norms[n]) != math.Float64bits(plain) {
								t.Fatalf("%v, dim %d, %d samples, ρ %v: norm %d is %v, √(floats.Dot) of Grad's %v", kind, dim, samples, rho, n, norms[n], plain)
							}
						}
						separate := make([]float64, samples)
						l.SampleGradNorms(separate, w, set, scratch)
						for n := range samples {
							if math.Float64bits(separate[n]) != math.Float64bits(norms[n]) {
								t.Fatalf("%v, dim %d, %d samples, ρ %v: SampleGradNorms %v, NormsAndFullGrad %v", kind, dim, samples, rho, separate, norms)
							}
						}
						want := make([]float64, len(w))
						l.FullGrad(want, w, set)
						for j := range want {
							if math.Float64bits(grad[j]) != math.Float64bits(want[j]) {
								t.Fatalf("%v, dim %d, %d samples, ρ %v: gradient %v, FullGrad %v", kind, dim, samples, rho, grad, want)
							}
						}
					}
				}
			}
		}
	}
}
