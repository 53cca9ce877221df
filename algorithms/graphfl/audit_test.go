package graphfl

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/privacy/audit"
	"maple/topology"
)

// auditProblem returns the test network (6 servers of 4 clients), its data
// and a neighbouring dataset for client (0, 0): another draw of the
// generator.
func auditProblem(t *testing.T) (Problem, *data.Set) {
	t.Helper()
	sets, l := testSets(6, 4)
	alts, _ := data.Regression(data.RegressionConfig{Agents: 1, SamplesMin: 15, SamplesMax: 25, Dim: 3,
		CovScale: 0.6, NoiseVarMin: 0.1, NoiseVarMax: 0.5}, 43)
	return Problem{A: topology.Metropolis(testGraph(t)), Sets: sets, Loss: l, W0: make([]float64, 3)}, alts[0]
}

// feed returns the Share hook that hands every message to a.
func feed(t *testing.T, a *Auditor) func(i, from, to int, v []float64) {
	return func(i, from, to int, v []float64) {
		if err := a.Observe(i, from, to, v); err != nil {
			t.Fatal(err)
		}
	}
}

// The network view's replay is the run: fed the messages of a run on D, its
// prediction of server 0's aggregate under D is the aggregate server 0 formed,
// bit for bit where nothing is recovered from a message, and to 1e-12 where
// its graph-homomorphic self term is (x − ψ)/c times c′ (a few roundings of
// the draw of size 0.1 per round); under local graph-homomorphic masks the
// aggregate its receiver's sum reveals is server 0's to 1e-12 (the masks,
// of size σ/a, cancel up to their rounding).
func TestServerReplayIsTheRun(t *testing.T) {
	prob, alt := auditProblem(t)
	for _, name := range []string{"none", "random", "random-broadcast", "graph-homomorphic", "lgh-secure", "lgh-oracle-parity"} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(6, None)
			variants[name](&cfg)
			a, err := NewAuditor(context.Background(), cfg, prob, alt, audit.NetworkView, 5, 20)
			if err != nil {
				t.Fatal(err)
			}
			var psi [][]float64
			hooks := Hooks{Share: feed(t, a), Aggregates: func(_ int, Psi [][]float64) { psi = append(psi, slices.Clone(Psi[Victim])) },
				Models: func(i int, _ [][]float64) {
					got, want := a.mu[0], psi[i-1]
					if a.Scored() != i {
						t.Fatalf("round %d: scored up to %d", i, a.Scored())
					}
					if cfg.Privacy.Scheme != GraphHomomorphic && !slices.Equal(got, want) || floats.Distance(got, want, math.Inf(1)) > 1e-12 {
						t.Fatalf("round %d: replayed %v, server 0 formed %v", i, got, want)
					}
					if cfg.Privacy.Scheme == LocalGraphHomomorphic && floats.Distance(a.yhat, want, math.Inf(1)) > 1e-12 {
						t.Fatalf("round %d: revealed %v, server 0 formed %v", i, a.yhat, want)
					}
				}}
			if err := Reference(cfg, prob, 5, 20, hooks); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Under the network view the score is the exact likelihood ratio, so that,
// given a run's path, its expectation is the divergence the auditor reports
// with the canary and minus it without: over 600 runs of 3 rounds each way
// (the path, and whether client (0, 0) takes part, vary with the seed), the
// mean of score ∓ divergence is within 4 standard errors of 0. The same for
// the wire view under local graph-homomorphic masks, whose aggregates do not
// depend on the masks (the noise-free predictions are exact), with the law of
// a sum of masks.
func TestServerScoreMeanIsTheDivergence(t *testing.T) {
	prob, alt := auditProblem(t)
	for _, c := range []struct {
		variant string
		view    audit.View
	}{{"random", audit.NetworkView}, {"graph-homomorphic", audit.NetworkView}, {"lgh-oracle-parity", audit.WireView}} {
		t.Run(c.variant+"/"+c.view.String(), func(t *testing.T) {
			cfg := testConfig(6, None)
			variants[c.variant](&cfg)
			cfg.Privacy.Std = 0.02
			var sum, sum2 float64
			const N = 600
			for n := range 2 * N {
				seed := uint64(100 + n)
				a, err := NewAuditor(context.Background(), cfg, prob, alt, c.view, seed, 3)
				if err != nil {
					t.Fatal(err)
				}
				run, sign := prob, -1.0
				if n%2 == 1 {
					run.Sets = slices.Clone(prob.Sets)
					run.Sets[0], sign = alt, 1
				}
				if err := Reference(cfg, run, seed, 3, Hooks{Share: feed(t, a)}); err != nil {
					t.Fatal(err)
				}
				x := a.Score(3) - sign*a.Divergence()
				sum += x
				sum2 += x * x
			}
			mean := sum / (2 * N)
			se := math.Sqrt((sum2/(2*N) - mean*mean) / (2 * N))
			if math.Abs(mean) > 4*se || se == 0 {
				t.Errorf("score − expected score: %v ± %v", mean, se)
			}
		})
	}
}

// Where the network view reveals server 0's aggregate — no noise, local
// graph-homomorphic masks, graph-homomorphic noise in the ratio form on a
// non-symmetric doubly-stochastic A (0.4·I + 0.35·S + 0.25·Sᵀ on a ring of 6,
// S the cyclic shift: server 0's two links carry different multiples of its
// draw) — every run with the canary scores above 0 and every run without it
// below, once client (0, 0) has taken part (with L = 2 of 4 clients, by round
// 6 in every seed here; before, both datasets predict the same aggregate and
// the score is 0), and the scores stay finite.
func TestServerRevealingViewsSeparateEveryRun(t *testing.T) {
	prob, alt := auditProblem(t)
	ring := mat.NewDense(6, 6, nil)
	for p := range 6 {
		ring.Set(p, p, 0.4)
		ring.Set(p, (p+1)%6, 0.35)
		ring.Set((p+1)%6, p, 0.25)
	}
	for _, name := range []string{"none", "lgh-secure", "graph-homomorphic-ratio"} {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(6, None)
			variants[name](&cfg)
			prob := prob
			if name == "graph-homomorphic-ratio" {
				prob.A = ring
			}
			for seed := range uint64(20) {
				a, err := NewAuditor(context.Background(), cfg, prob, alt, audit.NetworkView, seed, 12)
				if err != nil {
					t.Fatal(err)
				}
				if !a.model.Revealed() {
					t.Fatalf("the view does not reveal server 0's aggregate: %s", a.Statistic())
				}
				run, in := prob, seed%2 == 1
				if in {
					run.Sets = slices.Clone(prob.Sets)
					run.Sets[0] = alt
				}
				if err := Reference(cfg, run, seed, 12, Hooks{Share: feed(t, a)}); err != nil {
					t.Fatal(err)
				}
				if s := a.Score(12); in != (s > 0) || math.IsInf(s, 0) || math.IsNaN(s) {
					t.Errorf("seed %d (canary in: %v): score %v", seed, in, s)
				}
			}
		})
	}
}

// The auditor refuses what its view cannot show.
func TestServerAuditorRefusals(t *testing.T) {
	prob, alt := auditProblem(t)
	ctx := context.Background()
	cfg := testConfig(6, None)
	variants["noisy-models"](&cfg)
	if _, err := NewAuditor(ctx, cfg, prob, alt, audit.WireView, 1, 3); err == nil {
		t.Error("client noise: accepted")
	}
	cfg = testConfig(6, None)
	variants["random-self-gaussian"](&cfg)
	if _, err := NewAuditor(ctx, cfg, prob, alt, audit.NetworkView, 1, 3); err == nil {
		t.Error("self noise under the network view: accepted")
	}
	if _, err := NewAuditor(ctx, cfg, prob, alt, audit.WireView, 1, 3); err != nil {
		t.Errorf("self noise on the wire: %v", err)
	}
}
