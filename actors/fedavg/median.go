package fedavg

import (
	"slices"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/algorithms/fedavg"
)

func init() {
	RegisterServer("median", func(p ServerParts) actors.Behaviour { return &medianServer{ServerParts: p} })
}

// medianServer combines the replies of a round by their coordinate-wise
// median instead of their mean, a classical defence against agents that send
// outlying models. With shared updates it applies w ← w − μ·median(ψ).
type medianServer struct {
	ServerParts
	column []float64 // scratch: one coordinate of every reply
}

// Receive implements actors.Behaviour.
func (s *medianServer) Receive(ctx *actors.Context, m proto.Message) error {
	complete, err := s.Handle(ctx, m)
	if err != nil || !complete {
		return err
	}
	replies, model := s.Core.Replies(), s.Core.Model()
	for j := range model {
		s.column = s.column[:0]
		for _, r := range replies {
			s.column = append(s.column, r[j])
		}
		med := median(s.column)
		if s.Config.Share == fedavg.Updates {
			model[j] -= s.Config.StepSize * med
		} else {
			model[j] = med
		}
	}
	s.EndRound(ctx)
	return nil
}

// median returns the median of xs (the mean of the two middle values when
// len(xs) is even), sorting xs in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
