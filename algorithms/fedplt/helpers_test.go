package fedplt

import (
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// testProblem returns a small logistic-regression problem: agents agents
// with q samples each in dim dimensions, the paper's convex regularizer
// ε‖x‖²/2 with ε = 0.5 (maple's ρ = 0.25) plus the non-convex one with
// weight nonconvex.
func testProblem(t testing.TB, agents, q, dim int, nonconvex float64) *Problem {
	t.Helper()
	cfg := data.LogisticConfig{Agents: agents, SamplesMin: q, SamplesMax: q, Dim: dim, CovScale: 1,
		SharedCovariance: true, ScoreSD: 2, MeanShift: 0.3, TestSamples: 1}
	sets, _, _ := data.Logistic(cfg, 7)
	rho := 0.25
	if nonconvex > 0 {
		rho = 0
	}
	return NewProblem(Objective{Loss: loss.Loss{Kind: loss.Logistic, Rho: rho}, Nonconvex: nonconvex}, sets)
}

// testConfig returns a resolved configuration of method m on p with
// defaults a test then adjusts through edit.
func testConfig(t testing.TB, m Method, p *Problem, edit func(*Config)) *Config {
	t.Helper()
	n := len(p.Sets)
	cfg := &Config{Method: m, Agents: n, Epochs: 5, Rho: 1, Solvers: same(n, "gd", GD{}),
		Costs: Costs{Gradient: 1, Communication: 10}, FedPDEta: 1, TamunaEta: 0.2, LEDBeta: 0.1,
		FiveGCS: FiveGCSParams{Tau: 1, Gamma: 1 / float64(n), Mu: float64(n) * p.Moduli.Low}}
	if edit != nil {
		edit(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	r, err := cfg.Resolve(p.Moduli, p.Sizes())
	if err != nil {
		t.Fatal(err)
	}
	return &r
}

// runReference runs cfg on p from zero (or prior) initial models for at
// most rounds rounds, stopping at tol, and returns the monitor.
func runReference(t testing.TB, cfg *Config, p *Problem, opt []float64, tol float64, rounds int, seed uint64) *Monitor {
	t.Helper()
	x0, err := InitialModels(cfg, p, SeededStreams(seed))
	if err != nil {
		t.Fatal(err)
	}
	mon := NewMonitor(cfg.Method, p.Obj, p.Sets, cfg.Prox, opt, cfg.Rho, tol, x0, x0)
	if _, err := Reference(cfg, p, x0, seed, rounds, mon); err != nil {
		t.Fatal(err)
	}
	return mon
}

// same returns n copies of the local solver rule registered as name.
func same(n int, name string, rule LocalSolver) []Solver {
	s := make([]Solver, n)
	for i := range s {
		s[i] = Solver{Name: name, Rule: rule}
	}
	return s
}
