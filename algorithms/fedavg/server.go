package fedavg

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"maple/algorithms/sampling"
)

// Server is the server's state machine: the global model and the round in
// progress. Begin samples the round's draws, Accept collects one reply per
// draw, and Combine applies eq. 1.31 (or its update-sharing form).
//
// Under importance sampling of agents the server also holds the agents'
// probabilities p_k. The Optimal and Adaptive policies first probe every
// agent (Probe, AcceptReport) — once at w^o, or every round at w_{i−1} — and
// the Partial policy rewrites the participants' entries from what they
// report with their replies (Adapt, after the round).
type Server struct {
	cfg       *Config
	rule      Rule // this server's own (Config.newRule)
	model     []float64
	draws     []int       // agent of each slot, ascending
	replies   [][]float64 // reply of each slot, nil until it arrives
	sides     [][]float64 // side vector of each slot's reply (SideRule), nil until it arrives
	sideDone  [][]float64 // the sides of the replies combined by a round closed early
	pending   int
	rand      *rand.Rand
	collected [][]float64 // the replies combined by a round closed early
	closed    bool        // the round was closed early: collected holds them
	pad       []float64   // the no-op reply standing for a missing one
	decoded   [][]float64 // the decoded compressed reply of each slot (AcceptCompressed)

	// Importance sampling of agents (nil probs: uniform).
	probs   []float64 // p_k
	q       []float64 // normalized probability of each slot's agent
	reports []Report  // probe reports by agent, then slot reports
	seen    []bool    // which agents have reported in the current probe
	weights []float64 // c_k, scratch
	drawer  *drawer
	probed  bool // the Optimal policy's single probe is done

	priv *privateServer // central DP (dp.go), nil otherwise
}

// NewServer returns a server holding a copy of w0 that draws participants
// from the stream r (the server's "participation" stream).
func NewServer(cfg *Config, w0 []float64, r *rand.Rand) *Server {
	n := cfg.Draws()
	if cfg.Participation == Poisson {
		n = 0 // each round's own, grown as needed
	}
	s := &Server{
		cfg:     cfg,
		rule:    cfg.newRule(len(w0)),
		model:   append([]float64(nil), w0...),
		draws:   make([]int, n),
		replies: make([][]float64, n),
		rand:    r,
	}
	if _, ok := s.rule.(SideRule); ok {
		s.sides = make([][]float64, n)
	}
	imp := &cfg.Importance
	if imp.Agents != Uniform {
		s.probs = make([]float64, cfg.Agents)
		s.q = make([]float64, n)
		s.drawer = newDrawer(cfg.Agents, n, cfg.Participation == WithReplacement, imp.RandomOrder)
		s.reports = make([]Report, max(cfg.Agents, n))
		s.weights = make([]float64, max(cfg.Agents, n))
		if imp.Agents == Fixed {
			copy(s.probs, imp.Probabilities)
		} else {
			sampling.Uniform(s.probs)
		}
		s.seen = make([]bool, cfg.Agents)
	}
	return s
}

// Model returns the current global model. It is overwritten by Combine; copy
// it before sending it.
func (s *Server) Model() []float64 { return s.model }

// Probe reports whether the round about to start begins by asking every
// agent for its gradient noise, and at which model: w^o once for the Optimal
// agent policy, the current model every round for the Adaptive one. The
// round then waits for one AcceptReport per agent before Begin.
func (s *Server) Probe() (model []float64, ok bool) {
	switch s.cfg.Importance.Agents {
	case Optimal:
		if !s.probed {
			s.probed = true
			s.pending = s.cfg.Agents
			clear(s.seen)
			return s.cfg.Importance.Optimum, true
		}
	case Adaptive:
		s.pending = s.cfg.Agents
		clear(s.seen)
		return s.model, true
	}
	return nil, false
}

// AcceptReport records agent's answer to a probe. When every agent has
// answered it sets p_k ∝ c_k (eqs. 2.48, 2.51) and returns true: the round
// can Begin.
func (s *Server) AcceptReport(agent int, r Report) (complete bool, err error) {
	switch {
	case s.seen == nil || agent < 0 || agent >= len(s.seen):
		return false, fmt.Errorf("probe report from agent %d, which was not probed", agent)
	case s.seen[agent]:
		return false, fmt.Errorf("second probe report from agent %d", agent)
	}
	s.seen[agent] = true
	s.reports[agent] = r
	if s.pending--; s.pending > 0 {
		return false, nil
	}
	w := s.weights[:s.cfg.Agents]
	for k := range w {
		w[k] = s.reports[k].Weight()
	}
	sampling.Proportional(s.probs, w)
	return true, nil
}

// Begin samples the agents of a new round and returns them, one per slot in
// ascending order (an agent appears once per draw): Draws() of them, or
// under Poisson participation a Binomial(K, q) number, possibly none. The
// slice is reused. It
// is Draw for configurations without importance sampling of agents, for
// which sampling cannot fail; it panics if Draw fails.
func (s *Server) Begin() []int {
	draws, err := s.Draw()
	if err != nil {
		panic("fedavg: Begin with an importance-sampling policy that failed: " + err.Error())
	}
	return draws
}

// Draw is Begin under any policy: it fails only when importance sampling
// without replacement is impossible, fewer agents having a positive
// probability than the round has participants.
func (s *Server) Draw() ([]int, error) {
	switch {
	case s.cfg.Participation == Full:
		for k := range s.draws {
			s.draws[k] = k
		}
	case s.probs != nil:
		if err := s.drawer.draw(s.draws, s.q, s.probs, s.rand); err != nil {
			return nil, fmt.Errorf("sampling %d agents: %w", len(s.draws), err)
		}
	case s.cfg.Participation == WithReplacement:
		sampling.WithReplacement(s.draws, s.cfg.Agents, s.rand)
	case s.cfg.Participation == Poisson:
		s.draws = PoissonSample(s.draws, s.cfg.Agents, s.cfg.Rate(), s.rand)
		s.replies = slices.Grow(s.replies[:0], len(s.draws))[:len(s.draws)]
		if s.sides != nil {
			s.sides = slices.Grow(s.sides[:0], len(s.draws))[:len(s.draws)]
		}
	default:
		sampling.WithoutReplacement(s.draws, s.cfg.Agents, s.rand)
	}
	clear(s.replies)
	clear(s.sides)
	s.pending = len(s.draws)
	s.closed = false
	return s.draws, nil
}

// Probability returns the normalized probability p_k the agent of slot was
// drawn with, which the server sends it for the 1/(K p_k) of eq. 2.10: its
// normalized inclusion probability (its sampling probability when drawing
// with replacement). It is 0 under uniform sampling of agents, where
// K·p_k = 1 and agents do not rescale.
func (s *Server) Probability(slot int) float64 {
	if s.probs == nil {
		return 0
	}
	return s.q[slot]
}

// Accept records agent's reply v for slot. It returns true when every slot
// has its reply, and an error for a reply nobody asked for.
func (s *Server) Accept(slot, agent int, v []float64) (complete bool, err error) {
	return s.AcceptReported(slot, agent, v, Report{})
}

// AcceptReported is Accept for a reply that carries the agent's gradient
// noise report, which the Partial agent policy adapts p_k from.
func (s *Server) AcceptReported(slot, agent int, v []float64, r Report) (complete bool, err error) {
	return s.AcceptReply(slot, agent, v, nil, r)
}

// Side returns the vector the server's rule sends every participant of the
// round besides the model (a Broadcaster's), nil for other rules. It is
// read-only, and valid until Combine.
func (s *Server) Side() []float64 {
	if b, ok := s.rule.(Broadcaster); ok {
		return b.Broadcast()
	}
	return nil
}

// AcceptReply is AcceptReported for a reply that also carries a side vector
// (Local.ToServer), which a SideRule combines with it; side is ignored by
// other rules, and nil when the client wrote none (an adversary that does
// not train).
func (s *Server) AcceptReply(slot, agent int, v, side []float64, r Report) (complete bool, err error) {
	switch {
	case slot < 0 || slot >= len(s.draws) || s.draws[slot] != agent:
		return false, fmt.Errorf("reply for slot %d from agent %d, which was not drawn for it", slot, agent)
	case s.replies[slot] != nil:
		return false, fmt.Errorf("second reply for slot %d from agent %d", slot, agent)
	case len(v) != len(s.model):
		return false, fmt.Errorf("reply of dimension %d from agent %d, model has %d", len(v), agent, len(s.model))
	}
	s.replies[slot] = v
	if s.sides != nil {
		s.sides[slot] = side
	}
	if s.cfg.Importance.Agents == Partial {
		s.reports[slot] = r
	}
	s.pending--
	return s.pending == 0, nil
}

// Replies returns the replies of the round in slot order (ascending agent),
// the order in which they are combined. Valid after Accept reports complete,
// or after Close.
func (s *Server) Replies() [][]float64 {
	if s.closed {
		return s.collected
	}
	return s.replies
}

// Received returns the number of replies of the round so far.
func (s *Server) Received() int { return len(s.draws) - s.pending }

// Missing returns the agents (one per slot, ascending) whose replies have
// not arrived.
func (s *Server) Missing() []int {
	var missing []int
	for slot, r := range s.replies {
		if r == nil {
			missing = append(missing, s.draws[slot])
		}
	}
	return missing
}

// Filled reports whether slot, drawn for agent, already has its reply: a
// second copy of it, which the caller ignores.
func (s *Server) Filled(slot, agent int) bool {
	return slot >= 0 && slot < len(s.replies) && s.draws[slot] == agent && s.replies[slot] != nil
}

// Close ends a round before every reply has arrived (a deadline, the first K
// of an over-selected round): Replies then holds the replies received, in
// slot order, and, unless the policy re-weights, the current model (model
// sharing) or the zero update (update sharing) for each missing one, so that
// the aggregate keeps the weights of the full round. It returns the number
// of replies received; with none, Combine leaves the model unchanged.
func (s *Server) Close() int {
	s.collected, s.sideDone, s.closed = s.collected[:0], s.sideDone[:0], true
	pad := !s.cfg.Collection().Reweight() && s.pending > 0 && s.pending < len(s.draws)
	if pad {
		s.pad = append(s.pad[:0], s.model...)
		if s.cfg.Share == Updates {
			clear(s.pad)
		}
	}
	for slot, r := range s.replies {
		switch {
		case r != nil:
			s.collected = append(s.collected, r)
			if s.sides != nil {
				s.sideDone = append(s.sideDone, s.sides[slot])
			}
		case pad:
			s.collected = append(s.collected, s.pad)
			if s.sides != nil {
				s.sideDone = append(s.sideDone, nil)
			}
		}
	}
	return s.Received()
}

// Combine updates the model from the round's replies with the
// configuration's rule (Config.Rule, the mean of eq. 1.31 by default):
// their combination (model sharing) or w ← w − μ·combination (update
// sharing). Replies are combined in slot order, never in arrival order. A
// round closed without any reply leaves the model unchanged. Under central
// DP it is DP-FedAvg's noisy step instead (combineDP).
func (s *Server) Combine() {
	if s.cfg.DP.Mode == CentralDP {
		s.combineDP() // dp.go
		return
	}
	if sr, ok := s.rule.(SideRule); ok {
		sides := s.sides
		if s.closed {
			sides = s.sideDone
		}
		sr.CombineSides(s.model, s.Replies(), sides, s.cfg.Share, s.cfg.StepSize)
		return
	}
	s.rule.Combine(s.model, s.Replies(), s.cfg.Share, s.cfg.StepSize)
}

// Adapt ends a round of the Partial agent policy (eq. 2.53): the
// participants' probabilities are rewritten in proportion to the c_k they
// reported, keeping their total; an agent drawn twice counts with its first
// slot's report. Under other policies it does nothing.
func (s *Server) Adapt() {
	if s.cfg.Importance.Agents != Partial {
		return
	}
	w := s.weights[:len(s.draws)]
	for slot := range w {
		w[slot] = s.reports[slot].Weight()
	}
	sampling.PartialUpdate(s.probs, s.draws, w)
}
