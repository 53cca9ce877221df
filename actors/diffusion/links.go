package diffusion

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
)

// KeyLinks is the observation key under which the scheduler of a
// time-varying graph reports each round's live graph: [connected (0 or 1),
// live edges, edges, agents down].
const KeyLinks = "links"

// linkScheduler drives a run on a time-varying graph: it is actors.Scheduler,
// except that it opens each round by drawing the live graph and sending each
// agent its DiffusionLinks (which replaces Tick).
type linkScheduler struct {
	process *diffusion.LinkProcess
	net     *diffusion.Network
	agents  []actors.ID
	rounds  int

	round   int
	pending int
	done    []bool
	live    diffusion.Live
}

// Receive implements actors.Behaviour.
func (s *linkScheduler) Receive(ctx *actors.Context, m proto.Message) error {
	switch m.(type) {
	case *msg.Start:
		if s.round != 0 {
			return fmt.Errorf("second Start message")
		}
		s.open(ctx, 1)
	case *msg.Done:
		k := int(ctx.Sender() - s.agents[0])
		switch {
		case ctx.Round() != s.round:
			return fmt.Errorf("received Done for round %d from %s while round %d is open", ctx.Round(), ctx.Name(ctx.Sender()), s.round)
		case k < 0 || k >= len(s.done) || s.done[k]:
			return fmt.Errorf("unexpected Done for round %d from %s", s.round, ctx.Name(ctx.Sender()))
		}
		s.done[k] = true
		if s.pending--; s.pending > 0 {
			return nil
		}
		if s.round == s.rounds {
			ctx.Finish()
			return nil
		}
		s.open(ctx, s.round+1)
	default:
		return fmt.Errorf("scheduler cannot handle %T", m)
	}
	return nil
}

func (s *linkScheduler) open(ctx *actors.Context, round int) {
	s.round, s.pending = round, len(s.agents)
	s.done = make([]bool, len(s.agents))
	ctx.SetRound(round)
	lr := s.process.Next(round)
	ctx.Observe(KeyLinks, lr.Facts())
	for p, id := range s.agents {
		lr.View(s.net, p, &s.live)
		ctx.Send(id, &msg.DiffusionLinks{
			Down: s.live.Down, Self: s.live.Self,
			Senders: append([]bool(nil), s.live.Senders...), Weights: append([]float64(nil), s.live.Weights...),
			Receivers: append([]bool(nil), s.live.Receivers...), Given: append([]float64(nil), s.live.Given...),
		})
	}
}
