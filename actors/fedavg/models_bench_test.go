package fedavg

import (
	"math/rand/v2"
	"testing"
	"time"

	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/internal/cputime"
)

// BenchmarkLRMNISTShape is FLUTE's LR-MNIST task without its data files:
// softmax regression with 784 features and 10 classes (7850 parameters), K =
// 1000 agents of 60 samples (pixels uniform in [0, 1], random classes), L = 10
// per round, one local epoch of 6 steps on mini-batches of 10, 100 rounds. It
// times the training alone (no data loading, no test evaluation) on the actor
// engine and on the reference kernel, in the same loop, and reports the time of
// a whole run on each and their ratio (actor/ref; actor/ref-cpu for CPU time).
func BenchmarkLRMNISTShape(b *testing.B) {
	const K, L, rounds, samples, features, classes = 1000, 10, 100, 60, 784, 10
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
	cfg := fedavg.Config{Agents: K, Participants: L, StepSize: 0.03,
		Epochs: fedavg.Range{Min: 6, Max: 6}, Batch: fedavg.Range{Min: 10, Max: 10}}
	w0 := make([]float64, l.Dim(features))
	actor, ref := timeEngines(b, &cfg, sets, l, w0, rounds)
	perRun := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(b.N) }
	b.ReportMetric(perRun(actor.Wall), "actor-ms/run")
	b.ReportMetric(perRun(ref.Wall), "ref-ms/run")
	cputime.ReportRatio(b, actor, ref, "actor/ref")
}
