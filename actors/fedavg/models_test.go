package fedavg

import (
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
)

// classData returns Gaussian-cluster data of 3 classes in 4 dimensions,
// dealt out to agents with Dirichlet label skew.
func classData(t *testing.T, agents int) []*data.Set {
	t.Helper()
	pool, _ := data.Blobs(data.BlobsConfig{Agents: agents, SamplesMin: 20, SamplesMax: 30, Dim: 4, Classes: 3, Separation: 2, TestSamples: 1}, 3)
	sets, _, err := data.Partition(pool, data.PartitionConfig{
		SplitConfig: data.SplitConfig{Agents: agents, SamplesMin: 10, SamplesMax: 10}, Kind: data.Dirichlet, Alpha: 1,
	}, 3)
	if err != nil {
		t.Fatal(err)
	}
	return sets
}

// The multi-class models change nothing in the protocol: softmax regression
// and the MLP (from its random origin) give the same iterates on the actor
// engine and in the reference, with and without privacy noise. Both run the
// same BLAS calls on the same operands in the same order, so the agreement is
// exact; 1e-12 is asserted.
func TestActorRunMatchesReferenceWithMultiClassModels(t *testing.T) {
	sets := classData(t, 12)
	mlp := loss.Loss{Kind: loss.MLP, Rho: 0.001, Classes: 3, Hidden: 6, Activation: loss.Tanh}
	mlp.Origin = mlp.Init(4, rng.New(1, "model", "init"))
	relu := mlp
	relu.Activation = loss.ReLU
	for name, l := range map[string]loss.Loss{
		"softmax":  {Kind: loss.Softmax, Rho: 0.001, Classes: 3},
		"mlp-tanh": mlp,
		"mlp-relu": relu,
	} {
		for _, noisy := range []bool{false, true} {
			cfg := fedavg.Config{
				Agents: 12, Participants: 4, StepSize: 0.1, Normalized: true,
				Epochs: fedavg.Range{Min: 1, Max: 5}, Batch: fedavg.Range{Min: 1, Max: 10},
			}
			if noisy {
				cfg.Share, cfg.NoiseStd = fedavg.Updates, 0.05
			}
			w0 := make([]float64, l.Dim(4))
			got := runActors(t, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: 20, Server: "mean"}, 5)
			var want [][]float64
			if err := reference.Reference(cfg, data.Sets(sets), l, w0, 5, 20, func(_ int, w []float64) {
				want = append(want, append([]float64(nil), w...))
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(got[0]) != l.Dim(4) {
				t.Fatalf("%s: %d rounds of dimension %d, want %d of %d", name, len(got), len(got[0]), len(want), l.Dim(4))
			}
			for i := range want {
				for j := range want[i] {
					if d := got[i][j] - want[i][j]; d > 1e-12 || d < -1e-12 {
						t.Fatalf("%s noisy=%v: round %d coordinate %d: actors %v, reference %v", name, noisy, i+1, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}
