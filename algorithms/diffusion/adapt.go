package diffusion

import "gonum.org/v1/gonum/floats"

// Adapter is an agent's adaptation step, a behaviour users can plug in
// (actors/diffusion registers them under the slot diffusion.adapt): from
// the value z that stage 0's combination left (Σ_m a_0,mp φ_m, or φ_p when
// A0 = I) and the gradient g = ∇̂J_p(φ_p) that the configuration's oracle
// took at the agent's own, noise-free φ_p, it sets z to ψ_p. The papers'
// step, and that of a Config whose Adapt is nil, is SGD: ψ_p = z − μg.
//
// An Adapter is a value of its parameters: what it remembers between
// iterations lives in the AdaptState it is handed, of which every agent has
// its own, fresh in each run — the agents of the actor engine, each agent
// of the reference, the asynchronous agents and each agent the audit
// replays — so that a step with memory runs alike on both engines. Adapt
// may overwrite g, the agent's scratch; an agent that is down in a round
// does not adapt, and its state waits for its next iteration.
type Adapter interface {
	Adapt(z, g []float64, mu float64, s *AdaptState)
}

// AdaptState is what one agent's adaptation step keeps between iterations:
// vectors of the model's dimension, zero when the run starts. A step that
// keeps nothing never asks for one, and the state then holds no memory.
type AdaptState struct {
	dim  int
	vecs [][]float64
}

// NewAdaptState returns the fresh state of an agent whose model has
// dimension dim: what the engines give each agent, and what a test of a
// step gives it.
func NewAdaptState(dim int) AdaptState { return AdaptState{dim: dim} }

// Vector returns the agent's k-th state vector (k = 0, 1, …), zero until
// the step writes it; the step owns its contents across iterations.
func (s *AdaptState) Vector(k int) []float64 {
	for len(s.vecs) <= k {
		s.vecs = append(s.vecs, make([]float64, s.dim))
	}
	return s.vecs[k]
}

// SGD is the adaptation step of the papers (paper 001 eq. 22, thesis eq.
// 1.39): ψ_p = z − μ∇̂J_p(φ_p). It keeps no state.
type SGD struct{}

// Adapt implements Adapter.
func (SGD) Adapt(z, g []float64, mu float64, _ *AdaptState) {
	floats.AddScaled(z, -mu, g)
}

// adapter returns the configuration's adaptation step.
func (c *Config) adapter() Adapter {
	if c.Adapt == nil {
		return SGD{}
	}
	return c.Adapt
}
