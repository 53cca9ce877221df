package fedavg

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/canary"
)

// The canary clients of an audit of DP-FedAvg (privacy.audit with canary
// client). A canary trains no data: when drawn, it replies with the update
// C·u along its own random unit direction u if it is in, and — if it is
// out — with nothing (the zero update, which DP-FedAvg's fixed denominator
// makes the same as its absence: the add/remove neighbour) or with −C·u
// (the replace-one neighbour, its data replaced by the opposite extreme).
// Both are at the clip, the worst case of the guarantee.
//
//   - one-run (Steinke, Nasr & Jagielski, NeurIPS 2023): about
//     Audit.Canaries of the agents are canaries, each in with probability
//     ½;
//   - many-run: agent 0 is the only canary, in the runs that hold it
//     (Audit.In), along the same direction in every run.
//
// The auditor (families/fedavg) opens the same streams, knows every
// canary's direction, and scores it on the models the server releases.

// StreamCanary is the purpose of each agent's stream that decides whether
// it is a canary, whether it is in and its direction; the auditor opens the
// same streams to know the truth.
const StreamCanary = "canary"

// Audit configures the canary clients of an audit; its zero value has none.
type Audit struct {
	// Canaries is the expected number of canary agents of a one-run
	// audit: each agent is one with probability Canaries/K.
	Canaries int
	// Single makes agent 0 the only canary (a many-run audit), In says
	// whether the run holds it, and Direction is its unit direction u: the
	// same in every run of the audit, as the auditor designs one canary and
	// runs the training with it and without.
	Single, In bool
	Direction  []float64
	// Opposite makes a canary that is out reply −C·u (replace-one) rather
	// than nothing (add/remove).
	Opposite bool
}

// Active reports whether the audit has canaries.
func (a Audit) Active() bool { return a.Canaries > 0 || a.Single }

// Canary is what an agent's StreamCanary stream makes of it.
type Canary struct {
	// Canary reports whether the agent is one, Included whether it is in,
	// and Direction is its unit direction u.
	Canary, Included bool
	Direction        []float64
}

// CanaryOf draws from r, agent's fresh StreamCanary stream, whether the
// agent is a canary and, if it is, whether it is in and its direction,
// uniform on the unit sphere of dimension dim.
func (c *Config) CanaryOf(agent int, r *rand.Rand, dim int) Canary {
	a := c.DP.Audit
	var can Canary
	switch {
	case a.Single:
		if agent != 0 {
			return Canary{}
		}
		return Canary{Canary: true, Included: a.In, Direction: a.Direction}
	case a.Canaries > 0:
		if r.Float64() >= float64(a.Canaries)/float64(c.Agents) {
			return Canary{}
		}
		can = Canary{Canary: true, Included: r.Float64() < 0.5}
	default:
		return Canary{}
	}
	can.Direction = canary.RandomDirection(r, dim)
	return can
}

// canary writes a canary's reply into dst and reports whether the agent is
// one: ψ = C·u/μ if it is in, −C·u/μ or 0 if it is out. It opens the
// agent's StreamCanary stream from its start each time (Streams.Fresh), so
// that every task draws the same canary.
func (a *Agent) canary(dst []float64) bool {
	c := a.cfg.CanaryOf(a.index, a.fresh(StreamCanary), len(dst))
	if !c.Canary {
		return false
	}
	clear(dst)
	scale := a.cfg.DP.Clip / a.cfg.StepSize
	switch {
	case c.Included:
		floats.AddScaled(dst, scale, c.Direction)
	case a.cfg.DP.Audit.Opposite:
		floats.AddScaled(dst, -scale, c.Direction)
	}
	return true
}
