package fedavg

import (
	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// Behaviour slots of the collection policies and the adversaries (package
// internal/params): scenario files select them with algorithm.fedavg.collect
// and algorithm.fedavg.adversary.
const (
	CollectSlot   = "fedavg.collect"
	AdversarySlot = "fedavg.adversary"
)

var reweight = params.Param{Name: "reweight", Type: params.Bool, Default: true,
	Doc: "average over the replies received (true), or count each missing reply as the current model, a zero update (false)"}

var fraction = params.Param{Name: "fraction", Type: params.Float, Default: 0.1, Range: "[0, 1]",
	Doc: "share of the agents that are adversaries, chosen at random per run"}

func init() {
	for _, s := range []params.Spec{
		{Name: "all", Doc: "wait for every reply; a reply that never comes stops the run with an error naming the agents and the round"},
		{Name: "deadline", Doc: "aggregate the replies that arrived by a deadline after the broadcast", Params: []params.Param{
			{Name: "seconds", Type: params.Float, Default: 1.0, Range: "(0, inf)", Doc: "virtual seconds after the broadcast at which the round closes"},
			reweight,
		}},
		{Name: "first-k", Doc: "aggregate the first k replies (sample more agents than that: over-selection)", Params: []params.Param{
			{Name: "k", Type: params.Int, Default: 1, Range: "[1, inf)", Doc: "replies aggregated per round (at most algorithm.fedavg.participants)"},
			{Name: "seconds", Type: params.Float, Default: 0.0, Range: "[0, inf)", Doc: "also close the round this many virtual seconds after the broadcast (0: wait for the k replies)"},
			reweight,
		}},
	} {
		s.Slot = CollectSlot
		params.Register(s)
	}
	for _, s := range []params.Spec{
		{Name: "none", Doc: "every agent is honest"},
		{Name: "sign-flip", Doc: "adversaries send the opposite of their update, scaled: w0 − scale·(w − w0)", Params: []params.Param{
			fraction, {Name: "scale", Type: params.Float, Default: 1.0, Range: "[0, inf)", Doc: "factor of the flipped update"}}},
		{Name: "scaled", Doc: "adversaries send their update multiplied by scale: w0 + scale·(w − w0)", Params: []params.Param{
			fraction, {Name: "scale", Type: params.Float, Default: 10.0, Doc: "factor of the update"}}},
		{Name: "gaussian", Doc: "adversaries add Gaussian noise to their reply", Params: []params.Param{
			fraction, {Name: "std", Type: params.Float, Default: 1.0, Range: "[0, inf)", Doc: "standard deviation per coordinate"}}},
		{Name: "label-flip", Doc: "adversaries train honestly on flipped labels (−y; class c → K−1−c)", Params: []params.Param{fraction}},
		{Name: "free-rider", Doc: "adversaries return the model unchanged without training", Params: []params.Param{fraction}},
	} {
		s.Slot = AdversarySlot
		params.Register(s)
	}
}

// CollectConfig returns the collection policy named kind with parameters p.
func CollectConfig(kind string, p params.Values) (fedavg.Collect, error) {
	w, err := fedavg.ParseWait(kind)
	c := fedavg.Collect{Wait: w, Reweight: p.Bool("reweight")}
	switch w {
	case fedavg.Deadline:
		c.Deadline = p.Float("seconds")
	case fedavg.FirstK:
		c.K, c.Deadline = p.Int("k"), p.Float("seconds")
	}
	return c, err
}

// AttackConfig returns the adversaries named kind with parameters p.
func AttackConfig(kind string, p params.Values) (fedavg.Attack, error) {
	k, err := fedavg.ParseAttack(kind)
	return fedavg.Attack{Kind: k, Fraction: p.Float("fraction"), Scale: p.Float("scale"), Std: p.Float("std")}, err
}
