package randomwalk

import (
	"fmt"
	"math/rand/v2"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	rw "maple/algorithms/randomwalk"
)

// WalkScheduler runs the set-up exchange, then starts every walk at a node
// drawn uniformly from the walk's stream, and ends the run when every walk
// has ended.
type WalkScheduler struct {
	// Nodes are the node IDs, node j at Nodes[j].
	Nodes []actors.ID
	// Walks is the number of walks.
	Walks int

	ready, ended int
}

// Receive implements actors.Behaviour.
func (s *WalkScheduler) Receive(ctx *actors.Context, m proto.Message) error {
	switch m.(type) {
	case *msg.Start:
		ctx.SetRound(0)
		for _, id := range s.Nodes {
			ctx.Send(id, &msg.Tick{})
		}
	case *msg.Done:
		if s.ready < len(s.Nodes) {
			if s.ready++; s.ready == len(s.Nodes) {
				ctx.SetRound(0)
				for w := range s.Walks {
					start := rw.StartNode(ctx.Rand(rw.WalkPurpose(w)), len(s.Nodes))
					ctx.Send(s.Nodes[start], &msg.WalkStart{Walk: int32(w)})
				}
			}
			return nil
		}
		if s.ended++; s.ended == s.Walks {
			ctx.Finish()
		}
	default:
		return fmt.Errorf("scheduler cannot handle %s", actors.MessageName(m))
	}
	return nil
}

// GossipScheduler wakes one node per iteration, drawn uniformly from its
// gossip stream, and opens the next iteration when that node is done.
type GossipScheduler struct {
	// Nodes are the node IDs, node j at Nodes[j].
	Nodes []actors.ID
	// Iterations is the number of iterations.
	Iterations int

	round, active int
	next          *rand.Rand
}

// Receive implements actors.Behaviour.
func (s *GossipScheduler) Receive(ctx *actors.Context, m proto.Message) error {
	switch m.(type) {
	case *msg.Start:
		s.next = ctx.Rand(rw.GossipPurpose)
	case *msg.Done:
		if s.round == 0 || ctx.Round() != s.round || ctx.Sender() != s.Nodes[s.active] {
			return fmt.Errorf("a Done for round %d from %s while node/%d's iteration %d is open", ctx.Round(), ctx.Name(ctx.Sender()), s.active, s.round)
		}
		if s.round == s.Iterations {
			ctx.Finish()
			return nil
		}
	default:
		return fmt.Errorf("scheduler cannot handle %s", actors.MessageName(m))
	}
	s.round++
	s.active = rw.StartNode(s.next, len(s.Nodes))
	ctx.SetRound(s.round)
	ctx.Send(s.Nodes[s.active], &msg.Tick{})
	return nil
}
