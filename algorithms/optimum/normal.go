package optimum

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// This file holds the pieces of the least-squares closed form and of the
// solver's report that a caller passing over millions of agents anyway can
// take in its own pass (docs/design.md, "Ten million clients"): the normal
// equations summed agent by agent, the gradient at w^o summed agent by
// agent, and a local minimizer solved without allocating. Each computes
// what LeastSquares, SolveSource and Drift compute, bit for bit: the same
// operations in the same order.

// NormalEquations sums the normal equations of weighted least squares,
//
//	R̂ = Σ_k π_k (1/N_k) Σ_n x_n x_nᵀ,  r̂ = Σ_k π_k (1/N_k) Σ_n y_n x_n,
//
// one agent at a time, sample by sample, in the order the agents are
// added: the sums of LeastSquares. The zero value is not usable; make one
// with NewNormalEquations.
type NormalEquations struct {
	dim int
	r   []float64 // R̂, row-major dim×dim, its upper triangle
	b   []float64 // r̂
	x   []float64 // one sample's features
	// The local solve's work space (SolveTo).
	a, w []float64
}

// NewNormalEquations returns empty normal equations of dimension dim.
func NewNormalEquations(dim int) *NormalEquations {
	return &NormalEquations{dim: dim, r: make([]float64, dim*dim), b: make([]float64, dim), x: make([]float64, dim)}
}

// Reset empties the sums.
func (e *NormalEquations) Reset() {
	clear(e.r)
	clear(e.b)
}

// Add adds the share of dataset s with weight π: π/N Σ_n x_n x_nᵀ and
// π/N Σ_n y_n x_n. It computes what gonum's blas64.Syr(π/N, x_n, R̂) and
// blas64.Axpy(π/N·y_n, x_n, r̂) do, the calls LeastSquares made, without
// their checks at every sample: BLAS's quick returns for a zero scale, the
// rank-one update of the upper triangle row by row skipping a zero x_i·π/N,
// and each product rounded before it is added (the explicit conversions
// forbid a fused multiply-add, which gonum's assembly does not use).
func (e *NormalEquations) Add(weight float64, s *data.Set) {
	scale := weight / float64(s.Len())
	dim, r, b := e.dim, e.r, e.b
	if dim == 2 && s.X != nil {
		e.add2(scale, s.X[:2*s.Len()], s.Y)
		return
	}
	for n := 0; n < s.Len(); n++ {
		x := e.x
		if s.X != nil {
			x = s.Row(n)
		} else {
			clear(x)
			s.AddScaledRow(x, n, 1)
		}
		x = x[:dim]
		// A dense row is read as it is where LeastSquares added it to a
		// cleared vector: the sums differ at most in the sign of a zero
		// x_j, which changes no sum (see TestNormalEquationsAreLeastSquares).
		if scale != 0 {
			for i, xi := range x {
				tmp := xi * scale
				if tmp == 0 {
					continue
				}
				row := r[i*dim+i : i*dim+dim]
				for j, v := range x[i:] {
					row[j] += float64(v * tmp)
				}
			}
		}
		if a := scale * s.Y[n]; a != 0 {
			for j, v := range x {
				b[j] += float64(a * v)
			}
		}
	}
}

// add2 is Add for dense rows of two features, the loops written out with
// the sums held in registers: each sum receives the same terms in the
// same order.
func (e *NormalEquations) add2(scale float64, x, y []float64) {
	r, b := e.r[:4], e.b[:2]
	r00, r01, r11, b0, b1 := r[0], r[1], r[3], b[0], b[1]
	for n, yn := range y {
		x0, x1 := x[2*n], x[2*n+1]
		if scale != 0 {
			if tmp := x0 * scale; tmp != 0 {
				r00 += float64(x0 * tmp)
				r01 += float64(x1 * tmp)
			}
			if tmp := x1 * scale; tmp != 0 {
				r11 += float64(x1 * tmp)
			}
		}
		if a := scale * yn; a != 0 {
			b0 += float64(a * x0)
			b1 += float64(a * x1)
		}
	}
	r[0], r[1], r[3], b[0], b[1] = r00, r01, r11, b0, b1
}

// Solve returns the minimizer (R̂ + ρI)⁻¹ r̂, as LeastSquares does: by
// gonum's Cholesky factorization, with its error for a matrix that is not
// positive definite (ErrSingular) or whose estimated condition number
// exceeds mat.ConditionTolerance.
func (e *NormalEquations) Solve(rho float64) ([]float64, error) {
	dim := e.dim
	r := mat.NewSymDense(dim, append([]float64(nil), e.r...))
	b := mat.NewVecDense(dim, append([]float64(nil), e.b...))
	for j := 0; j < dim; j++ {
		r.SetSym(j, j, r.At(j, j)+rho)
	}
	var chol mat.Cholesky
	if !chol.Factorize(r) {
		return nil, ErrSingular
	}
	var w mat.VecDense
	if err := chol.SolveVecTo(&w, b); err != nil {
		return nil, fmt.Errorf("optimum: %w", err)
	}
	return append([]float64(nil), w.RawVector().Data...), nil
}

// SolveTo sets dst to what Solve returns, with the same error, without
// allocating when the condition number is surely below
// mat.ConditionTolerance: gonum's Cholesky.Factorize estimates it (LAPACK's
// Dpocon, most of the time of solving a small system) only for
// SolveVecTo's error, and SolveTo skips the estimate when a bound shows it
// cannot exceed the tolerance, calling the same factorization and
// triangular solves (lapack64.Potrf and Potrs) on the same numbers. Above
// the bound, Solve itself runs. n samples were added (the largest N_k of
// the agents added, for the rounding of the sums; see wellConditioned).
func (e *NormalEquations) SolveTo(dst []float64, rho float64, n int) error {
	dim := e.dim
	if e.a == nil {
		e.a, e.w = make([]float64, dim*dim), make([]float64, dim)
	}
	a := e.a
	clear(a)
	for i := 0; i < dim; i++ {
		copy(a[i*dim+i:i*dim+dim], e.r[i*dim+i:i*dim+dim])
		a[i*dim+i] += rho
	}
	if !wellConditioned(a, dim, rho, n) {
		w, err := e.Solve(rho)
		if err != nil {
			return err
		}
		copy(dst, w)
		return nil
	}
	if dim == 2 {
		if !cholesky2(dst, a, e.b) {
			return ErrSingular // not reached: a bounded condition number means positive definite
		}
		return nil
	}
	if _, ok := lapack64.Potrf(blas64.Symmetric{Uplo: blas.Upper, N: dim, Stride: dim, Data: a}); !ok {
		return ErrSingular // not reached: a bounded condition number means positive definite
	}
	w := e.w
	copy(w, e.b)
	lapack64.Potrs(blas64.Triangular{Uplo: blas.Upper, Diag: blas.NonUnit, N: dim, Stride: dim, Data: a},
		blas64.General{Rows: dim, Cols: 1, Stride: 1, Data: w})
	copy(dst, w)
	return nil
}

// cholesky2 sets dst to A⁻¹b for the 2×2 symmetric A whose upper triangle
// a holds (row-major), as lapack64.Potrf and lapack64.Potrs compute it:
// gonum's Dpotf2 (u₀₀ = √a₀₀, u₀₁ = a₀₁·(1/u₀₀), u₁₁ = √(a₁₁ − u₀₁²) —
// the dot product of one term is the term), then Dtrsm's two triangular
// solves (each row scaled by the reciprocal of its diagonal entry, the
// off-diagonal term subtracted as an axpy, skipped when u₀₁ is zero), the
// same operations in the same order (TestCholesky2IsGonums). It reports
// false, as Potrf does, when a pivot is not positive.
func cholesky2(dst, a, b []float64) bool {
	a00, a01, a11 := a[0], a[1], a[3]
	if a00 <= 0 || math.IsNaN(a00) {
		return false
	}
	u00 := math.Sqrt(a00)
	u01 := a01 * (1 / u00)
	a11 -= float64(u01 * u01)
	if a11 <= 0 || math.IsNaN(a11) {
		return false
	}
	u11 := math.Sqrt(a11)
	x0, x1 := b[0], b[1]
	// Uᵀy = b.
	x0 *= 1 / u00
	if u01 != 0 {
		x1 += float64(-u01 * x0)
	}
	x1 *= 1 / u11
	// Ux = y.
	x1 *= 1 / u11
	if u01 != 0 {
		x0 += float64(-u01 * x1)
	}
	x0 *= 1 / u00
	dst[0], dst[1] = x0, x1
	return true
}

// conditionMargin is how far below mat.ConditionTolerance (10¹⁶) the bound
// of wellConditioned must lie for the estimate to be skipped: 10⁴, so that
// the estimate, computed with a relative error of about n·ε·κ ≤ 10⁻³ when
// κ ≤ 10¹², cannot come near the tolerance.
const conditionMargin = 1e4

// wellConditioned reports whether the symmetric positive semi-definite
// matrix R̂ plus ρI, whose upper triangle a holds (row-major, dim×dim),
// surely has a 1-norm condition number below mat.ConditionTolerance /
// conditionMargin, so that Cholesky.Factorize's estimate of it, which is
// at most the true one up to its rounding, would not exceed the tolerance.
//
// The bound: κ₁(A) = ‖A‖₁‖A⁻¹‖₁ ≤ ‖A‖₁·√dim·‖A⁻¹‖₂ ≤ dim·‖A‖₁/λ_min(A),
// and R̂ as computed, a sum of n rank-one terms per agent each rounded, is
// within a perturbation E of a positive semi-definite matrix with
// ‖E‖₂ ≤ dim·(n+1)·ε·‖A‖₁ (each entry's error at most (n+1)ε times the
// sum of its terms' magnitudes, which is at most √(R̂_ii R̂_jj) ≤ ‖A‖₁), so
// λ_min(A) ≥ ρ − ‖E‖₂ ≥ ρ/2 when 2‖E‖₂ ≤ ρ — asked here with a factor 2 to
// spare. Then κ₁ ≤ 2·dim·‖A‖₁/ρ. A NaN anywhere fails the test.
func wellConditioned(a []float64, dim int, rho float64, n int) bool {
	if !(rho > 0) {
		return false
	}
	// ‖A‖₁: the largest column sum of |A|, from its upper triangle.
	var norm float64
	for j := 0; j < dim; j++ {
		var sum float64
		for i := 0; i < j; i++ {
			sum += math.Abs(a[i*dim+j])
		}
		for i := j; i < dim; i++ {
			sum += math.Abs(a[j*dim+i])
		}
		norm = max(norm, sum)
	}
	d := float64(dim)
	perturbation := d * float64(n+1) * 0x1p-52 * norm
	return 4*perturbation <= rho && 2*d*norm/rho <= mat.ConditionTolerance/conditionMargin
}

// LocalLeastSquares solves for one agent's least-squares minimizer w_k^o
// of J_k(w) = (1/N) Σ_n (y_n − x_nᵀw)² + ρ‖w‖² into dst: what
// LeastSquares([]*data.Set{s}, Uniform(1), ρ) returns, bit for bit, with
// its error, without allocating once e has solved once (SolveTo). e, of
// s's dimension, is work space, emptied first.
func LocalLeastSquares(dst []float64, e *NormalEquations, s *data.Set, rho float64) error {
	e.Reset()
	e.Add(1, s)
	return e.SolveTo(dst, rho, s.Len())
}

// Gradient sums ∇F(w) = Σ_k π_k ∇J_k(w), agent by agent in agent order, as
// Solve's Report does (its GradNorm), for a caller that passes over the
// agents for more than the gradient.
type Gradient struct {
	l      loss.Loss
	w      []float64
	weight func(k int) float64
	sum, g []float64
}

// NewGradient returns the sum of the gradients at w of the K agents' risks
// with weights π (uniform 1/K when nil), empty.
func NewGradient(l loss.Loss, K int, weights []float64, w []float64) *Gradient {
	uniform := 1 / float64(K)
	weight := func(int) float64 { return uniform }
	if weights != nil {
		weight = func(k int) float64 { return weights[k] }
	}
	return &Gradient{l: l, w: w, weight: weight, sum: make([]float64, len(w)), g: make([]float64, len(w))}
}

// Add adds agent k's term π_k ∇J_k(w), from its dataset s.
func (g *Gradient) Add(k int, s *data.Set) {
	g.Term(g.g, s)
	g.AddTerm(k, g.g)
}

// Term sets dst to ∇J_k(w) of the agent whose dataset is s, for AddTerm.
// It is safe for concurrent use.
func (g *Gradient) Term(dst []float64, s *data.Set) { g.l.FullGrad(dst, g.w, s) }

// AddTerm adds agent k's term π_k ∇J_k(w), given its gradient gk (Term).
func (g *Gradient) AddTerm(k int, gk []float64) { floats.AddScaled(g.sum, g.weight(k), gk) }

// Norm returns ‖∇F(w)‖ of the agents added.
func (g *Gradient) Norm() float64 { return floats.Norm(g.sum, 2) }

// LeastSquaresSource returns SolveSource's minimizer for least squares
// and its Report without the gradient norm, which costs a pass over the
// agents of its own (GradNorm, or Gradient in a pass the caller makes): the
// normal equations summed in one pass (data.Fold), solved by Cholesky.
// The weights and the datasets are checked as SolveSource checks them.
func LeastSquaresSource(ctx context.Context, l loss.Loss, src data.Source, weights []float64) ([]float64, Report, error) {
	p, err := newProblem(l, src, weights)
	if err != nil {
		return nil, Report{}, err
	}
	p.ctx = ctx
	if err := p.interrupted(); err != nil {
		return nil, Report{}, err
	}
	w, err := leastSquares(ctx, src, p.weight, l.Rho)
	if err != nil {
		return nil, Report{}, err
	}
	return w, Report{Method: "closed-form"}, nil
}

// CheckLeastSquares checks what LeastSquaresSource checks before its pass
// — the weights, ρ, agent 0's dataset — for a caller that sums the normal
// equations in a pass of its own.
func CheckLeastSquares(l loss.Loss, src data.Source, weights []float64) error {
	_, err := newProblem(l, src, weights)
	return err
}

// GradNorm returns ‖Σ_k π_k ∇J_k(w)‖ over the agents of src (uniform
// weights when nil), what Solve reports as its GradNorm, in one pass.
func GradNorm(ctx context.Context, l loss.Loss, src data.Source, weights []float64, w []float64) (float64, error) {
	g := NewGradient(l, src.Agents(), weights, w)
	err := g.pass(ctx, src)
	return g.Norm(), err
}

// pass adds every agent of src, their gradients computed on every core
// (data.Fold), each into storage Fold reuses, and added in agent order.
func (g *Gradient) pass(ctx context.Context, src data.Source) error {
	return data.Fold(src, func(_ int, sets []*data.Set, out [][]float64) {
		for i, s := range sets {
			if len(out[i]) != len(g.w) {
				out[i] = make([]float64, len(g.w))
			}
			g.Term(out[i], s)
		}
	}, func(k int, _ *data.Set, gk *[]float64) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("optimum: interrupted: %w", err)
		}
		g.AddTerm(k, *gk)
		return nil
	})
}

// Minimize returns SolveSource's minimizer without its Report, for a
// caller that does not record one: for least squares, without the pass
// over the agents the report's gradient norm takes.
func Minimize(ctx context.Context, l loss.Loss, src data.Source, weights []float64) ([]float64, error) {
	if l.Kind == loss.LeastSquares {
		w, _, err := LeastSquaresSource(ctx, l, src, weights)
		return w, err
	}
	w, _, err := SolveSource(ctx, l, src, weights)
	return w, err
}
