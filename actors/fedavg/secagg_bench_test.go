package fedavg

import (
	"math/rand/v2"
	"testing"
	"time"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
)

// BenchmarkSecAggRound runs one round of FedAvg on the actor engine with
// 1000 clients, all drawn, and a 10 000-parameter model (softmax regression
// on 999 features and 10 classes, 4 samples per client, one local step):
// in the clear, with SecAgg (k = 999, t = 501) and with SecAgg+ (k = 20,
// t = 11), 32-bit encoding. Each iteration spawns the 1002 actors and runs
// the round; the SecAgg iteration takes minutes (about 2·10⁶ X25519
// agreements), so run it once, with a long timeout:
//
//	go test -run XXX -bench SecAggRound -benchtime 1x -timeout 60m ./actors/fedavg/
//
// It reports each round's wall time and, for the secure rounds, the ratio
// to the round in the clear measured in the same benchmark.
func BenchmarkSecAggRound(b *testing.B) {
	const K, samples, features, classes = 1000, 4, 999, 10
	r := rand.New(rand.NewPCG(1, 2))
	sets := make([]*data.Set, K)
	for k := range sets {
		s := &data.Set{Dim: features, X: make([]float64, samples*features), Y: make([]float64, samples)}
		for i := range s.X {
			s.X[i] = r.Float64()
		}
		for i := range s.Y {
			s.Y[i] = float64(r.IntN(classes))
		}
		sets[k] = s
	}
	l := loss.Loss{Kind: loss.Softmax, Classes: classes}
	w0 := make([]float64, l.Dim(features))
	round := func(b *testing.B, sa *fedavg.SecureAggregation) time.Duration {
		cfg := fedavg.Config{Agents: K, Participation: fedavg.Full, StepSize: 0.03,
			Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: samples, Max: samples}, SecAgg: sa}
		start := time.Now()
		run := actors.NewRun(actors.Options{RunSeed: 1})
		defer run.Close()
		sched, err := Spawn(run, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: 1, Server: "mean"})
		if err != nil {
			b.Fatal(err)
		}
		if err := run.Execute(sched, &msg.Start{}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var plain time.Duration
	for _, c := range []struct {
		name string
		sa   *fedavg.SecureAggregation
	}{
		{"plain", nil},
		{"SecAgg+k20", &fedavg.SecureAggregation{Neighbours: 20, Threshold: 11, Bits: 32, Clip: 10}},
		{"SecAgg", &fedavg.SecureAggregation{Neighbours: K - 1, Threshold: K/2 + 1, Bits: 32, Clip: 10}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				total += round(b, c.sa)
			}
			per := total / time.Duration(b.N)
			b.ReportMetric(per.Seconds(), "s/round")
			if c.sa == nil {
				plain = per
			} else if plain > 0 {
				b.ReportMetric(float64(per)/float64(plain), "×plain")
			}
		})
	}
}
