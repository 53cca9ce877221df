package fedavg

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
)

// The rule server sends each agent a model in the storage of an earlier
// round's reply, and the agent trains into it: after the first round a
// round allocates no model or reply vector. At dimension 8000 with 10
// agents per round a vector is 64 kB; without the reuse — as under a
// wiretap, where Context.Reuse is nil — a round allocates a shared model
// and 10 replies, 704 kB. The test compares the two runs' allocation per
// round (over 40 rounds, after a warm-up run, so that one-time allocations
// cancel) and requires the reuse to save at least five vectors a round,
// whatever else a round allocates (the race detector adds its own).
func TestRoundsReuseTheStorageOfModelsAndReplies(t *testing.T) {
	const dim, agents = 8000, 10
	r := rand.New(rand.NewPCG(3, 4))
	sets := make([]*data.Set, agents)
	for k := range sets {
		sets[k] = &data.Set{Dim: dim, X: make([]float64, 2*dim), Y: []float64{r.NormFloat64(), r.NormFloat64()}}
		for j := range sets[k].X {
			sets[k].X[j] = r.NormFloat64()
		}
	}
	cfg := fedavg.Config{Agents: agents, Participants: agents, StepSize: 0.01, Epochs: fedavg.Range{Min: 1, Max: 1},
		Batch: fedavg.Range{Min: 1, Max: 1}, Hold: fedavg.HoldKeep}
	bytes := func(rounds int, tapped bool) float64 {
		r := actors.NewRun(actors.Options{RunSeed: 1})
		defer r.Close()
		if tapped {
			r.Wiretap(r.Spawn("tap", listener{}), func(actors.ID, actors.ID) bool { return true })
		}
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
		return float64(after.TotalAlloc - before.TotalAlloc)
	}
	perRound := func(tapped bool) float64 {
		bytes(3, tapped) // warm-up
		return (bytes(43, tapped) - bytes(3, tapped)) / 40
	}
	reused, copied := perRound(false), perRound(true)
	if saved := copied - reused; saved < 5*8*dim {
		t.Errorf("a round allocates %.0f bytes with the reuse and %.0f without: %.0f saved, less than five %d-dimensional vectors", reused, copied, saved, dim)
	}
}

// listener is a wiretap that ignores what it hears.
type listener struct{}

func (listener) Receive(*actors.Context, proto.Message) error { return nil }
