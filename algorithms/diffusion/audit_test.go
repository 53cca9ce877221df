package diffusion

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/privacy/audit"
	"maple/privacy/homomorphic"
	"maple/privacy/noise"
	"maple/privacy/pairmask"
	"maple/topology"
)

// neighbour returns a neighbouring dataset for agent 0: another draw of the
// test generator.
func neighbour(t *testing.T) *data.Set {
	t.Helper()
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: 10, SamplesMin: 20, SamplesMax: 30, Dim: 3, CovScale: 0.5, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, 1234)
	return sets[0]
}

// auditCase is a configuration the audit tests run.
type auditCase struct {
	name string
	cfg  Config
}

func auditCases() []auditCase {
	priv := func(s Scheme, m noise.Mechanism) Privacy {
		p := Privacy{Scheme: s, Mechanism: m, Std: 0.05}
		if s == None {
			p.Std = 0
		}
		if s == LocalGraphHomomorphic {
			p.Keys = pairmask.Oracle
		}
		return p
	}
	return []auditCase{
		{"atc/none", Config{Strategy: ATC, StepSize: 0.1, Privacy: priv(None, noise.Laplace)}},
		{"atc/random", Config{Strategy: ATC, StepSize: 0.1, Privacy: priv(Random, noise.Laplace)}},
		{"cta/random-gaussian/sample", Config{Strategy: CTA, StepSize: 0.1, Gradient: Sample, Privacy: priv(Random, noise.Gaussian)}},
		{"consensus/graph-homomorphic", Config{Strategy: Consensus, StepSize: 0.1, Privacy: priv(GraphHomomorphic, noise.Laplace)}},
		{"general/graph-homomorphic/batch", Config{Strategy: General, Stages: [3]bool{Stage0: true, Stage2: true}, StepSize: 0.05, Gradient: Batch, Batch: 4, Privacy: priv(GraphHomomorphic, noise.Gaussian)}},
		{"atc/local-graph-homomorphic", Config{Strategy: ATC, StepSize: 0.1, Privacy: priv(LocalGraphHomomorphic, noise.Laplace)}},
		{"cta/local-graph-homomorphic", Config{Strategy: CTA, StepSize: 0.1, Privacy: priv(LocalGraphHomomorphic, noise.Laplace)}},
	}
}

// heavyBall is an adaptation step with memory, for the tests: the heavy
// ball with β = 0.6 (actors/diffusion registers it as momentum), its
// velocity the agent's state vector 0.
type heavyBall struct{}

func (heavyBall) Adapt(z, g []float64, mu float64, s *AdaptState) {
	v := s.Vector(0)
	for j := range z {
		v[j] = 0.6*v[j] + g[j]
		z[j] -= mu * v[j]
	}
}

// victimValue returns agent 0's input of stage j: before an iteration for
// stage 1 (w), after it for stages 0 and 2 (φ and ψ).
func victimValue(r *reference, j int) []float64 { return slices.Clone(r.state[j][Victim]) }

// The network view's replay is the run: fed the shares of a run on D, its
// prediction of agent 0's value under D is the value agent 0 shared, bit for
// bit where nothing is recovered from a message (no noise, random noise,
// local graph-homomorphic masks) and to 1e-12 where agent 0's
// graph-homomorphic self term is (x − y)/c times c′, a few roundings of the
// draw per iteration. Under local graph-homomorphic masks, the value the
// receivers' aggregates reveal is agent 0's to 1e-12 (the masks, of size
// σ_g/a, cancel up to their rounding). With an adaptation step with memory
// the replay keeps every agent's, and agent 0's under D′, apart.
func TestNetworkReplayIsTheRun(t *testing.T) {
	A, sets, l := regressionNetwork(t, topology.Metropolis)
	alt := neighbour(t)
	w0 := make([]float64, 3)
	cases := append(auditCases(), auditCase{"cta/random/heavy-ball", Config{Strategy: CTA, StepSize: 0.1,
		Privacy: Privacy{Scheme: Random, Mechanism: noise.Laplace, Std: 0.05}, Adapt: heavyBall{}}})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prob := Problem{A: A, Sets: sets, Loss: l, W0: w0}
			a, err := NewAuditor(c.cfg, prob, alt, audit.NetworkView, SeedStreams(7))
			if err != nil {
				t.Fatal(err)
			}
			r, err := newReference(c.cfg, prob, SeedStreams(7))
			if err != nil {
				t.Fatal(err)
			}
			exact := c.cfg.Privacy.Scheme != GraphHomomorphic
			for i := 1; i <= 30; i++ {
				before := victimValue(r, Stage1)
				var ferr error
				r.iterate(i, Hooks{Share: func(i, j, from, to int, v []float64) {
					if err := a.Observe(i, j, from, to, v); err != nil && ferr == nil {
						ferr = err
					}
				}})
				if ferr != nil {
					t.Fatal(ferr)
				}
				if a.Scored() != i {
					t.Fatalf("iteration %d: scored up to %d", i, a.Scored())
				}
				for _, j := range a.stages {
					want := before
					if j != Stage1 {
						want = victimValue(r, j)
					}
					got := a.mu[0][j]
					if exact && !slices.Equal(got, want) || !exact && floats.Distance(got, want, math.Inf(1)) > 1e-12 {
						t.Fatalf("iteration %d, stage %d: replayed %v, agent 0 shared %v", i, j, got, want)
					}
					if c.cfg.Privacy.Scheme == LocalGraphHomomorphic && floats.Distance(a.yhat[j], want, math.Inf(1)) > 1e-12 {
						t.Fatalf("iteration %d, stage %d: revealed %v, agent 0 shared %v", i, j, a.yhat[j], want)
					}
				}
			}
		})
	}
}

// gradientAt returns ∇J(w) of set.
func gradientAt(set *data.Set, l loss.Loss, w []float64) []float64 {
	g := make([]float64, len(w))
	l.FullGrad(g, w, set)
	return g
}

// One iteration of ATC from w₀ = 0 has a closed form: agent 0 shares
// ψ = −μ∇J₀(0) under D and −μ∇J′₀(0) under D′, whatever the noise, so both
// views are exact and every link carries the same shift d = μ(∇J₀(0) −
// ∇J′₀(0)). The expected score of a run with the canary is the
// Kullback–Leibler divergence of the two laws of the view, and minus it
// without: K·Σ_c (|d_c|/b + e^{−|d_c|/b} − 1) for independent Laplace noise on
// K links, Σ_c d_c²/2σ² for one Gaussian draw shared by every link, and
// Σ_k Σ_c KL of a sum of n_k Laplace masks scaled by 1/a_0k for local
// graph-homomorphic masks. Divergence must equal the closed forms (1e-12
// relative: the same arithmetic in another order; 1e-7 for the numerical
// integral of the masks' law), and the mean score of 1 000 runs each way
// must be within 4 standard errors of ±Divergence.
func TestOneIterationScoreMeanIsTheDivergence(t *testing.T) {
	A, sets, l := regressionNetwork(t, topology.Metropolis)
	alt := neighbour(t)
	w0 := make([]float64, 3)
	const mu, std = 0.1, 0.05
	d := gradientAt(sets[Victim], l, w0)
	floats.Sub(d, gradientAt(alt, l, w0))
	floats.Scale(mu, d)
	net, err := NewNetwork(A, Config{Strategy: ATC, StepSize: mu})
	if err != nil {
		t.Fatal(err)
	}
	links := net.Receivers(Victim)
	laplaceKL := func(b float64) float64 {
		var s float64
		for _, dc := range d {
			s += math.Abs(dc)/b + math.Exp(-math.Abs(dc)/b) - 1
		}
		return s
	}
	for _, c := range []struct {
		name    string
		privacy Privacy
		view    audit.View
		want    float64 // the closed form, or 0: only compared with the means
	}{
		{"random/network", Privacy{Scheme: Random, Mechanism: noise.Laplace, Std: std}, audit.NetworkView, float64(len(links)) * laplaceKL(std/math.Sqrt2)},
		{"random/wire", Privacy{Scheme: Random, Mechanism: noise.Laplace, Std: std}, audit.WireView, float64(len(links)) * laplaceKL(std/math.Sqrt2)},
		{"graph-homomorphic-gaussian/wire", Privacy{Scheme: GraphHomomorphic, Mechanism: noise.Gaussian, Std: std}, audit.WireView, floats.Dot(d, d) / (2 * std * std)},
		{"local-graph-homomorphic/wire", Privacy{Scheme: LocalGraphHomomorphic, Mechanism: noise.Laplace, Std: std, Keys: pairmask.Oracle}, audit.WireView, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Strategy: ATC, StepSize: mu, Privacy: c.privacy}
			var div float64
			for in := range 2 {
				const N = 1000
				var sum, sum2 float64
				for n := range N {
					streams := SeedStreams(uint64(1000*in + n))
					prob := Problem{A: A, Sets: sets, Loss: l, W0: w0}
					a, err := NewAuditor(cfg, prob, alt, c.view, streams)
					if err != nil {
						t.Fatal(err)
					}
					if in == 1 {
						prob.Sets = slices.Clone(sets)
						prob.Sets[Victim] = alt
					}
					err = Reference(cfg, prob, uint64(1000*in+n), 1, Hooks{Share: func(i, j, from, to int, v []float64) {
						if err := a.Observe(i, j, from, to, v); err != nil {
							t.Fatal(err)
						}
					}})
					if err != nil {
						t.Fatal(err)
					}
					s := a.Score(1)
					sum += s
					sum2 += s * s
					if n == 0 {
						div = a.Divergence() // the same in every run: one iteration from w₀
					}
				}
				mean := sum / N
				se := math.Sqrt((sum2/N - mean*mean) / N)
				want := div
				if in == 0 {
					want = -div
				}
				if math.Abs(mean-want) > 4*se {
					t.Errorf("canary in = %d: mean score %v ± %v, want %v", in, mean, se, want)
				}
			}
			tol := 1e-12
			if c.want == 0 { // the masks' law, integrated numerically
				c.want, tol = lghDivergence(t, A, c.privacy, links, d), 1e-7
			}
			if math.Abs(div-c.want) > tol*c.want {
				t.Errorf("divergence %v, closed form %v", div, c.want)
			}
		})
	}
}

// lghDivergence is the KL of agent 0's masked messages shifted by d, from
// the plan's partners and weights, computed apart from the auditor: link k
// carries (1/a_0k)·Σ of n_k Laplace masks.
func lghDivergence(t *testing.T, A *mat.Dense, p Privacy, links []int, d []float64) float64 {
	t.Helper()
	senders, receivers := topology.Support(A)
	plan := pairmask.NewPlan(p.Roles, senders, receivers)
	var s float64
	for _, k := range links {
		as, ok := plan.Assignment(Victim, k)
		if !ok || len(as.Partners) == 0 {
			t.Fatalf("receiver %d: no partners for agent 0", k)
		}
		law := audit.LaplaceSumNoise(len(as.Partners), p.Std, 1/A.At(Victim, k))
		for _, dc := range d {
			s += law.Divergence(dc)
		}
	}
	return s
}

// ratioRing returns A = 0.4·I + 0.35·S + 0.25·Sᵀ on a ring of 5, S the cyclic
// shift: doubly stochastic with symmetric support, so the printed ratio form
// of graph-homomorphic noise applies, but not symmetric, so that agent 0's two
// links carry different multiples of its draw; and data for it.
func ratioRing(t *testing.T) (*mat.Dense, []*data.Set, *data.Set, loss.Loss) {
	t.Helper()
	const P = 5
	A := mat.NewDense(P, P, nil)
	for p := range P {
		A.Set(p, p, 0.4)
		A.Set(p, (p+1)%P, 0.35)
		A.Set((p+1)%P, p, 0.25)
	}
	if err := homomorphic.CheckForm(A, homomorphic.Ratio, topology.DefaultTol); err != nil {
		t.Fatal(err)
	}
	gen := data.RegressionConfig{Agents: P, SamplesMin: 20, SamplesMax: 20, Dim: 2, CovScale: 0.5, NoiseVarMin: 0.1, NoiseVarMax: 1}
	sets, _ := data.Regression(gen, 3)
	alts, _ := data.Regression(gen, 4)
	return A, sets, alts[0], loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
}

// Where the view reveals agent 0's value and the auditor predicts it exactly
// — graph-homomorphic noise in the printed ratio form on a non-symmetric A
// (two links carry different multiples of one draw) under the network view,
// local graph-homomorphic masks under the network view — every run with the
// canary scores above 0 and every run without it below, from the first
// iteration on, and the scores stay finite (σ_g = 1 makes the iterates
// large: the replay must not amplify the discrepancy of the dataset agent 0
// does not hold).
func TestRevealingViewsSeparateEveryRun(t *testing.T) {
	A, sets, alt, l := ratioRing(t)
	for _, c := range []struct {
		name    string
		privacy Privacy
	}{
		{"ratio", Privacy{Scheme: GraphHomomorphic, Mechanism: noise.Laplace, Std: 1, Form: homomorphic.Ratio}},
		{"local-graph-homomorphic", Privacy{Scheme: LocalGraphHomomorphic, Mechanism: noise.Laplace, Std: 1, Keys: pairmask.Oracle}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{Strategy: ATC, StepSize: 0.1, Privacy: c.privacy}
			for seed := range uint64(20) {
				in := seed%2 == 1
				prob := Problem{A: A, Sets: sets, Loss: l, W0: make([]float64, 2)}
				a, err := NewAuditor(cfg, prob, alt, audit.NetworkView, SeedStreams(seed))
				if err != nil {
					t.Fatal(err)
				}
				if !a.model.Revealed() || !a.Exact() || !math.IsInf(a.Divergence(), 0) && a.Scored() > 0 {
					t.Fatalf("the view does not reveal agent 0's value: %s", a.Statistic())
				}
				if in {
					prob.Sets = slices.Clone(sets)
					prob.Sets[Victim] = alt
				}
				err = Reference(cfg, prob, seed, 15, Hooks{Share: func(i, j, from, to int, v []float64) {
					if err := a.Observe(i, j, from, to, v); err != nil {
						t.Fatal(err)
					}
				}})
				if err != nil {
					t.Fatal(err)
				}
				for i := 1; i <= 15; i++ {
					if s := a.Score(i); in != (s > 0) || math.IsInf(s, 0) || math.IsNaN(s) {
						t.Fatalf("seed %d (canary in: %v), iteration %d: score %v", seed, in, i, s)
					}
				}
			}
		})
	}
}

// On the wire, the printed ratio form on a non-symmetric A reveals agent 0's
// value: its messages to agents 1 and 4 carry its draw times different
// coefficients, and (c₂x₁ − c₁x₂)/(c₂ − c₁) is the value to 1e-12 (the
// rounding of the messages, of size σ_g = 1).
func TestRatioFormRevealsTheValueOnTheWire(t *testing.T) {
	A, sets, alt, l := ratioRing(t)
	cfg := Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: GraphHomomorphic, Mechanism: noise.Laplace, Std: 1, Form: homomorphic.Ratio}}
	prob := Problem{A: A, Sets: sets, Loss: l, W0: make([]float64, 2)}
	a, err := NewAuditor(cfg, prob, alt, audit.WireView, SeedStreams(2))
	if err != nil {
		t.Fatal(err)
	}
	if !a.model.Revealed() || a.Exact() {
		t.Fatalf("revealed %v, exact %v: %s", a.model.Revealed(), a.Exact(), a.Statistic())
	}
	r, err := newReference(cfg, prob, SeedStreams(2))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 20; i++ {
		r.iterate(i, Hooks{Share: func(i, j, from, to int, v []float64) {
			if err := a.Observe(i, j, from, to, v); err != nil {
				t.Fatal(err)
			}
		}})
		if got, want := a.yhat[Stage2], victimValue(r, Stage2); floats.Distance(got, want, math.Inf(1)) > 1e-12 {
			t.Fatalf("iteration %d: revealed %v, agent 0 shared %v", i, got, want)
		}
	}
}

// The auditor refuses what it cannot replay, naming it.
func TestAuditorRefusesWhatItCannotReplay(t *testing.T) {
	A, sets, l := regressionNetwork(t, topology.Metropolis)
	prob := Problem{A: A, Sets: sets, Loss: l, W0: make([]float64, 3)}
	self := Config{Strategy: ATC, StepSize: 0.1, Privacy: Privacy{Scheme: Random, Std: 0.1, SelfNoise: true}}
	if _, err := NewAuditor(self, prob, neighbour(t), audit.NetworkView, SeedStreams(1)); err == nil {
		t.Error("self noise under the network view: accepted")
	}
	if _, err := NewAuditor(self, prob, neighbour(t), audit.WireView, SeedStreams(1)); err != nil {
		t.Errorf("self noise under the wire view: %v", err)
	}
	short := &data.Set{Dim: 2, X: []float64{1, 2}, Y: []float64{1}}
	if _, err := NewAuditor(Config{Strategy: ATC, StepSize: 0.1}, prob, short, audit.WireView, SeedStreams(1)); err == nil {
		t.Error("a neighbouring dataset of another dimension: accepted")
	}
}
