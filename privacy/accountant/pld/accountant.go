package pld

import (
	"fmt"
	"math"
)

// DefaultInterval is the default discretization interval Δ of privacy
// losses, that of Google's dp_accounting (value_discretization_interval):
// losses are kept on the grid iΔ.
const DefaultInterval = 1e-4

// DefaultTail is the default mass truncated per composition (dp_accounting's
// tail_mass_truncation), added to the mass at +∞ and so to δ.
const DefaultTail = 1e-15

// maxLoss caps one round's discretized losses: a round's mass beyond it is
// counted at +∞ (an upper bound), so that noise too weak to hide anything
// does not need an unbounded grid.
const maxLoss = 100

// Options are the accountant's numerical parameters.
type Options struct {
	// Interval is the discretization interval Δ, in [1e-6, 1];
	// 0 means DefaultInterval.
	Interval float64
	// Tail is the mass each composition may truncate, in [0, 1e-3]; 0
	// means DefaultTail. Each round's grid keeps all but Tail/1000 of its
	// loss mass.
	Tail float64
	// MaxPoints bounds the length of every distribution, in
	// [2¹⁰, DefaultMaxPoints]; 0 means DefaultMaxPoints. A composition
	// whose losses spread wider than MaxPoints·Interval counts at infinite
	// loss (ε = +Inf, an upper bound): a smaller bound caps the cost of
	// compositions so wide that they guarantee nothing worth a number.
	MaxPoints int64
}

func (o Options) withDefaults() (Options, error) {
	if o.Interval == 0 {
		o.Interval = DefaultInterval
	}
	if o.Tail == 0 {
		o.Tail = DefaultTail
	}
	if o.MaxPoints == 0 {
		o.MaxPoints = DefaultMaxPoints
	}
	switch {
	case !(o.Interval >= 1e-6 && o.Interval <= 1):
		return o, fmt.Errorf("interval: the discretization interval must lie in [1e-6, 1], got %v", o.Interval)
	case !(o.Tail > 0 && o.Tail <= 1e-3):
		return o, fmt.Errorf("tail: the truncated mass must lie in (0, 1e-3], got %v", o.Tail)
	case o.MaxPoints < 1<<10 || o.MaxPoints > DefaultMaxPoints:
		return o, fmt.Errorf("max_points: must lie in [1024, %d], got %d", DefaultMaxPoints, o.MaxPoints)
	}
	return o, nil
}

// Distribution is the discretized privacy loss distribution of a
// composition, in the two directions of the neighbouring relation (remove:
// the data set with the record plays P; add: it plays Q). Its δ(ε) is the
// larger of the two directions', an upper bound on the hockey-stick
// divergence of the mechanism's outputs on any neighbouring pair.
type Distribution struct {
	remove, add *pmf // add == remove for a symmetric pair
}

// Delta returns δ(ε), the smallest δ for which the composition is
// (ε, δ)-DP according to the discretized distribution (an upper bound).
func (d *Distribution) Delta(epsilon float64) float64 {
	return max(d.remove.delta(epsilon), d.add.delta(epsilon))
}

// Epsilon returns the smallest ε ≥ 0 with Delta(ε) ≤ delta; +Inf when
// the mass at infinite loss exceeds delta.
func (d *Distribution) Epsilon(delta float64) float64 {
	e := d.remove.epsilon(delta)
	if d.add != d.remove {
		e = max(e, d.add.epsilon(delta))
	}
	return e
}

// InfinityMass returns the mass at infinite loss (the larger of the two
// directions'): no δ below it has a finite ε.
func (d *Distribution) InfinityMass() float64 { return max(d.remove.inf, d.add.inf) }

// identity is the distribution of a composition of nothing.
func identity(interval float64) *pmf {
	return &pmf{interval: interval, probs: []float64{1}}
}

// round returns the discretized distribution of one round of m.
func round(m Mechanism, o Options) *Distribution {
	remove, add := m.pairs()
	if remove == nil {
		id := identity(o.Interval)
		return &Distribution{id, id}
	}
	r := discretizeProfile(remove, o)
	d := &Distribution{r, r}
	if add != nil {
		d.add = discretizeProfile(add, o)
	}
	return d
}

// discretizeProfile discretizes f on the grid that holds all but
// Tail/1000 of its loss mass, at most maxPoints losses, none above maxLoss.
func discretizeProfile(f profile, o Options) *pmf {
	lo, hi := f.bounds(o.Tail / 2000)
	capIdx := int64(math.Floor(maxLoss / o.Interval))
	ihi := capIdx
	if hi < maxLoss {
		ihi = int64(math.Ceil(hi / o.Interval))
	}
	ilo := -capIdx
	if lo > -maxLoss {
		ilo = int64(math.Floor(lo / o.Interval))
	}
	ilo = min(max(ilo, ihi-o.MaxPoints+1), ihi)
	return discretize(f, o.Interval, ilo, ihi)
}

// Compose returns the composition of count rounds of m, count ≥ 0.
func Compose(m Mechanism, count int64, opt Options) (*Distribution, error) {
	r, err := NewRounds(m, opt)
	if err != nil {
		return nil, err
	}
	return r.Compose(count)
}

// Rounds is one mechanism's discretized round, to be composed with itself
// any number of times: what a ledger that asks ε after every round of the
// same mechanism needs, without discretizing the round again for each
// count. Rounds(m).Compose(n) is Compose(m, n) exactly, whatever was asked
// before; Compose only reads the round, so calls may run concurrently.
type Rounds struct {
	opt   Options
	round *Distribution
}

// NewRounds discretizes one round of m.
func NewRounds(m Mechanism, opt Options) (*Rounds, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	r := &Rounds{opt: o, round: round(m, o)}
	// The moments are filled in now, so that Compose only reads the round.
	r.round.remove.mgf()
	r.round.add.mgf()
	return r, nil
}

// Compose returns the composition of count ≥ 0 rounds.
func (r *Rounds) Compose(count int64) (*Distribution, error) {
	if count < 0 {
		return nil, fmt.Errorf("rounds: must be non-negative, got %d", count)
	}
	if count == 0 {
		id := identity(r.opt.Interval)
		return &Distribution{id, id}, nil
	}
	// A fresh copy of the round each time: a pmf keeps the transform it
	// was last composed with, whose length depends on the counts asked
	// before, and the result must not (to its last bit).
	fresh := &Distribution{remove: r.round.remove.withoutTransform()}
	fresh.add = fresh.remove
	if r.round.add != r.round.remove {
		fresh.add = r.round.add.withoutTransform()
	}
	return selfComposed(fresh, count, r.opt), nil
}

// withoutTransform returns p without its cached Fourier transform; the
// probabilities and the moment generating function at the fixed Chernoff
// orders are shared, never written.
func (p *pmf) withoutTransform() *pmf {
	return &pmf{interval: p.interval, offset: p.offset, probs: p.probs, inf: p.inf, logMGF: p.mgf()}
}

// selfComposed returns count ≥ 1 rounds of round.
func selfComposed(round *Distribution, count int64, opt Options) *Distribution {
	rm := selfCompose(round.remove, count, opt.Tail, opt.MaxPoints)
	ad := rm
	if round.add != round.remove {
		ad = selfCompose(round.add, count, opt.Tail, opt.MaxPoints)
	}
	return &Distribution{rm, ad}
}

// Accountant composes rounds, possibly of different mechanisms, and
// answers ε(δ) and δ(ε) for all of them so far. Rounds of the same
// mechanism share one discretized distribution and are composed by one
// power of its Fourier transform (characteristic-function accounting), so
// asking after every one of R rounds costs R transforms of the composed
// length, not R convolutions and no loss of precision per round.
type Accountant struct {
	opt     Options
	entries []entry
	index   map[Mechanism]int
	cache   *Distribution
}

type entry struct {
	round *Distribution
	count int64
}

// NewAccountant returns an accountant with no rounds composed.
func NewAccountant(opt Options) (*Accountant, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Accountant{opt: o, index: map[Mechanism]int{}}, nil
}

// Compose adds count rounds of m (count ≥ 0).
func (a *Accountant) Compose(m Mechanism, count int64) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if count < 0 {
		return fmt.Errorf("rounds: must be non-negative, got %d", count)
	}
	if count == 0 {
		return nil
	}
	i, ok := a.index[m]
	if !ok {
		i = len(a.entries)
		a.index[m] = i
		a.entries = append(a.entries, entry{round: round(m, a.opt)})
	}
	if a.entries[i].count > math.MaxInt64-count {
		return fmt.Errorf("rounds: more than %d in all", int64(math.MaxInt64))
	}
	a.entries[i].count += count
	a.cache = nil
	return nil
}

// Distribution returns the composed distribution of every round so far.
func (a *Accountant) Distribution() *Distribution {
	if a.cache != nil {
		return a.cache
	}
	id := identity(a.opt.Interval)
	d := &Distribution{id, id}
	for _, e := range a.entries {
		c := selfComposed(e.round, e.count, a.opt)
		r, ad := c.remove, c.add
		if d.remove == id {
			d = c
			continue
		}
		symmetric := d.add == d.remove && ad == r
		d.remove = convolve(d.remove, r, a.opt.Tail, a.opt.MaxPoints)
		if symmetric {
			d.add = d.remove
		} else {
			d.add = convolve(d.add, ad, a.opt.Tail, a.opt.MaxPoints)
		}
	}
	a.cache = d
	return d
}

// Epsilon returns the ε of every round so far at delta ∈ (0, 1).
func (a *Accountant) Epsilon(delta float64) (float64, error) {
	if !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("delta: must lie in (0, 1), got %v", delta)
	}
	return a.Distribution().Epsilon(delta), nil
}

// NoiseMultiplier returns the smallest noise multiplier (to relative
// precision 1e-6) at which rounds rounds of m, its NoiseMultiplier
// replaced, are (target, delta)-DP. ε falls as the noise grows, so it is
// found by bisection on a logarithmic scale between 10⁻³ and 10⁶.
func NoiseMultiplier(m Mechanism, rounds int64, target, delta float64, opt Options) (float64, error) {
	switch {
	case !(target > 0) || math.IsInf(target, 1):
		return 0, fmt.Errorf("epsilon: the target must be positive and finite, got %v", target)
	case !(delta > 0 && delta < 1):
		return 0, fmt.Errorf("delta: must lie in (0, 1), got %v", delta)
	case m.Noise == RandomizedResponse:
		return 0, fmt.Errorf("noise: randomized response has no noise multiplier")
	}
	m.NoiseMultiplier = 1
	if err := m.Validate(); err != nil {
		return 0, err
	}
	if _, err := opt.withDefaults(); err != nil {
		return 0, err
	}
	eps := func(z float64) float64 {
		m.NoiseMultiplier = z
		d, err := Compose(m, rounds, opt)
		if err != nil {
			return math.Inf(1)
		}
		return d.Epsilon(delta)
	}
	lo, hi := 1.0, 1.0
	if eps(hi) > target {
		for eps(hi) > target {
			lo, hi = hi, 2*hi
			if hi > 1e6 {
				return 0, fmt.Errorf("epsilon: %v is out of reach at δ = %v for any noise multiplier up to 10⁶", target, delta)
			}
		}
	} else {
		for eps(lo) <= target {
			lo, hi = lo/2, lo
			if lo < 1e-3 {
				return hi, nil
			}
		}
	}
	for hi-lo > 1e-6*hi {
		mid := math.Sqrt(lo * hi)
		if eps(mid) > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}
