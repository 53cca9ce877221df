package optimum

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// aggregateGrad returns Σ_k π_k ∇J_k(w), computed independently of problem.
func aggregateGrad(l loss.Loss, sets []*data.Set, weights, w []float64) []float64 {
	total := make([]float64, len(w))
	g := make([]float64, len(w))
	for k, s := range sets {
		l.FullGrad(g, w, s)
		floats.AddScaled(total, weights[k], g)
	}
	return total
}

func logisticSets(t *testing.T) []*data.Set {
	t.Helper()
	c := data.LogisticConfig{Agents: 4, SamplesMin: 30, SamplesMax: 80, Dim: 3, CovScale: 1,
		ScoreSD: 3, MeanShift: 0.5, FlipMax: 0.1, TestSamples: 1}
	sets, _, _ := data.Logistic(c, 3)
	return sets
}

func clickSets(t *testing.T, dim int) []*data.Set {
	t.Helper()
	c := data.DefaultClickConfig()
	c.Agents, c.SamplesMin, c.SamplesMax, c.Dim, c.Active = 5, 40, 80, dim, 4
	sets, _, _ := data.Click(c, 4)
	return sets
}

// At the returned w the aggregate gradient, recomputed independently, meets
// Solve's own stopping rule ‖∇F‖ ≤ 1e-12·max(1, ‖∇F(0)‖); the Report states
// the method and that same norm. Newton's quadratic convergence takes it to
// the rounding floor (~1e-16) within a few iterations, far below the rule.
func TestSolveLogisticZeroesTheGradient(t *testing.T) {
	l := loss.Loss{Kind: loss.Logistic, Rho: 0.01}
	for _, tc := range []struct {
		name    string
		sets    []*data.Set
		weights []float64
		method  string
	}{
		{"dense uniform", logisticSets(t), Uniform(4), "newton"},
		{"dense Perron-like", logisticSets(t), []float64{0.1, 0.2, 0.3, 0.4}, "newton"},
		{"sparse", clickSets(t, 64), Uniform(5), "newton"},
		{"sparse, above the Newton limit", clickSets(t, maxNewtonDim+48), Uniform(5), "lbfgs"},
	} {
		w, rep, err := Solve(l, tc.sets, tc.weights)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		g0 := floats.Norm(aggregateGrad(l, tc.sets, tc.weights, make([]float64, len(w))), 2)
		gn := floats.Norm(aggregateGrad(l, tc.sets, tc.weights, w), 2)
		if tol := 1e-12 * max(1, g0); gn > tol {
			t.Errorf("%s: ‖∇F(w)‖ = %g > %g", tc.name, gn, tol)
		}
		// The report's norm is the same quantity, up to summation order.
		if rep.Method != tc.method || rep.Iterations < 1 || math.Abs(rep.GradNorm-gn) > 1e-15 {
			t.Errorf("%s: report %+v, want method %s and gradient norm %g", tc.name, rep, tc.method, gn)
		}
	}
}

// A long run of plain gradient descent reaches the same minimizer. F is
// L-smooth with L = max_n ‖x_n‖²/4 + 2ρ (ℓ″ ≤ 1/4) and μ-strongly convex with
// μ = 2ρ, so GD with step 1/L converges and ‖w − w^o‖ ≤ ‖∇F(w)‖/μ. GD runs
// until that bound is 1e-9; Solve's w is within 1e-12·max(1, ‖∇F(0)‖)/μ
// ≈ 1e-10 of w^o. The two therefore agree to 2e-9 < 1e-8.
func TestSolveLogisticMatchesGradientDescent(t *testing.T) {
	sets := logisticSets(t)
	weights := []float64{0.4, 0.3, 0.2, 0.1}
	l := loss.Loss{Kind: loss.Logistic, Rho: 0.05}
	w, _, err := Solve(l, sets, weights)
	if err != nil {
		t.Fatal(err)
	}
	var lip float64
	for _, s := range sets {
		for n := 0; n < s.Len(); n++ {
			lip = max(lip, s.Dot(n, row(s, n))/4)
		}
	}
	lip += 2 * l.Rho
	mu := 2 * l.Rho
	gd := make([]float64, 3)
	for it := 0; ; it++ {
		g := aggregateGrad(l, sets, weights, gd)
		if floats.Norm(g, 2)/mu <= 1e-9 {
			break
		}
		if it == 1_000_000 {
			t.Fatal("gradient descent did not converge")
		}
		floats.AddScaled(gd, -1/lip, g)
	}
	if d := floats.Distance(w, gd, 2); d > 1e-8 {
		t.Errorf("‖w_Newton − w_GD‖ = %g, want ≤ 1e-8 (Newton %v, GD %v)", d, w, gd)
	}
}

// Newton's method and L-BFGS solve the same sparse problem; by strong
// convexity each is within ‖∇F‖/(2ρ) of w^o, so they agree to the sum of
// those bounds.
func TestNewtonAndLBFGSAgree(t *testing.T) {
	sets := clickSets(t, 256)
	l := loss.Loss{Kind: loss.Logistic, Rho: 0.001}
	p, err := newProblem(l, data.Sets(sets), Uniform(5))
	if err != nil {
		t.Fatal(err)
	}
	wn, rn, errN := p.newton()
	wl, rl, errL := p.lbfgs()
	if errN != nil || errL != nil {
		t.Fatal(errN, errL)
	}
	if d, bound := floats.Distance(wn, wl, 2), (rn.GradNorm+rl.GradNorm)/(2*l.Rho); d > bound {
		t.Errorf("‖w_Newton − w_LBFGS‖ = %g > %g", d, bound)
	}
}

// For least squares Solve is exactly the closed form, with a gradient norm at
// the level of TestLeastSquaresZeroesTheGradient.
func TestSolveLeastSquaresIsClosedForm(t *testing.T) {
	c := data.RegressionConfig{Agents: 5, SamplesMin: 20, SamplesMax: 40, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}
	sets, _ := data.Regression(c, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	want, err := LeastSquares(sets, Uniform(5), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	w, rep, err := Solve(l, sets, Uniform(5))
	if err != nil || !slices.Equal(w, want) {
		t.Fatalf("Solve = %v, %v; LeastSquares = %v", w, err, want)
	}
	if rep.Method != "closed-form" || rep.Iterations != 0 || rep.GradNorm > 1e-12 {
		t.Errorf("report %+v", rep)
	}
}

// With every agent holding the same data, each local minimizer minimizes the
// same F as the global one (up to the rounding of the weighted average), so
// ξ ≤ 2·1e-12·max(1, ‖∇F(0)‖)/(2ρ) = 1e-10·max(1, ‖∇F(0)‖) < 1e-9 for ρ = 0.01
// and ‖∇F(0)‖ < 10. Distinct non-IID data give ξ > 0, and for least squares ξ
// is the largest distance between closed forms.
func TestDrift(t *testing.T) {
	sets := logisticSets(t)
	l := loss.Loss{Kind: loss.Logistic, Rho: 0.01}
	same := []*data.Set{sets[0], sets[0], sets[0]}
	w, _, err := Solve(l, same, Uniform(3))
	if err != nil {
		t.Fatal(err)
	}
	if xi, err := Drift(l, same, w); err != nil || xi > 1e-9 {
		t.Errorf("shared data: ξ = %g, %v; want ≤ 1e-9", xi, err)
	}
	w, _, err = Solve(l, sets, Uniform(4))
	if err != nil {
		t.Fatal(err)
	}
	if xi, err := Drift(l, sets, w); err != nil || xi < 0.01 {
		t.Errorf("non-IID data: ξ = %g, %v; want clearly positive", xi, err)
	}

	c := data.RegressionConfig{Agents: 3, SamplesMin: 10, SamplesMax: 20, Dim: 2, CovScale: 1, NoiseVarMin: 0.5, NoiseVarMax: 1}
	reg, _ := data.Regression(c, 2)
	ls := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	wo, _ := LeastSquares(reg, Uniform(3), ls.Rho)
	var want float64
	for _, s := range reg {
		wk, _ := LeastSquares([]*data.Set{s}, []float64{1}, ls.Rho)
		want = max(want, floats.Distance(wk, wo, 2))
	}
	if xi, err := Drift(ls, reg, wo); err != nil || xi != want {
		t.Errorf("least squares: ξ = %v, %v; want %v", xi, err, want)
	}
}

func TestSolveRejectsBadInput(t *testing.T) {
	sets := logisticSets(t)
	lg := loss.Loss{Kind: loss.Logistic, Rho: 0.01}
	// Rank one in three dimensions, with a non-rankOne gradient at 0.
	rankOne := &data.Set{Dim: 3, X: []float64{1, 0, 0, 1, 0, 0, 1, 0, 0}, Y: []float64{1, 1, -1}}
	other := &data.Set{Dim: 2, X: []float64{1, 2}, Y: []float64{1}}
	for _, tc := range []struct {
		name    string
		l       loss.Loss
		sets    []*data.Set
		weights []float64
		want    string
	}{
		{"no data", lg, nil, nil, "0 datasets but 0 weights"},
		{"weight count", lg, sets, Uniform(3), "4 datasets but 3 weights"},
		{"weight sum", lg, sets, []float64{0.5, 0.5, 0.5, 0.5}, "weights sum to 2"},
		{"negative weight", lg, sets, []float64{-0.5, 0.5, 0.5, 0.5}, "weight 0 is -0.5"},
		{"NaN weight", lg, sets, []float64{math.NaN(), 0.5, 0.5, 0}, "weight 0 is NaN"},
		{"negative rho", loss.Loss{Kind: loss.Logistic, Rho: -1}, sets, Uniform(4), "ρ must be finite"},
		{"dimensions", lg, []*data.Set{sets[0], other}, Uniform(2), "dataset 1 has dimension 2"},
		{"empty set", lg, []*data.Set{{Dim: 3}}, []float64{1}, "dataset 0 is empty"},
		{"unknown loss", loss.Loss{Kind: 7}, sets, Uniform(4), "no solver for loss loss(7)"},
		{"singular Hessian", loss.Loss{Kind: loss.Logistic}, []*data.Set{rankOne}, []float64{1}, "not positive definite"},
	} {
		if _, _, err := Solve(tc.l, tc.sets, tc.weights); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := Drift(lg, nil, nil); err == nil {
		t.Error("Drift accepted no datasets")
	}
	if _, err := Drift(lg, sets, []float64{0}); err == nil {
		t.Error("Drift accepted a w^o of the wrong dimension")
	}
	if _, err := Drift(loss.Loss{Kind: loss.Logistic}, []*data.Set{rankOne}, make([]float64, 3)); err == nil || !strings.HasPrefix(err.Error(), "agent 0: ") {
		t.Errorf("Drift on a singular agent: %v, want an agent 0: error", err)
	}
}

// The line search rejects a direction that does not decrease F instead of
// taking a step: here the ascent direction ∇F, passed with the sign of the
// gradient flipped so that it looks like a descent direction. Even the
// smallest step, 2⁻⁴⁰, raises F by ≈ 2⁻⁴⁰‖∇F‖² ≈ 1e-14, above the rounding of F.
func TestLineSearchRejectsAscent(t *testing.T) {
	p, err := newProblem(loss.Loss{Kind: loss.Logistic, Rho: 0.01}, data.Sets(logisticSets(t)), Uniform(4))
	if err != nil {
		t.Fatal(err)
	}
	w, g := make([]float64, 3), make([]float64, 3)
	p.grad(g, w)
	flipped := floats.ScaleTo(make([]float64, 3), -1, g)
	if _, err := p.lineSearch(make([]float64, 3), w, g, flipped); err == nil {
		t.Error("line search accepted an ascent direction")
	}
}

// row returns x_n densely, so that s.Dot(n, row(s, n)) = ‖x_n‖².
func row(s *data.Set, n int) []float64 {
	x := make([]float64, s.Dim)
	s.AddScaledRow(x, n, 1)
	return x
}

// A solve on a generated source, which draws every agent's dataset anew on
// each pass, with uniform weights left implicit, returns what Solve returns
// on the same datasets in memory, bit for bit: the closed form and Newton's
// method alike, over more agents than a pass draws ahead at once.
func TestSolveSourceIsSolve(t *testing.T) {
	reg, _ := data.RegressionSource(data.RegressionConfig{Agents: 700, SamplesMin: 1, SamplesMax: 5, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 4)
	lc := data.DefaultLogisticConfig()
	lc.Agents, lc.SamplesMin, lc.SamplesMax, lc.Dim, lc.TestSamples = 600, 2, 6, 4, 1
	logistic, _, _ := data.LogisticSource(lc, 5)
	for _, c := range []struct {
		l   loss.Loss
		src data.Source
	}{
		{loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}, reg},
		{loss.Loss{Kind: loss.Logistic, Rho: 0.01}, logistic},
	} {
		sets := data.Collect(c.src)
		want, wantRep, err := Solve(c.l, sets, Uniform(len(sets)))
		if err != nil {
			t.Fatal(err)
		}
		got, rep, err := SolveSource(context.Background(), c.l, c.src, nil)
		if err != nil || !slices.Equal(got, want) || rep != wantRep {
			t.Errorf("%v: SolveSource = %v, %+v, %v; Solve = %v, %+v", c.l.Kind, got, rep, err, want, wantRep)
		}
	}
}
