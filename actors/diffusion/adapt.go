package diffusion

import (
	"maple/algorithms/diffusion"
	"maple/internal/params"
)

// AdaptSlot is the behaviour slot of the agents' adaptation step (package
// internal/params): scenario files select one with
// algorithm.diffusion.adapt.
const AdaptSlot = "diffusion.adapt"

// Adapters is the registry of adaptation steps: each is registered as the
// struct of its parameters at their defaults, which implements
// diffusion.Adapter; the run's diffusion.Config carries the one a scenario
// chose, with its values, and the agents of both engines adapt with it,
// each with its own memory (diffusion.AdaptState).
var Adapters = params.Registry[diffusion.Adapter]{Slot: AdaptSlot}

func init() {
	Adapters.Register("sgd", "the papers' step ψ = z − μ∇̂J_p(φ_p)", diffusion.SGD{})
	Adapters.Register("momentum", "the heavy ball (Polyak 1964) with each agent's own velocity: v_p ← beta·v_p + ∇̂J_p(φ_p), ψ = z − μ·v_p", momentum{Beta: 0.5})
}

// momentum is the heavy-ball adaptation step (Polyak 1964) with a velocity
// of every agent's own, kept between iterations:
//
//	v_p ← β·v_p + ∇̂J_p(φ_p),  ψ_p = z − μ·v_p,
//
// v_p starting at 0 in each run. For small steps it behaves as the plain
// step with μ/(1 − β) (Yuan, Ying and Sayed, "On the influence of momentum
// acceleration on online learning", JMLR 2016), and with full gradients its
// fixed point is exactly that step's: there v_p = ∇J_p/(1 − β). With β = 0
// it is SGD.
type momentum struct {
	Beta float64 `yaml:"beta" range:"[0, 1)" doc:"momentum β: the share of the last velocity kept (0: the papers' step)"`
}

// Adapt implements diffusion.Adapter; the agent's velocity is its state
// vector 0.
func (m momentum) Adapt(z, g []float64, mu float64, s *diffusion.AdaptState) {
	v := s.Vector(0)
	for j := range z {
		v[j] = m.Beta*v[j] + g[j]
		z[j] -= mu * v[j]
	}
}
