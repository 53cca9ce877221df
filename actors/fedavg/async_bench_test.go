package fedavg

import (
	"testing"
	"time"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/loss"
	"maple/algorithms/systems"
	"maple/internal/cputime"
	"maple/internal/params"
)

// BenchmarkAsyncFedAvg runs asynchronous FedAvg with K = 1000 agents, 100
// of them training at once, E_k ∈ [1, 5], B_k ∈ [1, 10], 2-D, under a time
// model with 20% of the devices ten times slower, jitter and 5% message
// loss with timeouts: FedAsync (one model update per arrival) and FedBuff
// (b = 10). It runs the actor engine and the event-driven reference
// (reference.Simulate) on the same inputs in the same benchmark and reports the
// actor engine's delivered messages per second of wall time, the time per
// model update of each engine and their ratio (actor/ref; actor/ref-cpu for
// CPU time).
func BenchmarkAsyncFedAvg(b *testing.B) {
	const K, L, updates = 1000, 100, 2000
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: K, SamplesMin: 100, SamplesMax: 100, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
	m := &systems.Model{Latency: 0.05, Jitter: 0.01, Loss: 0.05,
		Compute: systems.Compute{Kind: systems.LogNormal, Median: 0.1, Sigma: 0.5},
		Classes: []systems.Class{{Name: "slow", Fraction: 0.2, Slowdown: 10, Dropout: -1}}}
	for _, server := range []string{"fedasync", "fedbuff"} {
		b.Run(server, func(b *testing.B) {
			cfg := fedavg.Config{Agents: K, Participants: L, StepSize: 0.01, Normalized: true,
				Epochs: fedavg.Range{Min: 1, Max: 5}, Batch: fedavg.Range{Min: 1, Max: 10}}
			// The server's parameters reach the actor engine as those of its
			// registered behaviour (Spawn configures a copy of cfg with them)
			// and the reference as cfg.Async: the same values.
			cfg.Async = fedavg.Async{Mode: fedavg.FedAsync, Alpha: 0.6, Staleness: fedavg.Staleness{Kind: fedavg.Polynomial, A: 0.5}, Timeout: 5}
			p := params.Values{"alpha": 0.6, "staleness": "polynomial", "a": 0.5, "timeout": 5.0}
			if server == "fedbuff" {
				cfg.Async = fedavg.Async{Mode: fedavg.FedBuff, Buffer: 10, ServerRate: 1, Staleness: fedavg.Staleness{Kind: fedavg.Polynomial, A: 0.5}, Timeout: 5}
				p = params.Values{"buffer": 10, "lr": 1.0, "staleness": "polynomial", "a": 0.5, "timeout": 5.0}
			}
			w0 := make([]float64, 2)
			var actor, ref cputime.Total
			var messages uint64
			system := actors.NewSystem(nil)
			defer system.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := cputime.Now()
				r := actors.NewRun(actors.Options{RunSeed: uint64(i), Observer: discard{}, System: system,
					Timing: actors.Timing{Latency: m.Latency, Jitter: m.Jitter, Loss: m.Loss}})
				sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: updates, Server: server,
					ServerParams: p, Fleet: m.Fleet(uint64(i), K, fedavg.AgentName)})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Execute(sched, &msg.Start{}); err != nil {
					b.Fatal(err)
				}
				messages += r.Messages()
				r.Close()
				actor.Since(start)

				start = cputime.Now()
				if err := reference.Simulate(cfg, data.Sets(sets), l, w0, uint64(i), updates, reference.SimOptions{Model: m}); err != nil {
					b.Fatal(err)
				}
				ref.Since(start)
			}
			perUpdate := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*updates) }
			b.ReportMetric(float64(messages)/actor.Wall.Seconds(), "msgs/s")
			b.ReportMetric(float64(messages)/float64(b.N), "msgs/run")
			b.ReportMetric(perUpdate(actor.Wall), "actor-ns/update")
			b.ReportMetric(perUpdate(ref.Wall), "ref-ns/update")
			cputime.ReportRatio(b, actor, ref, "actor/ref")
		})
	}
}
