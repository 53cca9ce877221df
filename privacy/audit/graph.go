package audit

import "math"

// GraphNoise is what a victim adds to the messages it sends its receivers in
// a combination over a graph — diffusion's agents, graph federated
// learning's servers —, as GraphModel reads a family's privacy scheme.
type GraphNoise int

const (
	// Clear messages carry the victim's value without noise.
	Clear GraphNoise = iota
	// PerLink messages carry independent draws of GraphExchange.Law, one
	// per link (random perturbations).
	PerLink
	// Broadcast messages carry one draw of Law, the same on every link and
	// not compensated anywhere: the view reads it on the first link.
	Broadcast
	// Multiples messages carry one draw of Law times a coefficient per link
	// (GraphExchange.Coefficient; graph-homomorphic noise).
	Multiples
	// PairMasks messages carry pairwise masks that cancel in each
	// receiver's combination (local graph-homomorphic noise): on the link
	// to a receiver that can mask (GraphExchange.Maskable), a sum of masks
	// of law GraphExchange.Mask(r).
	PairMasks
)

// GraphExchange is one exchange of a victim on a graph, as its family's
// auditor sees it: the noise its scheme adds, the view, and the victim's
// receivers with what the noise is on each link.
type GraphExchange struct {
	Noise GraphNoise
	View  View
	// Receivers are the victim's receivers, in the order of the model's
	// links.
	Receivers []int
	// Law is the law of one draw (PerLink, Broadcast, Multiples).
	Law Noise
	// Coefficient returns the coefficient of the draw on the link to
	// receiver r (Multiples).
	Coefficient func(r int) float64
	// Maskable reports whether receiver r can mask; the victim sends one
	// that cannot its value in the clear (PairMasks).
	Maskable func(r int) bool
	// Mask returns the law of the masks on the link to receiver r, which
	// can mask (PairMasks, wire view).
	Mask func(r int) Noise
}

// GraphModel returns the model of exchange e: the value in the clear
// without noise or on a link whose receiver cannot mask, one law per link
// under per-link noise, one draw read on the first link under broadcast
// noise, multiples of one draw (MultiplesModel, which two different
// coefficients reveal the value by), and pairwise masks of their own law
// per link under the wire view or, under the network view, the value a
// receiver's combination reveals, through the auditor's replay.
func GraphModel(e GraphExchange) Model {
	switch e.Noise {
	case PerLink:
		laws := make([]Noise, len(e.Receivers))
		for k := range laws {
			laws[k] = e.Law
		}
		return IndependentModel(laws)
	case Broadcast:
		return IndependentModel([]Noise{e.Law})
	case Multiples:
		coef := make([]float64, len(e.Receivers))
		for k, r := range e.Receivers {
			coef[k] = e.Coefficient(r)
		}
		return MultiplesModel(e.Law, coef)
	case PairMasks:
		for k, r := range e.Receivers {
			if !e.Maskable(r) {
				return PlainModel(k)
			}
		}
		if e.View == NetworkView {
			return ReplayedModel()
		}
		laws := make([]Noise, len(e.Receivers))
		for k, r := range e.Receivers {
			laws[k] = e.Mask(r)
		}
		return IndependentModel(laws)
	}
	return PlainModel(0)
}

// Divergence returns, summed over the exchanges t scored, the
// Kullback–Leibler divergence of the law of the view's messages under one
// dataset from that under the other given the predictions (Tally's
// shifts): the expected score of a run with the canary when the predictions
// are exact. Where the view reveals the value it is +Inf if they are exact
// (the laws are singular), NaN otherwise (the law of the revealed value is
// not modelled).
func (m *Model) Divergence(t *Tally, exact bool) float64 {
	switch {
	case m.revealed && t.Scored() > 0 && exact:
		return math.Inf(1)
	case m.revealed && t.Scored() > 0:
		return math.NaN()
	}
	return t.Divergence(m.laws)
}
