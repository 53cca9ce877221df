package fedavg

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/systems"
	"maple/internal/params"
)

// This file is the example of docs/writing-behaviours.md of a server that
// changes the protocol, an actor behaviour of its own written in a few lines
// on ServerParts, with a parameter scenario files set
// (algorithm.fedavg.server: {kind: example-deadline, seconds: 2}). It
// declares itself actor-only: the reference engine refuses it.

func init() {
	RegisterServer(Server{
		Name:      "example-deadline",
		Doc:       "the mean of the replies that arrive within a deadline after the broadcast",
		Params:    deadline{Seconds: 1},
		Behaviour: func(p ServerParts) actors.Behaviour { return &deadlineServer{ServerParts: p} },
		ActorOnly: true,
	})
}

type deadline struct {
	Seconds float64 `yaml:"seconds" range:"(0, inf)" doc:"virtual seconds after the broadcast at which the round closes"`
}

// deadlineServer closes each round at its deadline: on Tick it sets a timer
// for itself, and ServerParts.Handle closes the round when the timer fires
// (or earlier, once every reply is in).
type deadlineServer struct{ ServerParts }

func (s *deadlineServer) Receive(ctx *actors.Context, m proto.Message) error {
	if _, ok := m.(*msg.Tick); ok {
		ctx.After(s.Params.(deadline).Seconds, &msg.FedAvgDeadline{})
	}
	complete, err := s.Handle(ctx, m)
	if err != nil || !complete {
		return err
	}
	s.Core.Combine() // the mean of Core.Replies(): those that arrived in time (see Server.Close)
	s.EndRound(ctx)
	return nil
}

// The example server gives the same run as the built-in deadline policy
// without re-weighting (Config.Collect is left at its zero value, so
// Server.Close counts the missing replies as no change).
func TestExampleDeadlineServerIsTheDeadlinePolicy(t *testing.T) {
	m := &systems.Model{Latency: 0.05, Compute: systems.Compute{Kind: systems.LogNormal, Median: 0.3, Sigma: 0.8}}
	cfg := baseConfig()
	p := params.Values{"seconds": 1.2}
	sets, l := regression(t, cfg.Agents)
	rec := &record{}
	r := actors.NewRun(actors.Options{RunSeed: 4, Observer: recorder{rec}, Timing: actors.Timing{Latency: m.Latency}})
	defer r.Close()
	sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: 20,
		Server: "example-deadline", ServerParams: p, Fleet: m.Fleet(4, cfg.Agents, fedavg.AgentName)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	policy := baseConfig()
	policy.Collect = fedavg.Deadline{Seconds: 1.2}
	want, err := systemsRun(t, policy, m, "mean", 20, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.models {
		if !slices.Equal(rec.models[i], want.models[i]) {
			t.Fatalf("round %d: example server %v, deadline policy %v", i+1, rec.models[i], want.models[i])
		}
	}
	if want.events[fedavg.ObsLate] == 0 {
		t.Error("no reply missed the deadline: the example shows nothing")
	}
}
