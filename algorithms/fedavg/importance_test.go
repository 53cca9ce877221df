package fedavg

import (
	"math"
	"strings"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/algorithms/rng"
)

// The optimal probabilities minimize σ_s² (Lemmas 2.6–2.7): by
// Cauchy–Schwarz (Σ_k √c_k)² ≤ K Σ_k c_k, and at the data level
// (Σ_n g_n)² ≤ N Σ_n g_n², with equality exactly when every agent has the
// same c_k and every sample the same gradient norm. Both cases are checked:
// heterogeneous agents gain, and K copies of one dataset whose samples all
// have the same gradient norm gain nothing (ratio 1 to rounding).
func TestNoiseBoundOptimalNeverWorse(t *testing.T) {
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
	cfg := &Config{Agents: 6, Participants: 2, StepSize: 0.01, Epochs: Range{1, 5}, Batch: Range{1, 10}}
	sets := regression(6, 20, 4)
	wOpt, err := optimum.LeastSquares(sets, optimum.Uniform(6), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	uniform, optimal := NoiseBound(cfg, data.Sets(sets), l, wOpt, 1)
	if !(optimal < uniform) {
		t.Errorf("heterogeneous agents: optimal σ_s² %v not below uniform %v", optimal, uniform)
	}
	// x_n = ±e_1 with y_n = ±1 (and one pair per coordinate): every sample
	// has the same residual magnitude, hence the same gradient norm, at any
	// w symmetric in the pairs — in particular at w^o of K copies.
	same := &data.Set{Dim: 2, X: []float64{1, 0, -1, 0, 0, 1, 0, -1}, Y: []float64{1, -1, 1, -1}}
	copies := []*data.Set{same, same, same}
	cfg = &Config{Agents: 3, Participants: 1, StepSize: 0.01, Epochs: Range{2, 2}, Batch: Range{3, 3}}
	wOpt, err = optimum.LeastSquares(copies, optimum.Uniform(3), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	uniform, optimal = NoiseBound(cfg, data.Sets(copies), l, wOpt, 1)
	if math.Abs(uniform/optimal-1) > 1e-12 {
		t.Errorf("identical agents and samples: uniform %v and optimal %v should be equal", uniform, optimal)
	}
}

func TestConfigValidation(t *testing.T) {
	ok := Config{Agents: 4, Participants: 2, StepSize: 0.1, Epochs: Range{1, 2}, Batch: Range{1, 2}}
	cases := []struct {
		name   string
		change func(c *Config)
		want   string
	}{
		{"L > K", func(c *Config) { c.Participants = 5 }, "without replacement"},
		{"bad step", func(c *Config) { c.StepSize = 0 }, "step size"},
		{"bad epochs", func(c *Config) { c.Epochs = Range{2, 1} }, "epochs"},
		{"fixed data", func(c *Config) { c.Importance.Data = Fixed }, "data policy fixed"},
		{"full participation", func(c *Config) { c.Participation = Full; c.Importance.Agents = Partial }, "partial participation"},
		{"per-round alpha", func(c *Config) { c.Schedule = PerRound; c.Importance.Agents = Adaptive }, "per-agent"},
		{"no optimum", func(c *Config) { c.Importance.Data = Optimal }, "needs w^o"},
		{"stray probabilities", func(c *Config) { c.Importance.Probabilities = []float64{1} }, "only used by the fixed"},
		{"wrong count", func(c *Config) { c.Importance = Importance{Agents: Fixed, Probabilities: []float64{0.5, 0.5}} }, "one per agent"},
		{"negative", func(c *Config) {
			c.Importance = Importance{Agents: Fixed, Probabilities: []float64{0.6, 0.6, -0.2, 0}}
		}, "entry 2"},
		{"sum", func(c *Config) {
			c.Importance = Importance{Agents: Fixed, Probabilities: []float64{0.3, 0.3, 0.3, 0.3}}
		}, "sum to 1.2"},
		{"too few positive", func(c *Config) {
			c.Importance = Importance{Agents: Fixed, Probabilities: []float64{1, 0, 0, 0}}
		}, "only 1 agents"},
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid configuration refused: %v", err)
	}
	for _, c := range cases {
		cfg := ok
		c.change(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestServerRejectsUnexpectedProbeReports(t *testing.T) {
	cfg := &Config{Agents: 3, Participants: 2, StepSize: 0.1, Epochs: Range{1, 1}, Batch: Range{1, 1},
		Importance: Importance{Agents: Adaptive}}
	s := NewServer(cfg, []float64{0, 0}, rng.New(1, ServerName, "participation"))
	if _, ok := s.Probe(); !ok {
		t.Fatal("the adaptive policy does not probe")
	}
	if _, err := s.AcceptReport(3, Report{}); err == nil || !strings.Contains(err.Error(), "not probed") {
		t.Errorf("report from an unknown agent: %v", err)
	}
	for k, r := range []Report{{GradNorm: 1, Alpha: 3}, {GradNorm: 2, Alpha: 3}} {
		if done, err := s.AcceptReport(k, r); done || err != nil {
			t.Fatalf("report %d: done=%v err=%v", k, done, err)
		}
	}
	if _, err := s.AcceptReport(1, Report{}); err == nil || !strings.Contains(err.Error(), "second probe report") {
		t.Errorf("duplicate report: %v", err)
	}
	if done, err := s.AcceptReport(2, Report{GradNorm: 1, Sigma2: 9, Alpha: 3}); !done || err != nil {
		t.Fatalf("last report: done=%v err=%v", done, err)
	}
	// c = √(σ² + α‖g‖²) = √3, √12, √12: p ∝ (1, 2, 2).
	for k, want := range []float64{0.2, 0.4, 0.4} {
		if math.Abs(s.probs[k]-want) > 1e-15 {
			t.Errorf("p_%d = %v, want %v", k, s.probs[k], want)
		}
	}
	// Uniform servers are never probed and send no probability.
	u := NewServer(&Config{Agents: 3, Participants: 2, StepSize: 0.1, Epochs: Range{1, 1}, Batch: Range{1, 1}}, []float64{0}, rng.New(1, ServerName, "participation"))
	if _, ok := u.Probe(); ok {
		t.Error("a uniform server probes")
	}
	if _, err := u.AcceptReport(0, Report{}); err == nil {
		t.Error("a uniform server accepted a probe report")
	}
	if _, err := u.Draw(); err != nil || u.Probability(0) != 0 {
		t.Errorf("uniform server: Draw error %v, p = %v; want nil and 0", err, u.Probability(0))
	}
}
