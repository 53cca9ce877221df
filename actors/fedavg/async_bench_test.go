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
)

// BenchmarkAsyncFedAvg runs asynchronous FedAvg with K = 1000 agents, 100
// of them training at once, E_k ∈ [1, 5], B_k ∈ [1, 10], 2-D, under a time
// model with 20% of the devices ten times slower, jitter and 5% message
// loss with timeouts: FedAsync (one model update per arrival) and FedBuff
// (b = 10). It runs the actor engine and the event-driven reference
// (reference.Simulate) on the same inputs in the same benchmark and reports the
// actor engine's delivered messages per second of wall time, the time per
// model update of each engine and their ratio (actor/ref).
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
			cfg.Async = fedavg.Async{Mode: fedavg.FedAsync, Alpha: 0.6, Staleness: fedavg.Staleness{Kind: fedavg.Polynomial, A: 0.5}, Timeout: 5}
			if server == "fedbuff" {
				cfg.Async = fedavg.Async{Mode: fedavg.FedBuff, Buffer: 10, ServerRate: 1, Staleness: fedavg.Staleness{Kind: fedavg.Polynomial, A: 0.5}, Timeout: 5}
			}
			w0 := make([]float64, 2)
			var actorTime, refTime time.Duration
			var messages uint64
			system := actors.NewSystem(nil)
			defer system.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				r := actors.NewRun(actors.Options{RunSeed: uint64(i), Observer: discard{}, System: system,
					Timing: actors.Timing{Latency: m.Latency, Jitter: m.Jitter, Loss: m.Loss}})
				sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: updates, Server: server,
					Fleet: m.Fleet(uint64(i), K, fedavg.AgentName)})
				if err != nil {
					b.Fatal(err)
				}
				if err := r.Execute(sched, &msg.Start{}); err != nil {
					b.Fatal(err)
				}
				messages += r.Messages()
				r.Close()
				actorTime += time.Since(start)

				start = time.Now()
				if err := reference.Simulate(cfg, data.Sets(sets), l, w0, uint64(i), updates, reference.SimOptions{Model: m}); err != nil {
					b.Fatal(err)
				}
				refTime += time.Since(start)
			}
			perUpdate := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N*updates) }
			b.ReportMetric(float64(messages)/actorTime.Seconds(), "msgs/s")
			b.ReportMetric(float64(messages)/float64(b.N), "msgs/run")
			b.ReportMetric(perUpdate(actorTime), "actor-ns/update")
			b.ReportMetric(perUpdate(refTime), "ref-ns/update")
			b.ReportMetric(float64(actorTime)/float64(refTime), "actor/ref")
		})
	}
}
