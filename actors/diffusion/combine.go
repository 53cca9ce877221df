package diffusion

import (
	"math"

	"maple/algorithms/diffusion"
	"maple/internal/params"
)

// CombineSlot is the behaviour slot of the receivers' combination step
// (package internal/params): scenario files select one with
// algorithm.diffusion.combine.
const CombineSlot = "diffusion.combine"

// Combiners is the registry of combination steps: each is registered as the
// struct of its parameters at their defaults, which implements
// diffusion.Combiner; the run's diffusion.Config carries the one a scenario
// chose, with its values, and the agents of both engines combine with it.
var Combiners = params.Registry[diffusion.Combiner]{Slot: CombineSlot}

func init() {
	Combiners.Register("linear", "the papers' combination Σ_m a_mp x_m", diffusion.Linear{})
	Combiners.Register("clipped-gossip", "ClippedGossip (He, Karimireddy and Jaggi 2022): x_p + Σ_m a_mp clip(x_m − x_p, tau), robust to Byzantine neighbours", clippedGossip{Tau: 1})
}

// clippedGossip is ClippedGossip's parameters and combination step (He,
// Karimireddy and Jaggi, "Byzantine-robust decentralized learning via
// ClippedGossip", 2022): each neighbour's difference from the receiver's
// own value is clipped to ℓ2 norm τ before it is weighted in,
//
//	z = Σ_m a_mp (x_p + clip(x_m − x_p, τ)),  clip(v, τ) = v·min(1, τ/‖v‖),
//
// so that a Byzantine neighbour moves the receiver by at most a_mp·τ. With τ
// beyond every difference it is the linear combination.
type clippedGossip struct {
	Tau float64 `yaml:"tau" range:"(0, inf)" doc:"clipping radius τ of each neighbour's difference x_m − x_p"`
}

// Combine implements diffusion.Combiner. The difference is not stored: its
// norm is computed first, then it is added scaled, so that a combination
// allocates nothing.
func (c clippedGossip) Combine(z []float64, terms []diffusion.Term) {
	var self []float64
	var total float64
	for _, t := range terms {
		total += t.Weight
		if t.Self {
			self = t.X
		}
	}
	for j := range z {
		z[j] = total * self[j]
	}
	for _, t := range terms {
		if t.Self {
			continue
		}
		var sq float64
		for j, x := range t.X {
			d := x - self[j]
			sq += d * d
		}
		scale := t.Weight
		if norm := math.Sqrt(sq); norm > c.Tau {
			scale *= c.Tau / norm
		}
		for j, x := range t.X {
			z[j] += scale * (x - self[j])
		}
	}
}
