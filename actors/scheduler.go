package actors

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"maple/actors/msg"
)

// Scheduler is the behaviour that drives a run round by round. On Start it
// opens round 1 by sending Tick to every target; when every target has
// answered Done for the round it opens the next one, and after round Rounds it
// finishes the run. It is the synchronous barrier of the papers' algorithms:
// the FedAvg scheduler targets the server, the decentralized one every agent.
type Scheduler struct {
	// Targets are the actors that receive Tick and answer Done.
	Targets []ID
	// Rounds is the number of rounds to run.
	Rounds int

	round   int
	pending int
	state   []targetState // by actor ID
	tick    msg.Tick      // the round's Tick, sent to every target: empty, immutable
}

// Receive implements Behaviour.
func (s *Scheduler) Receive(ctx *Context, m proto.Message) error {
	switch m.(type) {
	case *msg.Start:
		if s.round != 0 {
			return fmt.Errorf("second Start message")
		}
		s.open(ctx, 1)
	case *msg.Done:
		if ctx.Round() != s.round {
			return fmt.Errorf("received Done for round %d from %s while round %d is open", ctx.Round(), ctx.Name(ctx.Sender()), s.round)
		}
		from := ctx.Sender()
		switch {
		case from < 0 || int(from) >= len(s.state) || s.state[from] == notTarget:
			return fmt.Errorf("a Done for round %d from %s, which is not a target", s.round, ctx.Name(from))
		case s.state[from] == answered:
			return fmt.Errorf("second Done for round %d from %s", s.round, ctx.Name(from))
		}
		s.state[from] = answered
		if s.pending--; s.pending > 0 {
			return nil
		}
		if s.round == s.Rounds {
			ctx.Finish()
			return nil
		}
		s.open(ctx, s.round+1)
	default:
		return fmt.Errorf("scheduler cannot handle %s", MessageName(m))
	}
	return nil
}

func (s *Scheduler) open(ctx *Context, round int) {
	s.round = round
	s.pending = len(s.Targets)
	if s.state == nil && len(s.Targets) > 0 {
		s.state = make([]targetState, slices.Max(s.Targets)+1)
	}
	for _, t := range s.Targets {
		s.state[t] = unanswered
	}
	ctx.SetRound(round)
	for _, t := range s.Targets {
		ctx.Send(t, &s.tick)
	}
}

// targetState is where an actor stands in the scheduler's round.
type targetState uint8

const (
	notTarget  targetState = iota // not one of the scheduler's targets
	unanswered                    // a target that has not answered the round
	answered                      // a target that answered Done
)
