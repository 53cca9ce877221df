package audit

import "math"

// Model is how the messages a view holds from the victim relate to its
// value y in one exchange (a round, or a communicating stage of one): each
// carries y plus noise independent across draws (IndependentModel), or one
// draw times a coefficient per link (MultiplesModel); or the view reveals y
// — in the clear on one link (PlainModel), from two multiples of one draw
// with different coefficients (MultiplesModel), or through the auditor's
// replay of the other messages (ReplayedModel). A family's auditor chooses
// the model from its scheme; the model scores the exchange.
type Model struct {
	laws     []Noise
	shared   bool
	revealed bool
	plain    int // the link that carries y in the clear, or −1
	pair     [2]int
	coef     [2]float64
	obs      [][]float64 // the messages IndependentScore reads, one per law
}

// IndependentModel is the model of messages carrying y plus independent
// draws: message k's of law laws[k].
func IndependentModel(laws []Noise) Model {
	return Model{laws: laws, plain: -1, obs: make([][]float64, len(laws))}
}

// MultiplesModel is the model of messages carrying y + c_k·g for one draw g
// of law and coefficients coef (one per link, at least one): the law of c₀·g
// read on link 0 where every coefficient is c₀, or, where two differ, the
// first pair of links that reveals y (SolveMultiples).
func MultiplesModel(law Noise, coef []float64) Model {
	for k, c := range coef[1:] {
		if c != coef[0] {
			return Model{revealed: true, plain: -1, pair: [2]int{0, k + 1}, coef: [2]float64{coef[0], c}}
		}
	}
	m := IndependentModel([]Noise{law.Scaled(coef[0])})
	m.shared = true
	return m
}

// PlainModel is the model of a view that reveals y in the clear on link k
// (no noise, or a receiver that cannot mask).
func PlainModel(k int) Model { return Model{revealed: true, plain: k} }

// ReplayedModel is the model of a view that reveals y through the auditor's
// replay of the other messages (a receiver's aggregate, in which masks
// cancel): Score is handed that value.
func ReplayedModel() Model { return Model{revealed: true, plain: -1} }

// Revealed reports whether the view determines y exactly.
func (m *Model) Revealed() bool { return m.revealed }

// Shared reports whether the messages carry one draw (MultiplesModel with
// equal coefficients).
func (m *Model) Shared() bool { return m.shared }

// Laws returns the laws of the independent draws; nil where the view
// reveals y.
func (m *Model) Laws() []Noise { return m.laws }

// Plain returns the link that carries y in the clear, or −1.
func (m *Model) Plain() int { return m.plain }

// Pair returns the two links whose multiples of one draw reveal y and their
// coefficients; links 0 and 0 where no pair does.
func (m *Model) Pair() ([2]int, [2]float64) { return m.pair, m.coef }

// Score returns the exchange's score: for messages obs(k) (link k's) whose
// value's mean is mu0 under one dataset and mu1 under the other, the
// log-likelihood ratio IndependentScore of the draws, or, where the view
// reveals y, RevealedScore of the revealed value — link Plain's message, the
// solution of Pair's two (written into yhat), or yhat itself (ReplayedModel).
func (m *Model) Score(obs func(k int) []float64, yhat, mu0, mu1 []float64) float64 {
	switch {
	case m.revealed && m.plain >= 0:
		return RevealedScore(obs(m.plain), mu0, mu1)
	case m.revealed && m.pair != [2]int{}:
		SolveMultiples(yhat, obs(m.pair[0]), obs(m.pair[1]), m.coef[0], m.coef[1])
		return RevealedScore(yhat, mu0, mu1)
	case m.revealed:
		return RevealedScore(yhat, mu0, mu1)
	}
	for k := range m.laws {
		m.obs[k] = obs(k)
	}
	return IndependentScore(m.laws, m.obs, mu0, mu1)
}

// Draws returns Draws(Laws(), std), the draws of standard deviation std the
// messages of one exchange are worth, or +Inf where the view reveals y.
func (m *Model) Draws(std float64) float64 {
	if m.revealed {
		return math.Inf(1)
	}
	return Draws(m.laws, std)
}
