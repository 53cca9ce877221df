package optimum

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// blasSums is how LeastSquares summed the normal equations before
// NormalEquations: blas64.Syr and blas64.Axpy on the raw storage of a
// SymDense and a VecDense, every row copied into a cleared vector.
func blasSums(sets []*data.Set, weights []float64) (r, b []float64) {
	dim := sets[0].Dim
	rm, bm := mat.NewSymDense(dim, nil), mat.NewVecDense(dim, nil)
	rs, bv := rm.RawSymmetric(), bm.RawVector()
	x := blas64.Vector{N: dim, Inc: 1, Data: make([]float64, dim)}
	for k, s := range sets {
		scale := weights[k] / float64(s.Len())
		for n := 0; n < s.Len(); n++ {
			clear(x.Data)
			s.AddScaledRow(x.Data, n, 1)
			blas64.Syr(scale, x, rs)
			blas64.Axpy(scale*s.Y[n], x, bv)
		}
	}
	return rs.Data, bv.Data
}

// testSets returns regression sets of dimension dim with the corners of
// the sums in them: a zero label, zero and negative-zero features, a row of
// zeros, and a copy in compressed sparse rows.
func testSets(dim int, seed uint64) []*data.Set {
	c := data.RegressionConfig{Agents: 5, SamplesMin: 1, SamplesMax: 12, Dim: dim, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}
	sets, _ := data.Regression(c, seed)
	sets[0].Y[0] = 0
	sets[1].X[0] = math.Copysign(0, -1)
	clear(sets[2].Row(0))
	return append(sets, sparseCopy(sets[3]))
}

// NormalEquations sums what the BLAS calls summed, bit for bit, entry by
// entry — the written-out two-dimensional loop included — for dense and
// sparse rows, weights 0, −1 and others, zero labels and zero features.
func TestNormalEquationsAreTheBLASSums(t *testing.T) {
	for dim := 1; dim <= 6; dim++ {
		sets := testSets(dim, uint64(dim))
		for _, weights := range [][]float64{Uniform(len(sets)), {1, -1, 0.3, 0, 2, 0.5}} {
			wantR, wantB := blasSums(sets, weights)
			e := NewNormalEquations(dim)
			for k, s := range sets {
				e.Add(weights[k], s)
			}
			if !sameBits(e.r, wantR) || !sameBits(e.b, wantB) {
				t.Errorf("dim %d, weights %v: R̂ %v r̂ %v, the BLAS calls give %v %v", dim, weights, e.r, e.b, wantR, wantB)
			}
		}
	}
}

// sameBits reports whether a and b hold the same float64s, bit for bit.
func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// LocalLeastSquares returns, for every agent, what LeastSquares of its
// dataset alone returns — the minimizer bit for bit, or the same error —
// whether the condition bound lets it skip gonum's estimate (the fast
// path, in two dimensions cholesky2) or not: ρ from 1 down to 0, one sample
// to fifteen, singular systems (ρ = 0, fewer samples than features) and
// nearly singular ones (ρ = 10⁻¹⁸) included.
func TestLocalLeastSquaresIsLeastSquares(t *testing.T) {
	for dim := 1; dim <= 5; dim++ {
		c := data.RegressionConfig{Agents: 300, SamplesMin: 1, SamplesMax: 15, Dim: dim, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}
		sets, _ := data.Regression(c, uint64(10+dim))
		e := NewNormalEquations(dim)
		got := make([]float64, dim)
		fast, failed := 0, 0
		for _, rho := range []float64{1, 0.001, 1e-9, 1e-18, 0} {
			for k, s := range sets {
				want, werr := matLeastSquares([]*data.Set{s}, []float64{1}, rho)
				err := LocalLeastSquares(got, e, s, rho)
				if (err == nil) != (werr == nil) || err != nil && !sameError(err, werr) {
					t.Fatalf("dim %d, ρ %g, agent %d: error %v, LeastSquares's %v", dim, rho, k, err, werr)
				}
				if err != nil {
					failed++
				}
				if err == nil && !sameBits(got, want) {
					t.Fatalf("dim %d, ρ %g, agent %d: %v, LeastSquares gives %v", dim, rho, k, got, want)
				}
				if wellConditioned(shifted(e, rho), dim, rho, s.Len()) {
					fast++
				}
			}
		}
		if fast < len(sets) || dim > 1 && failed == 0 {
			t.Errorf("dim %d: the fast path served %d systems, %d failed", dim, fast, failed)
		}
		t.Logf("dim %d: %d systems of %d on the fast path, %d failed", dim, fast, 5*len(sets), failed)
	}
}

// shifted returns R̂ + ρI of e, its upper triangle, as SolveTo forms it.
func shifted(e *NormalEquations, rho float64) []float64 {
	dim := e.dim
	a := make([]float64, dim*dim)
	for j := range dim {
		copy(a[j*dim+j:j*dim+dim], e.r[j*dim+j:j*dim+dim])
		a[j*dim+j] += rho
	}
	return a
}

// sameError reports whether a local solve's error says what LeastSquares's
// (ErrSingular, or gonum's condition error wrapped) says.
func sameError(err, want error) bool {
	var cond mat.Condition
	if errors.As(want, &cond) {
		var got mat.Condition
		return errors.As(err, &got) && got == cond
	}
	return errors.Is(err, ErrSingular) && errors.Is(want, ErrSingular)
}

// cholesky2 is lapack64.Potrf and Potrs on a 2×2 system, bit for bit, and
// fails where Potrf fails: symmetric matrices of every scale, conditioning
// and sign pattern (off-diagonal zero, indefinite, semi-definite).
func TestCholesky2IsGonums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dst := make([]float64, 2)
	for i := range 200000 {
		scale := math.Pow(10, float64(r.IntN(13)-6))
		a := []float64{scale * r.Float64(), scale * r.NormFloat64(), 0, scale * r.Float64()}
		switch i % 5 {
		case 0:
			a[1] = 0
		case 1: // nearly singular: a₀₁² ≈ a₀₀ a₁₁
			a[1] = math.Copysign(math.Sqrt(a[0]*a[3])*(1-math.Pow(10, -float64(r.IntN(17)))), a[1])
		}
		b := []float64{r.NormFloat64(), scale * r.NormFloat64()}
		want := slices.Clone(b)
		u := slices.Clone(a)
		_, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: 2, Stride: 2, Data: u})
		if ok {
			lapack64.Potrs(blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: 2, Stride: 2, Data: u},
				blas64.General{Rows: 2, Cols: 1, Stride: 1, Data: want})
		}
		if got := cholesky2(dst, a, b); got != ok || ok && !sameBits(dst, want) {
			t.Fatalf("A = %v, b = %v: cholesky2 %v %v, gonum %v %v", a, b, got, dst, ok, want)
		}
	}
}

// Whenever wellConditioned lets a system skip the condition estimate,
// gonum's estimate is below its bound 2·dim·‖A‖₁/ρ, itself far below the
// tolerance: random normal equations of one agent, of every conditioning.
func TestWellConditionedBoundsTheEstimate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		dim, n := 1+r.IntN(5), 1+r.IntN(20)
		s := &data.Set{Dim: dim, X: make([]float64, n*dim), Y: make([]float64, n)}
		for j := range s.X {
			s.X[j] = r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3))
		}
		rho := math.Pow(10, -float64(r.IntN(20)))
		e := NewNormalEquations(dim)
		e.Add(1, s)
		a := shifted(e, rho)
		if !wellConditioned(a, dim, rho, n) {
			continue
		}
		var chol mat.Cholesky
		if !chol.Factorize(mat.NewSymDense(dim, a)) {
			t.Fatalf("system %d: accepted, but not positive definite", i)
		}
		var norm float64
		for j := range dim {
			var sum float64
			for k := range dim {
				sum += math.Abs(a[min(j, k)*dim+max(j, k)])
			}
			norm = max(norm, sum)
		}
		if bound := 2 * float64(dim) * norm / rho; chol.Cond() > bound*(1+1e-6) || bound > mat.ConditionTolerance/conditionMargin {
			t.Fatalf("system %d (dim %d, ρ %g): estimate %g, bound %g", i, dim, rho, chol.Cond(), bound)
		}
	}
}

// The pieces a caller fuses into its own passes give SolveSource's
// numbers: LeastSquaresSource and Minimize its minimizer, GradNorm and a
// Gradient summed agent by agent its report's gradient norm, bit for bit,
// over more agents than a pass draws ahead at once.
func TestPiecesAreSolveSource(t *testing.T) {
	src, _ := data.RegressionSource(data.RegressionConfig{Agents: 900, SamplesMin: 1, SamplesMax: 6, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 8)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	ctx := context.Background()
	want, rep, err := SolveSource(ctx, l, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, wrep, err := LeastSquaresSource(ctx, l, src, nil)
	if err != nil || !sameBits(w, want) || wrep.Method != rep.Method {
		t.Errorf("LeastSquaresSource: %v %+v %v; SolveSource %v %+v", w, wrep, err, want, rep)
	}
	if m, err := Minimize(ctx, l, src, nil); err != nil || !sameBits(m, want) {
		t.Errorf("Minimize: %v %v; SolveSource %v", m, err, want)
	}
	if g, err := GradNorm(ctx, l, src, nil, want); err != nil || g != rep.GradNorm {
		t.Errorf("GradNorm: %v %v; the report's %v", g, err, rep.GradNorm)
	}
	g := NewGradient(l, src.Agents(), nil, want)
	e := NewNormalEquations(2)
	for k := range src.Agents() {
		s := src.Set(k)
		g.Add(k, s)
		e.Add(1/float64(src.Agents()), s)
	}
	if g.Norm() != rep.GradNorm {
		t.Errorf("Gradient: %v; the report's %v", g.Norm(), rep.GradNorm)
	}
	if w, err := e.Solve(l.Rho); err != nil || !sameBits(w, want) {
		t.Errorf("NormalEquations.Solve: %v %v; SolveSource %v", w, err, want)
	}
}
