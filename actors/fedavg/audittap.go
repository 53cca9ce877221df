package fedavg

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
)

// WireTapName is the actor name of WireTap.
const WireTapName = "wire-auditor"

// WireTap is the behaviour of an observer of one agent's link to a
// synchronous server (a fedavg.WireObserver, such as the dataset auditor):
// placed with actors.Run.Wiretap on that link (NewWireTap, then Attach), it
// receives a copy of every message sent on it — exactly what the trace
// records there — and hands the server's tasks (GlobalModel) and the
// agent's replies (LocalUpdate, LocalModel) to the observer. It sends
// nothing, so the protocol runs as if it were not there.
type WireTap struct {
	// Observer receives the link's tasks and replies.
	Observer fedavg.WireObserver
	// Server and Agent are the link's ends, set by Attach.
	Server, Agent actors.ID

	id actors.ID
}

// NewWireTap spawns a WireTap for o on r. Spawn the tap before the FedAvg
// run (Spawn creates the agents last, in a lazy range), then Attach it.
func NewWireTap(r *actors.Run, o fedavg.WireObserver) *WireTap {
	t := &WireTap{Observer: o}
	t.id = r.Spawn(WireTapName, t)
	return t
}

// Attach places the tap on the link between the server and agent
// Observer.Agent() of the FedAvg run Spawn set up on r with scheduler
// sched. Call it before r.Execute.
func (t *WireTap) Attach(r *actors.Run, sched actors.ID) error {
	// Spawn gives the server the ID after the scheduler's and the agents
	// the consecutive IDs after the server's.
	k := t.Observer.Agent()
	t.Server, t.Agent = sched+1, AgentIDs{First: sched + 2}.ID(k)
	if r.Name(t.Server) != fedavg.ServerName || r.Name(t.Agent) != fedavg.AgentName(k) {
		return fmt.Errorf("a wiretap on agent %d's link: actors %d and %d are %q and %q, not the server and the agent", k, t.Server, t.Agent, r.Name(t.Server), r.Name(t.Agent))
	}
	r.Wiretap(t.id, t.on)
	return nil
}

// on is the link filter: both directions between the server and the agent.
func (t *WireTap) on(from, to actors.ID) bool {
	return from == t.Server && to == t.Agent || from == t.Agent && to == t.Server
}

// Receive implements actors.Behaviour. Other messages on the link (the
// probes of importance sampling and their reports) are not tasks or
// replies, and are not part of what the observer scores.
func (t *WireTap) Receive(ctx *actors.Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.GlobalModel:
		return t.Observer.Sent(ctx.Round(), int(m.GetSlot()), m.GetWeights(), m.GetP())
	case *msg.LocalUpdate:
		return t.Observer.Replied(ctx.Round(), int(m.GetSlot()), m.GetUpdate())
	case *msg.LocalModel:
		return t.Observer.Replied(ctx.Round(), int(m.GetSlot()), m.GetWeights())
	}
	return nil
}
