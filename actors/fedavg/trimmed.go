package fedavg

import (
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/algorithms/fedavg"
	"maple/internal/params"
)

func init() {
	RegisterServerSpec(params.Spec{
		Name: fedavg.TrimmedMeanRule.String(),
		Doc:  "the coordinate-wise mean of the replies after dropping the fraction trim of smallest and of largest values",
		Params: []params.Param{{
			Name: "trim", Type: params.Float, Default: 0.1, Range: "[0, 0.5)",
			Doc: "fraction of the replies dropped at each end of every coordinate (⌊trim·n⌋ of n)",
		}},
	}, func(p ServerParts) actors.Behaviour { return &trimmedMeanServer{ServerParts: p} })
}

// trimmedMeanServer combines the replies of a round by their coordinate-wise
// trimmed mean (fedavg.TrimmedMean, dropping the fraction Config.Trim at each
// end, which the run sets from the behaviour's trim parameter): robust to a
// minority of outlying agents, like the median, while averaging the rest.
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
