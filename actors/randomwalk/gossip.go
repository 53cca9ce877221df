package randomwalk

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	rw "maple/algorithms/randomwalk"
)

// GossipNode is the behaviour of a gossip node.
type GossipNode struct {
	// Core is the node's state machine.
	Core *rw.GossipNode
	// Scheduler is the scheduler's ID; node j's ID is First + j.
	Scheduler, First actors.ID
	// Nodes is N.
	Nodes int
	// StepTime is the virtual compute time of one SGD step.
	StepTime float64

	sent   int // bytes of the model sent on waking
	report []float64
}

// Receive implements actors.Behaviour.
func (g *GossipNode) Receive(ctx *actors.Context, m proto.Message) error {
	k := ctx.Round()
	switch m := m.(type) {
	case *msg.Tick:
		if ctx.Sender() != g.Scheduler {
			return fmt.Errorf("a Tick from %s, not the scheduler", ctx.Name(ctx.Sender()))
		}
		peer, send := g.Core.Wake(k)
		body := gossipModel(send, false)
		g.sent = proto.Size(body)
		ctx.Spend(g.StepTime)
		ctx.Send(g.First+actors.ID(peer), body)
	case *msg.GossipModel:
		from := int(ctx.Sender() - g.First)
		if from < 0 || from >= g.Nodes {
			return fmt.Errorf("GossipModel from %s, which is not a node", ctx.Name(ctx.Sender()))
		}
		ctx.Spend(g.StepTime)
		if !m.GetReply() {
			reply, err := g.Core.Answer(k, from, m.GetModel())
			if err != nil {
				return err
			}
			body := gossipModel(reply, true)
			ctx.Send(ctx.Sender(), body)
			g.observe(ctx, KeyGossip, proto.Size(body))
			return nil
		}
		if err := g.Core.Finish(k, from, m.GetModel()); err != nil {
			return err
		}
		g.observe(ctx, KeyGossipActive, g.sent)
		ctx.Send(g.Scheduler, &msg.Done{})
	default:
		return fmt.Errorf("gossip node cannot handle %s", actors.MessageName(m))
	}
	return nil
}

func (g *GossipNode) observe(ctx *actors.Context, key string, bytes int) {
	g.report = append(g.report[:0], float64(bytes))
	g.report = append(g.report, g.Core.Model()...)
	ctx.Observe(key, g.report)
}
