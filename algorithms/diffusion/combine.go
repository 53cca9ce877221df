package diffusion

import "gonum.org/v1/gonum/floats"

// Combiner is a receiver's combination step, a behaviour users can plug in
// (actors/diffusion registers them): it sets z to the stage's aggregate
// from the terms of the receiver's column — each sender's weight a_mp and
// the value x_m it received, the receiver's own value for m = p (Self), in
// ascending m, only the senders live in the round. The papers' step, and
// that of a Config whose Combine is nil, is Linear. The agents, the
// reference and the asynchronous agents all combine through Config.Combine,
// so both engines run the same step. A Combiner is a value: it keeps no
// state between calls. Graph-homomorphic and local graph-homomorphic noise
// cancel only in the linear combination, so Config.Validate refuses any
// other Combiner with them. Combine must not modify terms: an agent builds
// them once and passes the same slice every iteration.
type Combiner interface {
	Combine(z []float64, terms []Term)
}

// Term is one term of a receiver's combination.
type Term struct {
	Weight float64
	X      []float64
	Self   bool
}

// Linear is the combination of the papers, z = Σ_m a_mp x_m, summed in
// ascending m.
type Linear struct{}

// Combine implements Combiner.
func (Linear) Combine(z []float64, terms []Term) {
	clear(z)
	for _, t := range terms {
		floats.AddScaled(z, t.Weight, t.X)
	}
}

// linear reports whether the configuration combines linearly.
func (c *Config) linear() bool { return c.Combine == nil || c.Combine == Combiner(Linear{}) }

// combiner returns the configuration's combination step.
func (c *Config) combiner() Combiner {
	if c.Combine == nil {
		return Linear{}
	}
	return c.Combine
}
