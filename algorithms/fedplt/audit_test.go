package fedplt

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// auditProblem returns a small least-squares problem (3 agents of 6
// samples in 2 dimensions) and a resolved Fed-PLT configuration with noisy
// GD of noise tau, prior initial models and full participation.
func auditProblem(t testing.TB, tau float64) (*Problem, *Config) {
	t.Helper()
	sets, _ := data.Regression(data.RegressionConfig{Agents: 3, SamplesMin: 6, SamplesMax: 6, Dim: 2, CovScale: 1,
		SharedCovariance: true, NoiseVarMin: 0.1, NoiseVarMax: 0.2}, 11)
	p := NewProblem(Objective{Loss: loss.Loss{Kind: loss.LeastSquares, Rho: 0.05}}, sets)
	cfg := testConfig(t, PLT, p, func(c *Config) {
		c.Epochs, c.Rho, c.Init = 3, 0.8, PriorInit
		c.Solvers = same(3, "noisy-gd", NoisyGD{Noise: tau})
	})
	return p, cfg
}

// withCanary returns p with agent 0's dataset replaced by its label canary.
func withCanary(t testing.TB, p *Problem, L float64) *Problem {
	t.Helper()
	c, err := LabelCanary(p.Sets[0], L)
	if err != nil {
		t.Fatal(err)
	}
	sets := append([]*data.Set{c}, p.Sets[1:]...)
	return NewProblem(p.Obj, sets)
}

// The canary moves agent 0's gradient by exactly L/q at every point, and
// leaves the dataset it copies alone.
func TestLabelCanaryMovesTheGradientByL(t *testing.T) {
	p, _ := auditProblem(t, 0.1)
	const L = 3.0
	c, err := LabelCanary(p.Sets[0], L)
	if err != nil {
		t.Fatal(err)
	}
	g, h := make([]float64, 2), make([]float64, 2)
	for _, w := range [][]float64{{0, 0}, {1, -2}, {30, 7}} {
		p.Obj.Grad(g, w, p.Sets[0])
		p.Obj.Grad(h, w, c)
		// 1e-12: a difference of gradients of size up to ~10³.
		if d := floats.Distance(g, h, 2); math.Abs(d-L/6) > 1e-12*max(1, floats.Norm(g, 2)) {
			t.Errorf("w = %v: the gradient moves by %v, want L/q = %v", w, d, L/6)
		}
	}
	if c.Y[0] == p.Sets[0].Y[0] || &c.Y[0] == &p.Sets[0].Y[0] {
		t.Error("the canary did not copy and change the label")
	}
}

// The auditor's means are the noise-free recursion: the Reference run with
// noise τ = 0 from x_0 = 0 (the prior's mean) gives, after every round, the
// mean of every agent's final model without the canary, and with it on the
// problem holding the canary. Both are the same affine map evaluated two
// ways; 1e-10 relative allows for the rounding of 8 rounds of 3 steps.
func TestFinalAuditMeansAreTheNoiseFreeRun(t *testing.T) {
	p, cfg := auditProblem(t, 0.3)
	canary := withCanary(t, p, 2)
	quiet := *cfg
	quiet.Init = ZeroInit
	quiet.Solvers = make([]Solver, 3)
	for i := range quiet.Solvers {
		quiet.Solvers[i] = Solver{Name: "noisy-gd", Rule: NoisyGD{Noise: 0}, Step: cfg.Solvers[i].Step}
	}
	for _, c := range []struct {
		p  *Problem
		in bool
	}{{p, false}, {canary, true}} {
		var got [][][]float64
		zero := [][]float64{{0, 0}, {0, 0}, {0, 0}}
		mon := NewMonitor(PLT, c.p.Obj, c.p.Sets, quiet.Prox, []float64{0, 0}, quiet.Rho, 0, zero, zero)
		mon.OnRound = func(k int, x [][]float64) { got = append(got, clone(x)) }
		if _, err := Reference(&quiet, c.p, zero, 1, 8, mon); err != nil {
			t.Fatal(err)
		}
		b, err := NewFinalAudit(cfg, p, canary.Sets[0])
		if err != nil {
			t.Fatal(err)
		}
		for k := range 8 {
			if err := b.Advance(); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				for j := range 2 {
					want := b.mean.AtVec(i*2 + j)
					if c.in {
						want += b.diff.AtVec(i*2 + j)
					}
					if x := got[k][i][j]; math.Abs(x-want) > 1e-10*max(1, math.Abs(x)) {
						t.Errorf("canary %v, round %d, agent %d: x = %v, the auditor's mean %v", c.in, k+1, i, x, want)
					}
				}
			}
		}
	}
}

// The score is the log-likelihood ratio of two Gaussians of equal
// covariance: over runs of the noisy Reference it is N(−½μ², μ²) without
// the canary and N(½μ², μ²) with it, so its mean gap is μ² = 2·KL. This
// checks the covariance recursion against the runs' own noise, and the
// discriminant against its closed form. 3000 runs each; five standard
// errors of the means (√(μ²/3000)) and of the variances (μ²·√(2/3000)).
func TestFinalAuditScoreIsTheLikelihoodRatio(t *testing.T) {
	const runs, rounds = 3000, 6
	p, cfg := auditProblem(t, 0.2)
	canary := withCanary(t, p, 2)
	a, err := NewFinalAudit(cfg, p, canary.Sets[0])
	if err != nil {
		t.Fatal(err)
	}
	for range rounds {
		if err := a.Advance(); err != nil {
			t.Fatal(err)
		}
	}
	mu2 := a.Mu() * a.Mu()
	if !(mu2 > 0.2 && mu2 < 20) {
		t.Fatalf("μ² = %v: choose a setting the test can resolve", mu2)
	}
	for _, c := range []struct {
		p    *Problem
		sign float64
	}{{p, -1}, {canary, 1}} {
		var s, ss float64
		for r := range runs {
			seed := uint64(1000 + r)
			x0, err := InitialModels(cfg, c.p, SeededStreams(seed))
			if err != nil {
				t.Fatal(err)
			}
			mon := NewMonitor(PLT, c.p.Obj, c.p.Sets, cfg.Prox, []float64{0, 0}, cfg.Rho, 0, x0, x0)
			var score float64
			mon.OnRound = func(k int, x [][]float64) {
				if k == rounds {
					score = a.Score(x)
				}
			}
			if _, err := Reference(cfg, c.p, x0, seed, rounds, mon); err != nil {
				t.Fatal(err)
			}
			s += score
			ss += score * score
		}
		mean := s / runs
		variance := ss/runs - mean*mean
		if se := math.Sqrt(mu2 / runs); math.Abs(mean-c.sign*mu2/2) > 5*se {
			t.Errorf("sign %v: mean score %.4f, want %.4f ± %.4f", c.sign, mean, c.sign*mu2/2, 5*se)
		}
		if se := mu2 * math.Sqrt(2.0/runs); math.Abs(variance-mu2) > 5*se {
			t.Errorf("sign %v: score variance %.4f, want μ² = %.4f ± %.4f", c.sign, variance, mu2, 5*se)
		}
	}
}

// What is not an affine Gaussian recursion is refused, naming why.
func TestFinalAuditRefusesWhatItCannotCompute(t *testing.T) {
	p, cfg := auditProblem(t, 0.2)
	for name, edit := range map[string]func(c *Config){
		"partial":  func(c *Config) { c.Participation = Participation{Kind: Subset, Active: 2} },
		"zero":     func(c *Config) { c.Init = ZeroInit },
		"clipping": func(c *Config) { c.Solvers[1].Rule = NoisyGD{Noise: 0.2, Clip: 5} },
		"gd":       func(c *Config) { c.Solvers[2].Rule = GD{} },
		"h":        func(c *Config) { c.Prox.Kind = L1 },
	} {
		c := *cfg
		c.Solvers = append([]Solver(nil), cfg.Solvers...)
		edit(&c)
		if _, err := NewFinalAudit(&c, p, p.Sets[0]); !errors.Is(err, ErrNotAffine) {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	moved := *p.Sets[0]
	moved.X = append([]float64(nil), p.Sets[0].X...)
	moved.X[0] += 1
	if _, err := NewFinalAudit(cfg, p, &moved); err == nil {
		t.Error("a canary that moves features accepted")
	}
}
