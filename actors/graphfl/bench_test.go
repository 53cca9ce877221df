package graphfl

import (
	"testing"
	"time"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/graphfl"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/internal/cputime"
	"maple/topology"
)

// discard is an observer that ignores reports, so both engines do the same
// work: the reference's hooks are nil.
type discard struct{}

func (discard) Observe(actors.ID, int, string, []float64) {}

// BenchmarkGraphFL runs graph federated learning at the scale of seed 002 Fig.
// 2 — P = 10 servers on an Erdős–Rényi graph (p = 0.5, degree ≥ 2) with
// Metropolis weights, K = 100 clients each (1000 actors), L = 11 per round, E ∈
// [1, 10], B ∈ [5, 10], M = 2, N = 100 — per server privacy scheme, on the
// actor engine and on the flat reference in the same benchmark, and reports the
// time per round of each and their ratio (actor/ref; actor/ref-cpu for CPU
// time). Both times cover whole runs of 100 rounds: the actor time includes
// spawning and stopping the 1011 actors (one actor system is reused, as the
// runner's workers do), the reference time creating its per-client state.
func BenchmarkGraphFL(b *testing.B) {
	const P, K, rounds = 10, 100, 100
	g, err := topology.ErdosRenyi(P, 0.5, 2, rng.New(4, "bench", "graph"), 1000)
	if err != nil {
		b.Fatal(err)
	}
	A := topology.Metropolis(g)
	sets, _ := data.Regression(data.RegressionConfig{Agents: P * K, SamplesMin: 100, SamplesMax: 100, Dim: 2,
		CovScale: 0.3, NoiseVarMin: 0.001, NoiseVarMax: 0.1}, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.1}
	for _, scheme := range []graphfl.Scheme{graphfl.None, graphfl.Random, graphfl.GraphHomomorphic, graphfl.LocalGraphHomomorphic} {
		b.Run(scheme.String(), func(b *testing.B) {
			cfg := graphfl.Config{Servers: P, Clients: fedavg.Config{Agents: K, Participants: 11, StepSize: 0.7, Normalized: true,
				Epochs: fedavg.Range{Min: 1, Max: 10}, Batch: fedavg.Range{Min: 5, Max: 10}, BatchWithReplacement: true}}
			cfg.Privacy.Scheme = scheme
			if scheme != graphfl.None {
				cfg.Privacy.Std = 0.3162
			}
			s := Setup{Config: cfg, A: A, Sets: sets, Loss: l, W0: make([]float64, 2), Rounds: rounds}
			prob := graphfl.Problem{A: A, Sets: sets, Loss: l, W0: s.W0}
			system := actors.NewSystem(nil)
			defer system.Close()
			var actor, ref cputime.Total
			for i := 0; b.Loop(); i++ {
				start := cputime.Now()
				r := actors.NewRun(actors.Options{RunSeed: uint64(i), Observer: discard{}, System: system})
				sched, err := Spawn(r, s)
				if err == nil {
					err = r.Execute(sched, &msg.Start{})
				}
				r.Close()
				if err != nil {
					b.Fatal(err)
				}
				actor.Since(start)

				start = cputime.Now()
				if err := graphfl.Reference(cfg, prob, uint64(i), rounds, graphfl.Hooks{}); err != nil {
					b.Fatal(err)
				}
				ref.Since(start)
			}
			perRound := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*rounds) }
			b.ReportMetric(perRound(actor.Wall), "actor-ns/round")
			b.ReportMetric(perRound(ref.Wall), "ref-ns/round")
			cputime.ReportRatio(b, actor, ref, "actor/ref")
		})
	}
}
