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
	reused, copied := allocationPerRound(t, dim, agents, false), allocationPerRound(t, dim, agents, true)
	if saved := copied.bytes - reused.bytes; saved < 5*8*dim {
		t.Errorf("a round allocates %.0f bytes with the reuse and %.0f without: %.0f saved, less than five %d-dimensional vectors", reused.bytes, copied.bytes, saved, dim)
	}
}

// Nor does a round allocate its messages once the first is over: the server
// recycles the replies and sends its tasks in messages the agents recycled
// (Context.Recycle, actors.Fresh), and the agents reply in the replies the
// server recycled. What a round of 10 agents at dimension 2 still allocates
// is the woken agents' state and their uplink reports: 22 objects (26.7 to
// 27.6 under the race detector); allocating each agent's task or its reply
// again adds one object per agent, both two (42 and 47 objects before the
// messages were recycled). The bound, 3 objects per agent, catches either.
func TestRoundsAllocateNoMessage(t *testing.T) {
	const agents = 10
	if got := allocationPerRound(t, 2, agents, false).objects; got >= 3*agents {
		t.Errorf("a round of %d agents allocates %.1f objects, at least 3 per agent: are its messages allocated again?", agents, got)
	}
}

// allocation is what a round allocates, on average.
type allocation struct{ bytes, objects float64 }

// allocationPerRound measures what a round of the mean server with agents
// agents, all taking part, at dimension dim allocates: the difference
// between runs of 43 and 3 rounds, after a warm-up run, so that one-time
// allocations cancel. tapped puts a wiretap on every link, so that nothing
// is reused (Context.Reuse is nil).
func allocationPerRound(t *testing.T, dim, agents int, tapped bool) allocation {
	t.Helper()
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
	run := func(rounds int) allocation {
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
		return allocation{bytes: float64(after.TotalAlloc - before.TotalAlloc), objects: float64(after.Mallocs - before.Mallocs)}
	}
	run(3) // warm-up
	long, short := run(43), run(3)
	return allocation{bytes: (long.bytes - short.bytes) / 40, objects: (long.objects - short.objects) / 40}
}

// listener is a wiretap that ignores what it hears.
type listener struct{}

func (listener) Receive(*actors.Context, proto.Message) error { return nil }
