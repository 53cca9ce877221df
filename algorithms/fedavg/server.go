package fedavg

import (
	"fmt"
	"math/rand/v2"

	"maple/algorithms/sampling"
)

// Server is the server's state machine: the global model and the round in
// progress. Begin samples the round's draws, Accept collects one reply per
// draw, and Combine applies eq. 1.31 (or its update-sharing form).
type Server struct {
	cfg     *Config
	model   []float64
	draws   []int       // agent of each slot, ascending
	replies [][]float64 // reply of each slot, nil until it arrives
	pending int
	rand    *rand.Rand
}

// NewServer returns a server holding a copy of w0 that draws participants
// from the stream r (the server's "participation" stream).
func NewServer(cfg *Config, w0 []float64, r *rand.Rand) *Server {
	n := cfg.Draws()
	return &Server{
		cfg:     cfg,
		model:   append([]float64(nil), w0...),
		draws:   make([]int, n),
		replies: make([][]float64, n),
		rand:    r,
	}
}

// Model returns the current global model. It is overwritten by Combine; copy
// it before sending it.
func (s *Server) Model() []float64 { return s.model }

// Begin samples the agents of a new round and returns them, one per slot in
// ascending order (an agent appears once per draw). The slice is reused.
func (s *Server) Begin() []int {
	switch s.cfg.Participation {
	case Full:
		for k := range s.draws {
			s.draws[k] = k
		}
	case WithReplacement:
		sampling.WithReplacement(s.draws, s.cfg.Agents, s.rand)
	default:
		sampling.WithoutReplacement(s.draws, s.cfg.Agents, s.rand)
	}
	clear(s.replies)
	s.pending = len(s.draws)
	return s.draws
}

// Accept records agent's reply v for slot. It returns true when every slot
// has its reply, and an error for a reply nobody asked for.
func (s *Server) Accept(slot, agent int, v []float64) (complete bool, err error) {
	switch {
	case slot < 0 || slot >= len(s.draws) || s.draws[slot] != agent:
		return false, fmt.Errorf("reply for slot %d from agent %d, which was not drawn for it", slot, agent)
	case s.replies[slot] != nil:
		return false, fmt.Errorf("second reply for slot %d from agent %d", slot, agent)
	case len(v) != len(s.model):
		return false, fmt.Errorf("reply of dimension %d from agent %d, model has %d", len(v), agent, len(s.model))
	}
	s.replies[slot] = v
	s.pending--
	return s.pending == 0, nil
}

// Replies returns the replies of the round in slot order (ascending agent),
// the order in which they are combined. Valid after Accept reports complete.
func (s *Server) Replies() [][]float64 { return s.replies }

// Combine updates the model from the round's replies: their mean (model
// sharing) or w ← w − μ·mean (update sharing). Replies are summed in slot
// order, never in arrival order.
func (s *Server) Combine() {
	Mean(s.model, s.replies, s.cfg.Share, s.cfg.StepSize)
}
