// Package ledger is the seam through which a family accounts for the
// privacy of its rounds: a family says what each round releases (a Round:
// its noise, its sampling and the neighbouring relation it is stated for),
// and a Ledger composes the rounds with the accountant the scenario chose —
// the privacy loss distribution (PLD, privacy/accountant/pld), the tightest
// known for the mechanisms it covers, or Rényi DP (RDP) — and gives the
// (ε, δ) guarantee after each round, naming the bound it used.
//
// Asking ε after every round costs the PLD accountant one Fourier transform
// of the composed distribution per round. Runs of the same mechanism ask
// the same questions, so a ledger whose rounds are all one mechanism reads
// ε(n) from a table shared by every ledger of the process and filled once
// (sequences.go): each entry is the n-fold composition computed afresh, so
// it does not depend on which run computed it first.
package ledger

import (
	"fmt"
	"math"

	"maple/internal/enum"
	"maple/privacy/accountant"
	"maple/privacy/accountant/pld"
)

// Kind is an accountant.
type Kind int

const (
	// PLD composes privacy loss distributions (Doroshenko et al. 2022's
	// connect-the-dots discretization, FFT composition): the default
	// wherever it applies.
	PLD Kind = iota
	// RDP composes Rényi DP at accountant.DefaultOrders and converts with
	// Balle et al. 2020 (Thm 21); it also bounds the distributed discrete
	// Gaussian, which the PLD accountant does not model.
	RDP
)

var kindNames = enum.Of[Kind]("accountant", "pld", "rdp")

// String returns the accountant's scenario name: pld or rdp.
func (k Kind) String() string { return kindNames.String(k) }

// ParseKind returns the accountant named s.
func ParseKind(s string) (Kind, error) { return kindNames.Parse(s) }

// Round is what one round releases, as an accountant composes it.
type Round struct {
	// Mechanism is the noise on the round's sum of contributions clipped
	// to C, with its sampling and relation (sensitivities in units of C).
	Mechanism pld.Mechanism
	// Distributed, if set, makes the noise the distributed discrete
	// Gaussian DDG (Kairouz, Liu & Steinke 2021): Rényi DP only, under
	// fixed-size sampling and replace-one neighbours.
	Distributed bool
	DDG         accountant.DDG
}

// Describe says in words what the round releases.
func (r Round) Describe() string {
	m := r.Mechanism
	noise := fmt.Sprintf("%s noise of multiplier %g", m.Noise, m.NoiseMultiplier)
	if r.Distributed {
		noise = fmt.Sprintf("distributed discrete Gaussian of %d clients' shares", r.DDG.Clients)
	}
	return fmt.Sprintf("%s sampling at rate q = %g, %s neighbours, %s", m.Sampling, m.Rate, m.Relation, noise)
}

// Check reports why accountant k has no bound for rounds like r, nil if it
// has one.
func Check(k Kind, r Round) error {
	m := r.Mechanism
	switch k {
	case PLD:
		if r.Distributed {
			return fmt.Errorf("the PLD accountant does not model the distributed discrete Gaussian (the sum of the clients' discrete Gaussians is not one); use the rdp accountant")
		}
		return m.Validate()
	case RDP:
		if err := m.Validate(); err != nil {
			return err
		}
		switch {
		case m.Noise != pld.Gaussian:
			return fmt.Errorf("the Rényi DP accountant bounds Gaussian noise only, not %s", m.Noise)
		case r.Distributed && (m.Sampling != accountant.FixedSize || m.Relation != accountant.ReplaceOne) && m.Rate < 1:
			return fmt.Errorf("the Rényi DP accountant bounds the distributed discrete Gaussian under fixed-size sampling and replace-one neighbours only, not %s sampling with %s neighbours", m.Sampling, m.Relation)
		case r.Distributed && m.Relation != accountant.ReplaceOne:
			return fmt.Errorf("the Rényi DP accountant bounds the distributed discrete Gaussian under replace-one neighbours only, not %s", m.Relation)
		case r.Distributed, m.Rate >= 1:
			return nil
		case m.Sampling == accountant.Poisson && m.Relation == accountant.AddRemove:
			return nil
		case m.Sampling == accountant.FixedSize && m.Relation == accountant.ReplaceOne:
			return nil
		}
		return fmt.Errorf("the Rényi DP accountant has no bound for %s sampling with %s neighbours; the pld accountant has", m.Sampling, m.Relation)
	}
	return fmt.Errorf("accountant: %v", k)
}

// Bound names the bound accountant k gives rounds like r and how it turns
// them into (ε, δ), for a summary.
func Bound(k Kind, r Round) string {
	m := r.Mechanism
	if k == PLD {
		return fmt.Sprintf("privacy loss distribution of the %s mechanism under %s sampling at q = %g and %s neighbours (Koskela et al. 2020; Doroshenko et al. 2022, connect-the-dots, FFT composition, the tails added to δ)",
			m.Noise, m.Sampling, m.Rate, m.Relation)
	}
	const conv = "composed in Rényi DP over the orders of accountant.DefaultOrders and converted to (ε, δ) by Balle et al. 2020, Thm 21"
	switch {
	case r.Distributed && m.Rate < 1:
		return "distributed discrete Gaussian (Kairouz, Liu & Steinke 2021, Prop. 14 with Thm 1's τ) of the clients whose noise each round's sum holds, sensitivity doubled for replace-one, amplified by fixed-size sampling (Wang, Balle & Kasiviswanathan 2019, Thm 9), " + conv
	case r.Distributed:
		return "distributed discrete Gaussian (Kairouz, Liu & Steinke 2021, Prop. 14 with Thm 1's τ) of the clients whose noise each round's sum holds, sensitivity doubled for replace-one, every client in every round, " + conv
	case m.Rate >= 1 && m.Relation == accountant.ReplaceOne:
		return "Gaussian mechanism with noise multiplier z/2 (replace-one sensitivity 2C), every record in every round, " + conv
	case m.Rate >= 1:
		return "Gaussian mechanism (add/remove sensitivity C), every record in every round, " + conv
	case m.Sampling == accountant.Poisson:
		return "sampled Gaussian mechanism under Poisson sampling and add/remove neighbours (sensitivity C), its exact Rényi DP (Mironov, Talwar & Zhang 2019), " + conv
	}
	return "Gaussian mechanism with noise multiplier z/2 (replace-one sensitivity 2C) amplified by fixed-size sampling without replacement (Wang, Balle & Kasiviswanathan 2019, Thm 9), " + conv
}

// RunOptions are the PLD accountant's options for the ledgers of runs,
// which ask ε after every round: a discretization interval Δ = 10⁻³, ten
// times dp_accounting's 10⁻⁴ (maple privacy's default), which makes each
// query about ten times cheaper and stays an upper bound — it moves
// DP-FedAvg's ε at q = 0.05, z = 1 after 100 rounds by 4·10⁻⁵ (3.50219
// against 3.50215), and by at most n·Δ after n rounds; and distributions
// of at most 2¹⁷ points, 131 in loss: a composition wider than that is
// counted at infinite loss, and the ledger then gives Rényi DP's ε, so that
// a run of weak noise does not spend minutes on a guarantee of nothing.
var RunOptions = pld.Options{Interval: 1e-3, MaxPoints: 1 << 17}

// Guarantee is an (ε, δ) guarantee, the accountant that gave it and, from
// the Rényi DP accountant, the order that gave it (0 otherwise).
type Guarantee struct {
	Epsilon, Delta, Order float64
	By                    Kind
}

// Ledger composes a run's rounds.
type Ledger struct {
	kind Kind
	opt  pld.Options
	// runs are the rounds composed, in order, consecutive equal rounds
	// counted together.
	runs []run
	rdp  *rdpState
}

type run struct {
	round Round
	count int64
}

// New returns an empty ledger of accountant k; opt sets the PLD
// accountant's discretization (zero values: its defaults).
//
// A PLD ledger also keeps the rounds' Rényi DP where that accountant bounds
// them: the PLD accountant counts losses beyond its grid (a round's beyond
// ±100, a composition wider than 2²¹ points) as infinite, which is an upper
// bound but can be +Inf where Rényi DP is finite — then the ledger gives
// Rényi DP's ε, the smaller of two valid bounds, and says so (By).
func New(k Kind, opt pld.Options) *Ledger {
	return &Ledger{kind: k, opt: opt, rdp: newRDP()}
}

// Kind returns the ledger's accountant.
func (l *Ledger) Kind() Kind { return l.kind }

// Compose adds one round of r, which Check must accept.
func (l *Ledger) Compose(r Round) error {
	if err := Check(l.kind, r); err != nil {
		return err
	}
	if n := len(l.runs); n > 0 && l.runs[n-1].round == r {
		l.runs[n-1].count++
	} else {
		l.runs = append(l.runs, run{round: r, count: 1})
	}
	if l.rdp != nil {
		if Check(RDP, r) == nil {
			l.rdp.compose(r)
		} else if l.kind == PLD {
			l.rdp = nil // Rényi DP cannot back the PLD accountant up for these rounds
		}
	}
	return nil
}

// Rounds returns the number of rounds composed.
func (l *Ledger) Rounds() int64 {
	var n int64
	for _, r := range l.runs {
		n += r.count
	}
	return n
}

// Guarantee returns the (ε, δ) guarantee of the rounds composed so far at
// delta ∈ (0, 1); ε is 0 before any round and +Inf where the accountant
// can bound nothing.
func (l *Ledger) Guarantee(delta float64) (Guarantee, error) {
	if !(delta > 0 && delta < 1) {
		return Guarantee{}, fmt.Errorf("delta: must lie in (0, 1), got %v", delta)
	}
	g := Guarantee{Delta: delta, By: l.kind}
	if len(l.runs) == 0 {
		return g, nil
	}
	if l.kind == RDP {
		g.Epsilon, g.Order = l.rdp.epsilon(delta)
		return g, nil
	}
	var err error
	if g.Epsilon, err = l.pldEpsilon(delta); err != nil {
		return g, err
	}
	if math.IsInf(g.Epsilon, 1) && l.rdp != nil {
		if eps, order := l.rdp.epsilon(delta); eps < g.Epsilon {
			g.Epsilon, g.Order, g.By = eps, order, RDP
		}
	}
	return g, nil
}

// pldEpsilon is the PLD accountant's ε of the rounds so far at delta.
func (l *Ledger) pldEpsilon(delta float64) (float64, error) {
	if len(l.runs) == 1 {
		return sequenceEpsilon(l.runs[0].round.Mechanism, l.opt, delta, l.runs[0].count)
	}
	a, err := pld.NewAccountant(l.opt)
	if err != nil {
		return 0, err
	}
	for _, r := range l.runs {
		if err := a.Compose(r.round.Mechanism, r.count); err != nil {
			return 0, err
		}
	}
	eps, err := a.Epsilon(delta)
	if math.IsNaN(eps) {
		eps = math.Inf(1)
	}
	return eps, err
}
