package fedplt

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"maple/algorithms/optimum"
	"maple/algorithms/rng"
)

// centralized returns the minimizer of Σ_i f_i by the shared Newton solver
// (the minimizer of (1/N)Σ_i f_i is the same point).
func centralized(t *testing.T, p *Problem) []float64 {
	t.Helper()
	w, _, err := optimum.Solve(p.Obj.Loss, p.Sets, optimum.Uniform(len(p.Sets)))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func distance(a, b []float64) float64 { return floats.Distance(a, b, 2) }

// With full participation and exact local solves (N_e = 200 GD steps on a
// problem whose local contraction factor is below 0.7, so the prox is
// solved to far below 1e-15), Fed-PLT is the exact Peaceman–Rachford
// iteration and converges to the centralized solution. The 1e-9 bound is
// the Newton solution's own accuracy (‖∇‖ ≤ 1e-12 with λ̲ = 0.5) plus the
// stopping tolerance's (‖Σ∇f_i‖ ≤ 1e-12·… → distance ≤ 2e-12/(Nλ̲)).
func TestFedPLTConvergesToCentralizedSolution(t *testing.T) {
	p := testProblem(t, 6, 30, 3, 0)
	want := centralized(t, p)
	for _, rho := range []float64{0.3, 1, 3} {
		cfg := testConfig(t, PLT, p, func(c *Config) { c.Rho, c.Epochs = rho, 200 })
		mon := runReference(t, cfg, p, want, 1e-24, 300, 1)
		if mon.Converged < 0 {
			t.Fatalf("ρ = %v: no convergence in 300 rounds", rho)
		}
		last := mon.Records[len(mon.Records)-1]
		if d := distance(last.X, want); d > 1e-9 {
			t.Errorf("ρ = %v: ‖x̄ − x⋆‖ = %.3g after %d rounds", rho, d, last.Round)
		}
		if last.Stacked > 1e-9 {
			t.Errorf("ρ = %v: stacked error %.3g: the z_i did not reach z̄_i = x⋆ − ρ∇f_i(x⋆)", rho, last.Stacked)
		}
	}
}

// With exact local solvers the error e_k is 0, so Proposition 2 promises
// exact convergence under partial participation too: Bernoulli with
// heterogeneous p_i and a fixed-size subset reach the same point.
func TestPartialParticipationStillExact(t *testing.T) {
	p := testProblem(t, 6, 30, 3, 0)
	want := centralized(t, p)
	for name, part := range map[string]Participation{
		"bernoulli": {Kind: Bernoulli, ProbMin: 0.2, ProbMax: 0.9},
		"subset":    {Kind: Subset, Active: 2},
	} {
		cfg := testConfig(t, PLT, p, func(c *Config) { c.Epochs, c.Participation = 200, part })
		mon := runReference(t, cfg, p, want, 1e-24, 2000, 3)
		last := mon.Records[len(mon.Records)-1]
		if d := distance(last.X, want); d > 1e-9 {
			t.Errorf("%s: ‖x̄ − x⋆‖ = %.3g after %d rounds", name, d, last.Round)
		}
	}
}

// Every baseline converges on a strongly convex problem to the same
// solution as Fed-PLT: the centralized minimizer (tolerance as above).
func TestEveryMethodConvergesToTheSameSolution(t *testing.T) {
	p := testProblem(t, 6, 30, 3, 0)
	want := centralized(t, p)
	for m := PLT; m <= FiveGCS; m++ {
		cfg := testConfig(t, m, p, nil)
		mon := runReference(t, cfg, p, want, 1e-24, 3000, 1)
		last := mon.Records[len(mon.Records)-1]
		if d := distance(last.X, want); d > 1e-9 {
			t.Errorf("%s: ‖x̄ − x⋆‖ = %.3g after %d rounds", m.Label(), d, last.Round)
		}
	}
}

// Noisy GD leaves a noise floor (Corollary 1): the asymptotic error grows
// with τ, linearly while the dynamics near x⋆ are linear. Every τ uses the
// same seed, hence the same N(0, I) draws (common random numbers), so in the
// linear regime error(τ) = τ·error(1) exactly; the log–log slope then
// differs from 1 only through the curvature change of the logistic loss
// over the O(τ) neighbourhood explored, a relative effect below 5% for
// τ ≤ 0.1 on this problem, hence the tolerance 0.05.
func TestNoisyGDErrorGrowsWithTau(t *testing.T) {
	p := testProblem(t, 6, 30, 3, 0)
	want := centralized(t, p)
	taus := []float64{1e-3, 1e-2, 1e-1}
	var logTau, logErr []float64
	prev := 0.0
	for _, tau := range taus {
		cfg := testConfig(t, PLT, p, func(c *Config) {
			for i := range c.Solvers {
				c.Solvers[i] = Solver{Name: "noisy-gd", Rule: NoisyGD{Noise: tau}}
			}
		})
		mon := runReference(t, cfg, p, want, 0, 300, 9)
		var sum float64
		for _, r := range mon.Records[100:] {
			sum += math.Sqrt(r.Stationarity)
		}
		e := sum / float64(len(mon.Records)-100)
		if !(e > prev) {
			t.Errorf("τ = %v: asymptotic error %.3g does not exceed %.3g", tau, e, prev)
		}
		prev = e
		logTau, logErr = append(logTau, math.Log(tau)), append(logErr, math.Log(e))
	}
	_, slope := stat.LinearRegression(logTau, logErr, nil, false)
	if math.Abs(slope-1) > 0.05 {
		t.Errorf("log–log slope of the asymptotic error in τ is %.3f, want 1 ± 0.05", slope)
	}
}

// The measured stacked error of full-participation Fed-PLT with GD stays
// under the bound ‖S‖^k·e_0 of Proposition 1 whenever ‖S‖ < 1 (the bound is
// deterministic here: no noise, no sampling).
func TestMeasuredErrorStaysUnderTheBound(t *testing.T) {
	p := testProblem(t, 6, 30, 3, 0)
	want := centralized(t, p)
	informative := 0
	for _, rho := range []float64{0.3, 0.5, 1, 1.5} {
		for _, epochs := range []int{1, 2, 5, 10} {
			cfg := testConfig(t, PLT, p, func(c *Config) { c.Rho, c.Epochs = rho, epochs })
			th, ok := Analyze(cfg, p.Moduli, p.Dim())
			if !ok || !th.Informative {
				continue
			}
			informative++
			mon := runReference(t, cfg, p, want, 0, 40, 1)
			e0 := mon.Records[0].Stacked
			for _, r := range mon.Records {
				// 1e-12 absolute: rounding once the error reaches machine precision.
				if b := th.Bound(r.Round, e0); r.Stacked > b+1e-12 {
					t.Errorf("ρ = %v, N_e = %d, round %d: stacked error %.4g above the bound %.4g (‖S‖ = %.3f)",
						rho, epochs, r.Round, r.Stacked, b, th.NormS)
					break
				}
			}
		}
	}
	if informative < 8 {
		t.Errorf("only %d of 16 set-ups have an informative bound; the test checks too little", informative)
	}
}

// Zeta, χ and S follow their closed forms at hand-computed points.
func TestTheoryClosedForms(t *testing.T) {
	m := Moduli{Low: 0.5, High: 4.5}
	// ρ = 1: |1 − 4.5|/5.5 = 0.63636…, |1 − 0.5|/1.5 = 0.3333…
	if z := Zeta(1, m); math.Abs(z-3.5/5.5) > 1e-15 {
		t.Errorf("ζ = %v, want %v", z, 3.5/5.5)
	}
	// γ⋆ = 2/(0.5 + 4.5 + 2) = 2/7 gives χ⋆ = (4.5 − 0.5)/7.
	if c := ChiGD(2.0/7, 1, m); math.Abs(c-4.0/7) > 1e-15 {
		t.Errorf("χ = %v, want %v", c, 4.0/7)
	}
	if g := (GD{}).DefaultStep(Moduli{Low: m.Low + 1, High: m.High + 1}); math.Abs(g-2.0/7) > 1e-15 {
		t.Errorf("γ⋆ = %v, want 2/7", g)
	}
	// κ = 5.5/1.5: χ(N_e) = (1 + κ)(1 − 1/√κ)^{N_e}.
	kappa := 5.5 / 1.5
	if c := ChiAGD(3, 1, m); math.Abs(c-(1+kappa)*math.Pow(1-1/math.Sqrt(kappa), 3)) > 1e-14 {
		t.Errorf("χ(3) = %v", c)
	}
	S := SMatrix(0.1, 0.3, 1, 0.5)
	want := mat.NewDense(2, 2, []float64{0.1, 1.1 / 1.5, 0.2, 0.3 + 0.2/1.5})
	if !mat.EqualApprox(S, want, 1e-15) {
		t.Errorf("S = %v, want %v", mat.Formatted(S), mat.Formatted(want))
	}
	// ‖S‖₂ is the largest singular value: √ of the largest eigenvalue of SᵀS.
	var sym mat.SymDense
	sym.SymOuterK(1, S.T())
	var es mat.EigenSym
	es.Factorize(&sym, false)
	vals := es.Values(nil)
	cfg := &Config{Rho: 1, Epochs: 1, Agents: 1, Solvers: []Solver{{Name: "gd", Rule: GD{}, Step: 2.0 / 7}}}
	th, _ := Analyze(cfg, m, 3)
	S1 := SMatrix(4.0/7, th.Zeta, 1, 0.5)
	sym.SymOuterK(1, S1.T())
	es.Factorize(&sym, false)
	vals = es.Values(vals)
	if math.Abs(th.NormS-math.Sqrt(vals[1])) > 1e-14 {
		t.Errorf("‖S‖ = %v, want %v", th.NormS, math.Sqrt(vals[1]))
	}
}

// The composite reference solution satisfies the optimality conditions of
// its regularizer, and Fed-PLT reaches it through the coordinator's prox.
func TestCompositeProblems(t *testing.T) {
	p := testProblem(t, 6, 30, 3, 0)
	grad := func(x []float64) []float64 {
		g, gi := make([]float64, len(x)), make([]float64, len(x))
		for _, s := range p.Sets {
			p.Obj.Grad(gi, x, s)
			floats.Add(g, gi)
		}
		return g
	}
	cases := map[string]Prox{
		"l1":  {Kind: L1, Weight: 2},
		"box": {Kind: Box, Low: -0.05, High: 0.05},
	}
	for name, h := range cases {
		sol, err := Solve(p, h, 1e-12, 100000)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		g := grad(sol.X)
		for j, x := range sol.X {
			switch h.Kind {
			case L1: // 0 ∈ g_j + λ₁∂|x_j|
				if x == 0 && math.Abs(g[j]) > h.Weight+1e-9 || x != 0 && math.Abs(g[j]+h.Weight*math.Copysign(1, x)) > 1e-9 {
					t.Errorf("l1: coordinate %d: x = %v, gradient %v violates optimality", j, x, g[j])
				}
			case Box: // interior: g_j = 0; at a bound: g points outward
				if x > h.Low && x < h.High && math.Abs(g[j]) > 1e-9 || x == h.Low && g[j] < -1e-9 || x == h.High && g[j] > 1e-9 {
					t.Errorf("box: coordinate %d: x = %v, gradient %v violates optimality", j, x, g[j])
				}
			}
		}
		cfg := testConfig(t, PLT, p, func(c *Config) { c.Prox, c.Epochs = h, 200 })
		mon := runReference(t, cfg, p, sol.X, 1e-22, 500, 1)
		last := mon.Records[len(mon.Records)-1]
		if d := distance(last.X, sol.X); d > 1e-8 {
			t.Errorf("%s: Fed-PLT ends %.3g from the composite solution after %d rounds", name, d, last.Round)
		}
	}
}

// The proximal gradient solver agrees with the shared Newton solver on the
// smooth problem, and finds a stationary point of the non-convex one.
func TestSolve(t *testing.T) {
	p := testProblem(t, 6, 30, 3, 0)
	sol, err := Solve(p, Prox{}, 1e-12, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if d := distance(sol.X, centralized(t, p)); d > 1e-11 {
		t.Errorf("proximal gradient and Newton solutions differ by %.3g", d)
	}
	nc := testProblem(t, 6, 30, 3, 0.5)
	sol, err = Solve(nc, Prox{}, 1e-12, 10000)
	if err != nil {
		t.Fatal(err)
	}
	mon := NewMonitor(PLT, nc.Obj, nc.Sets, Prox{}, sol.X, 1, 0, [][]float64{sol.X}, [][]float64{sol.X})
	if s := mon.Stationarity(sol.X); s > 1e-24 {
		t.Errorf("non-convex solution has ‖Σ∇f_i‖² = %.3g", s)
	}
}

func TestProx(t *testing.T) {
	v := []float64{-3, -0.5, 0, 0.2, 2}
	got := make([]float64, len(v))
	Prox{Kind: L1, Weight: 2}.Apply(got, v, 0.5) // threshold 1
	if want := []float64{-2, 0, 0, 0, 1}; !floats.Equal(got, want) {
		t.Errorf("soft threshold: %v, want %v", got, want)
	}
	Prox{Kind: Box, Low: -1, High: 1}.Apply(got, v, 7)
	if want := []float64{-1, -0.5, 0, 0.2, 1}; !floats.Equal(got, want) {
		t.Errorf("projection: %v, want %v", got, want)
	}
	Prox{}.Apply(got, v, 3)
	if !floats.Equal(got, v) {
		t.Errorf("h = 0: %v, want %v", got, v)
	}
}

// The moduli bound the Hessian of every local cost: at random points, the
// eigenvalues of the finite-difference Hessian lie in [λ̲_i, λ̄_i] (to the
// O(h²) = 1e-8 accuracy of central differences).
func TestModuliBoundTheHessian(t *testing.T) {
	for _, nc := range []float64{0, 0.5} {
		p := testProblem(t, 3, 30, 3, nc)
		r := rng.New(1, "test", "points")
		const h = 1e-4
		for i, s := range p.Sets {
			m := p.Obj.Moduli(s)
			for range 5 {
				x := []float64{3 * r.NormFloat64(), r.NormFloat64(), 0.5 * r.NormFloat64()}
				hess := mat.NewSymDense(3, nil)
				gp, gm := make([]float64, 3), make([]float64, 3)
				for a := range 3 {
					x[a] += h
					p.Obj.Grad(gp, x, s)
					x[a] -= 2 * h
					p.Obj.Grad(gm, x, s)
					x[a] += h
					for b := a; b < 3; b++ {
						hess.SetSym(a, b, (gp[b]-gm[b])/(2*h))
					}
				}
				var es mat.EigenSym
				es.Factorize(hess, false)
				vals := es.Values(nil)
				if vals[0] < m.Low-1e-6 || vals[2] > m.High+1e-6 {
					t.Errorf("ε = %v, agent %d: Hessian eigenvalues [%v, %v] outside [%v, %v]", nc, i, vals[0], vals[2], m.Low, m.High)
				}
			}
		}
	}
}

// Clipping with a bound above every per-sample gradient changes nothing.
func TestClippingAboveEveryGradientIsExact(t *testing.T) {
	p := testProblem(t, 1, 30, 3, 0.5)
	x := []float64{0.3, -1, 2}
	g, c, scr := make([]float64, 3), make([]float64, 3), make([]float64, 3)
	p.Obj.Grad(g, x, p.Sets[0])
	L, _ := p.Obj.Sensitivity(p.Sets, 0)
	p.Obj.ClippedGrad(c, x, p.Sets[0], L, scr)
	if !floats.EqualApprox(g, c, 1e-15) {
		t.Errorf("clipped %v, plain %v", c, g)
	}
	p.Obj.ClippedGrad(c, x, p.Sets[0], 1e-3, scr)
	if floats.EqualApprox(g, c, 1e-6) {
		t.Error("a tiny clipping bound changed nothing")
	}
}

// TAMUNA's L^r has mean N_e: with 20000 draws of Geom(1/5) (variance
// (1 − p)/p² = 20) the sample mean is within 5 standard errors, 5·√(20/20000)
// ≈ 0.16, of 5; and L^r ≥ 1.
func TestGeometricStepsMean(t *testing.T) {
	r := rng.New(2, "test", "geometric")
	const n = 20000
	var sum float64
	for range n {
		l := GeometricSteps(5, r)
		if l < 1 {
			t.Fatalf("L^r = %d", l)
		}
		sum += float64(l)
	}
	if m := sum / n; math.Abs(m-5) > 5*math.Sqrt(20.0/n) {
		t.Errorf("mean of L^r = %v, want 5", m)
	}
	if GeometricSteps(1, r) != 1 {
		t.Error("N_e = 1 must give one step")
	}
}

// Bernoulli participation activates agent i with frequency p_i (within 5
// standard errors √(p(1 − p)/rounds)); a subset has exactly its size.
func TestParticipation(t *testing.T) {
	p := Participation{Kind: Bernoulli, ProbMin: 0.1, ProbMax: 0.9}
	s := NewSampler(p, 4, rng.New(1, "c", "participation"), rng.New(1, "c", "probabilities"))
	const rounds = 20000
	counts := make([]float64, 4)
	for range rounds {
		for _, i := range s.Draw(4) {
			counts[i]++
		}
	}
	for i, pi := range s.Probabilities() {
		if pi < 0.1 || pi > 0.9 {
			t.Errorf("p_%d = %v outside [0.1, 0.9]", i, pi)
		}
		if f := counts[i] / rounds; math.Abs(f-pi) > 5*math.Sqrt(pi*(1-pi)/rounds) {
			t.Errorf("agent %d active in %.4f of rounds, p_i = %.4f", i, f, pi)
		}
	}
	sub := NewSampler(Participation{Kind: Subset, Active: 3}, 7, rng.New(1, "c", "participation"), nil)
	for range 100 {
		a := sub.Draw(7)
		if len(a) != 3 || a[0] >= a[1] || a[1] >= a[2] {
			t.Fatalf("subset draw %v", a)
		}
	}
}

// Impossible settings are refused with the field named.
func TestConfigErrorsNameTheField(t *testing.T) {
	p := testProblem(t, 4, 20, 3, 0)
	base := func() Config {
		return Config{Method: PLT, Agents: 4, Epochs: 5, Rho: 1, Solvers: same(4, "gd", GD{}), FedPDEta: 1, TamunaEta: 0.1, LEDBeta: 0.1,
			FiveGCS: FiveGCSParams{Gamma: 0.1, Tau: 1}}
	}
	cases := []struct {
		field string
		edit  func(*Config)
	}{
		{"rho", func(c *Config) { c.Rho = 0 }},
		{"rho", func(c *Config) { c.Rho = -1 }},
		{"local_epochs", func(c *Config) { c.Epochs = 0 }},
		{"participation.probability", func(c *Config) {
			c.Participation = Participation{Kind: Bernoulli, ProbMin: 0, ProbMax: 0.5}
		}},
		{"participation.probability", func(c *Config) {
			c.Participation = Participation{Kind: Bernoulli, ProbMin: 0.5, ProbMax: 1.2}
		}},
		{"participation.kind", func(c *Config) { c.Method, c.Participation.Kind = FedLin, Subset }},
		{"solvers[2].kind", func(c *Config) { c.Method, c.Solvers[2] = LED, Solver{Name: "agd", Rule: AGD{}} }},
		{"solvers[0].batch", func(c *Config) { c.Solvers[0] = Solver{Name: "sgd", Rule: SGD{}} }},
		{"regularizer.kind", func(c *Config) { c.Method, c.Prox.Kind = FedPD, L1 }},
	}
	for _, tc := range cases {
		c := base()
		tc.edit(&c)
		var fe *FieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("want an error on %s, got %v", tc.field, err)
		}
	}
	// A step above the stability bound 2/(λ̄ + 1/ρ) is refused by Resolve.
	c := base()
	c.Solvers[3].Step = 2 / (p.Moduli.High + 1)
	var fe *FieldError
	if _, err := c.Resolve(p.Moduli, p.Sizes()); !errors.As(err, &fe) || fe.Field != "solvers[3].step" {
		t.Errorf("want an error on solvers[3].step, got %v", err)
	}
	c.Solvers[3].Step = 0.99 * 2 / (p.Moduli.High + 1)
	if _, err := c.Resolve(p.Moduli, p.Sizes()); err != nil {
		t.Errorf("a step below the bound was refused: %v", err)
	}
}

// The theory of §V is computed for one local solver shared by every agent:
// with per-agent solvers (Remark 1) a report built from agent 0's solver
// alone would understate χ^{N_e} and ν for the others, so Analyze declines.
func TestAnalyzeNeedsOneSolver(t *testing.T) {
	m := Moduli{Low: 0.5, High: 4.5}
	cfg := &Config{Rho: 1, Epochs: 2, Agents: 2, Solvers: []Solver{{Name: "gd", Rule: GD{}, Step: 2.0 / 7}, {Name: "gd", Rule: GD{}, Step: 2.0 / 7}}}
	if _, ok := Analyze(cfg, m, 3); !ok {
		t.Fatal("one shared GD solver: no theory")
	}
	// Agent 1's step of 0.05 contracts far less per step (χ = 0.925 against
	// agent 0's 4/7).
	cfg.Solvers[1].Step = 0.05
	if th, ok := Analyze(cfg, m, 3); ok {
		t.Errorf("per-agent steps: theory %+v reported from agent 0's solver", th)
	}
}
