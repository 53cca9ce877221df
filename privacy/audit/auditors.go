package audit

import (
	"fmt"

	"gonum.org/v1/gonum/floats"

	"maple/internal/enum"
)

// This file and model.go are what the differential-privacy auditors of the
// message-passing families (decentralized diffusion, graph federated
// learning) share: which messages they watch (View, Links), how the
// victim's messages relate to its value (Model) and the running score of a
// run with the predicted shifts it rests on (Tally). The families choose
// the model from their schemes and predict the victim's value.

// View is what a differential-privacy auditor observes.
type View int

const (
	// WireView is every message on the victim's outgoing links, as the
	// trace records them: the observer of the guarantee's definition, who
	// does not see what the victim receives and so predicts the victim's
	// values under both datasets with the noise-free recursion.
	WireView View = iota
	// NetworkView is every message on every link of the exchange: the
	// white-box observer of the proof's ratio chain, which conditions on
	// the whole history, so that the auditor can replay the victim's
	// recursion under both datasets from the messages it receives.
	NetworkView
)

var viewNames = enum.Of[View]("audit view", "wire", "network")

// String returns the scenario-file name of the view.
func (v View) String() string { return viewNames.String(v) }

// ParseView returns the view named s.
func ParseView(s string) (View, error) { return viewNames.Parse(s) }

// ViewNames lists the scenario-file names of the views, the default first.
func ViewNames() []string { return viewNames.Names() }

// Links numbers the links of a view, so that an auditor can keep a round's
// messages in a slice: under the wire view the victim's links to its
// receivers, under the network view every sender's, in the order of the
// senders and then of their receivers.
type Links struct {
	index [][]int // index[m][p]: the number of link m → p, or −1 out of view
	n     int
}

// NewLinks numbers the links of view over senders 0 … len(receivers)−1,
// receivers[m] being sender m's receivers in order.
func NewLinks(view View, victim int, receivers [][]int) Links {
	P := len(receivers)
	l := Links{index: make([][]int, P)}
	for m := range P {
		l.index[m] = make([]int, P)
		for p := range l.index[m] {
			l.index[m][p] = -1
		}
		if view == WireView && m != victim {
			continue
		}
		for _, p := range receivers[m] {
			l.index[m][p] = l.n
			l.n++
		}
	}
	return l
}

// Len returns the number of links in the view.
func (l Links) Len() int { return l.n }

// Index returns the number of link from → to, or −1 when it is out of the
// view (or either end is not a sender).
func (l Links) Index(from, to int) int {
	if from < 0 || from >= len(l.index) || to < 0 || to >= len(l.index) {
		return -1
	}
	return l.index[from][to]
}

// Tally is the running score of one audited run: after each round i the
// sum over rounds 1 … i of the round's score, and the shifts μ₁ − μ₀ of the
// predicted values it was computed with, from which the divergence and the
// sensitivity of the run follow.
type Tally struct {
	cum    []float64 // cum[i]: the score after round i
	shifts [][]float64
}

// NewTally returns the tally of a run not yet scored.
func NewTally() Tally { return Tally{cum: []float64{0}} }

// Shift records μ₁ − μ₀ of one prediction of the round being scored.
func (t *Tally) Shift(mu0, mu1 []float64) {
	d := make([]float64, len(mu0))
	floats.SubTo(d, mu1, mu0)
	t.shifts = append(t.shifts, d)
}

// Add scores the next round s.
func (t *Tally) Add(s float64) { t.cum = append(t.cum, t.cum[len(t.cum)-1]+s) }

// Scored returns the last round scored (0 before the first).
func (t *Tally) Scored() int { return len(t.cum) - 1 }

// Score returns the score after round i (0 at round 0). It panics if round
// i is not scored yet; unit names the rounds in the message.
func (t *Tally) Score(i int, unit string) float64 {
	if i < 0 || i >= len(t.cum) {
		panic(fmt.Sprintf("audit: %s %d is not scored (scored up to %d)", unit, i, t.Scored()))
	}
	return t.cum[i]
}

// Divergence returns Σ over the shifts of IndependentDivergence(laws, shift):
// the Kullback–Leibler divergence of observations of the given laws when
// every prediction moves by its shift.
func (t *Tally) Divergence(laws []Noise) float64 {
	var div float64
	for _, d := range t.shifts {
		div += IndependentDivergence(laws, d)
	}
	return div
}

// Sensitivity returns the largest ‖μ₁ − μ₀‖₂ over the shifts.
func (t *Tally) Sensitivity() float64 {
	var m float64
	for _, d := range t.shifts {
		m = max(m, floats.Norm(d, 2))
	}
	return m
}
