package fedavg

import (
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/algorithms/fedavg"
)

// This file is the worked example of docs/writing-behaviours.md: a complete
// server behaviour, registered under a name scenario files can use
// (algorithm.fedavg.server: median).

func init() {
	RegisterServer("median", func(p ServerParts) actors.Behaviour { return &medianServer{ServerParts: p} })
}

// medianServer combines the replies of a round by their coordinate-wise
// median instead of their mean (fedavg.Median), so that a minority of agents
// sending outlying models cannot drag the global model away.
type medianServer struct {
	ServerParts
	column []float64 // scratch reused across rounds
}

// Receive implements actors.Behaviour.
func (s *medianServer) Receive(ctx *actors.Context, m proto.Message) error {
	complete, err := s.Handle(ctx, m)
	if err != nil || !complete {
		return err
	}
	s.column = fedavg.Median(s.Core.Model(), s.Core.Replies(), s.Config.Share, s.Config.StepSize, s.column)
	s.EndRound(ctx)
	return nil
}
