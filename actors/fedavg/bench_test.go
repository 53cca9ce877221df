package fedavg

import (
	"fmt"
	"testing"
	"time"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/loss"
	"maple/internal/cputime"
)

// discard is an observer that ignores reports, so both engines do the same
// work: the reference's observe callback is a no-op too.
type discard struct{}

func (discard) Observe(actors.ID, int, string, []float64) {}

// BenchmarkFedAvg runs federated averaging with K = 1000 agents, L = 30 per
// round, E_k ∈ [1, 5] and B_k ∈ [1, 10] on the actor engine and on the flat
// reference kernel, in the same benchmark, and reports the time per round of
// each and their ratio (actor/ref; actor/ref-cpu for CPU time). Both times
// cover a whole run: the actor time includes spawning and stopping the 1002
// actors, the reference time creating its per-agent state.
func BenchmarkFedAvg(b *testing.B) {
	const K, L, rounds = 1000, 30, 200
	for _, dim := range []int{2, 100} {
		b.Run(fmt.Sprintf("dim=%d", dim), func(b *testing.B) {
			sets, _ := data.Regression(data.RegressionConfig{
				Agents: K, SamplesMin: 100, SamplesMax: 100, Dim: dim, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1,
			}, 1)
			l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
			cfg := fedavg.Config{Agents: K, Participants: L, StepSize: 0.01, Normalized: true,
				Epochs: fedavg.Range{Min: 1, Max: 5}, Batch: fedavg.Range{Min: 1, Max: 10}}
			w0 := make([]float64, dim)
			actor, ref := timeEngines(b, &cfg, sets, l, w0, rounds)
			reportPerRound(b, actor, ref, rounds)
		})
	}
}

// BenchmarkImportance runs importance-sampling FedAvg at the scale of thesis
// Fig. 2.1 — K = 300 agents with N_k = 100 samples, L = 6, E_k ∈ [1, 5],
// B_k ∈ [1, 10], 2-D — on the actor engine and on the flat reference kernel,
// in the same benchmark, for the full adaptive policy (every round the
// server probes all 300 agents, each computing its 100 sample-gradient norms
// and its full gradient) and the partial one (reports ride on the replies),
// and reports the time per round of each and their ratio (actor/ref;
// actor/ref-cpu for CPU time).
func BenchmarkImportance(b *testing.B) {
	const K, L, rounds = 300, 6, 100
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: K, SamplesMin: 100, SamplesMax: 100, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1.1,
	}, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
	for _, policy := range []fedavg.Policy{fedavg.Adaptive, fedavg.Partial} {
		b.Run(policy.String(), func(b *testing.B) {
			cfg := fedavg.Config{Agents: K, Participants: L, StepSize: 0.01, Normalized: true,
				Epochs: fedavg.Range{Min: 1, Max: 5}, Batch: fedavg.Range{Min: 1, Max: 10},
				Importance: fedavg.Importance{Agents: policy, Data: policy}}
			w0 := make([]float64, 2)
			actor, ref := timeEngines(b, &cfg, sets, l, w0, rounds)
			reportPerRound(b, actor, ref, rounds)
		})
	}
}

// timeEngines runs cfg b.N times on the actor engine and b.N times on the
// reference kernel, alternately, on the same inputs and run seeds 0, 1, …,
// and returns the total wall and CPU time of each. The actor time covers
// whole runs, spawning and stopping the actors included, on one system
// reused across runs, as the runner's workers do; the reference time
// includes creating its per-agent state.
func timeEngines(b *testing.B, cfg *fedavg.Config, sets []*data.Set, l loss.Loss, w0 []float64, rounds int) (actor, ref cputime.Total) {
	b.Helper()
	system := actors.NewSystem(nil)
	defer system.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := cputime.Now()
		r := actors.NewRun(actors.Options{RunSeed: uint64(i), Observer: discard{}, System: system})
		sched, err := Spawn(r, Setup{Config: cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: rounds, Server: "mean"})
		if err != nil {
			b.Fatal(err)
		}
		if err := r.Execute(sched, &msg.Start{}); err != nil {
			b.Fatal(err)
		}
		r.Close()
		actor.Since(start)

		start = cputime.Now()
		if err := reference.Reference(*cfg, data.Sets(sets), l, w0, uint64(i), rounds, func(int, []float64) {}); err != nil {
			b.Fatal(err)
		}
		ref.Since(start)
	}
	return actor, ref
}

// reportPerRound reports the wall time per round of each engine, their ratio
// (actor/ref) and the ratio of their CPU times (actor/ref-cpu), which other
// work on the machine stretches less.
func reportPerRound(b *testing.B, actor, ref cputime.Total, rounds int) {
	perRound := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*rounds) }
	b.ReportMetric(perRound(actor.Wall), "actor-ns/round")
	b.ReportMetric(perRound(ref.Wall), "ref-ns/round")
	cputime.ReportRatio(b, actor, ref, "actor/ref")
}
