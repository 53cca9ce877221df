package fedavg

import (
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/algorithms/fedavg"
)

func init() {
	RegisterServer(fedavg.TrimmedMeanRule.String(), func(p ServerParts) actors.Behaviour { return &trimmedMeanServer{ServerParts: p} })
}

// trimmedMeanServer combines the replies of a round by their coordinate-wise
// trimmed mean (fedavg.TrimmedMean, dropping the fraction Config.Trim at each
// end): robust to a minority of outlying agents, like the median, while
// averaging the rest.
type trimmedMeanServer struct {
	ServerParts
	column []float64 // scratch reused across rounds
}

// Receive implements actors.Behaviour.
func (s *trimmedMeanServer) Receive(ctx *actors.Context, m proto.Message) error {
	complete, err := s.Handle(ctx, m)
	if err != nil || !complete {
		return err
	}
	s.column = fedavg.TrimmedMean(s.Core.Model(), s.Core.Replies(), s.Config.Share, s.Config.StepSize, s.Config.Trim, s.column)
	s.EndRound(ctx)
	return nil
}
