package fedavg

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"
)

// The one-run audit of DP-FedAvg (Steinke, Nasr & Jagielski, "Privacy
// auditing with one (1) training run", NeurIPS 2023): about DP.Canaries of
// the agents are canaries, each included in the training with probability
// ½. A canary does not train: when drawn, it replies with the update C·u
// along its own random unit direction u if it is included, and with the
// zero update — which, with DP-FedAvg's fixed denominator, is the same as
// being absent — if it is not. An auditor who sees only the released
// models scores each canary by how far the models moved along its
// direction, guesses which were included, and turns the right guesses into
// a lower bound on ε (package privacy/onerun).

// StreamCanary is the purpose of each agent's stream that decides whether
// it is a canary, whether it is included and its direction; the auditor
// opens the same streams to know the truth.
const StreamCanary = "canary"

// Canary is what an agent's StreamCanary stream makes of it.
type Canary struct {
	// Canary reports whether the agent is one, Included whether it takes
	// part in the training, and Direction is its unit direction u.
	Canary, Included bool
	Direction        []float64
}

// CanaryOf draws from r, an agent's fresh StreamCanary stream, whether the
// agent is a canary (probability Canaries/K) and, if it is, whether it is
// included (probability ½) and its direction, uniform on the unit sphere
// of dimension dim.
func (c *Config) CanaryOf(r *rand.Rand, dim int) Canary {
	if r.Float64() >= float64(c.DP.Canaries)/float64(c.Agents) {
		return Canary{}
	}
	can := Canary{Canary: true, Included: r.Float64() < 0.5, Direction: make([]float64, dim)}
	for j := range can.Direction {
		can.Direction[j] = r.NormFloat64()
	}
	floats.Scale(1/floats.Norm(can.Direction, 2), can.Direction)
	return can
}

// canary writes a canary's reply into dst and reports whether the agent is
// one: ψ = C·u/μ if it is included, 0 otherwise. It opens the agent's
// StreamCanary stream from its start each time (Streams.Fresh), so that
// every task draws the same canary.
func (a *Agent) canary(dst []float64) bool {
	c := a.cfg.CanaryOf(a.fresh(StreamCanary), len(dst))
	if !c.Canary {
		return false
	}
	clear(dst)
	if c.Included {
		floats.AddScaled(dst, a.cfg.DP.Clip/a.cfg.StepSize, c.Direction)
	}
	return true
}
