package fedavg

import (
	"runtime"
	"testing"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
)

// The rule server sends each agent a model in the storage of an earlier
// round's reply, and the agent trains into it: after the first round a
// round allocates no model or reply vector. At dimension 2000 with 10
// agents per round, vectors would be 10 models and 10 replies of 16 kB
// each, 320 kB a round; what a round allocates besides (the messages'
// structs, the agents' wakes) is a few kB, so the bound of two vectors
// (32 kB) a round separates the two by a factor of ten.
func TestRoundsReuseTheStorageOfModelsAndReplies(t *testing.T) {
	const dim, agents = 2000, 10
	sets, _ := data.Regression(data.RegressionConfig{Agents: agents, SamplesMin: 2, SamplesMax: 2, Dim: dim, CovScale: 1}, 3)
	cfg := fedavg.Config{Agents: agents, Participants: agents, StepSize: 0.01, Epochs: fedavg.Range{Min: 1, Max: 1},
		Batch: fedavg.Range{Min: 1, Max: 1}, Hold: fedavg.HoldKeep}
	bytes := func(rounds int) uint64 {
		r := actors.NewRun(actors.Options{RunSeed: 1})
		defer r.Close()
		sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: loss.Loss{Kind: loss.LeastSquares},
			W0: make([]float64, dim), Rounds: rounds, Server: "mean"})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := r.Execute(sched, &msg.Start{}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	few, many := bytes(3), bytes(23)
	if perRound := float64(many-few) / 20; perRound > 2*8*dim {
		t.Errorf("a round allocates %.0f bytes, more than two %d-dimensional vectors", perRound, dim)
	}
}
