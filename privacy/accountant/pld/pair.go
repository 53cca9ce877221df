package pld

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// profile is the privacy profile of a pair of distributions (P, Q): the
// hockey-stick divergence δ(ε) = H_{e^ε}(P‖Q) = ∫ (dP − e^ε dQ)₊ at every
// real ε (negative ε too: the connect-the-dots discretization needs the
// whole curve), and the range of privacy losses L = ln(dP/dQ) that carries
// all but a given mass under P.
type profile interface {
	delta(eps float64) float64
	// bounds returns lo ≤ hi with P(L < lo) ≤ tail and P(L > hi) ≤ tail
	// (hi may be +Inf, lo −Inf).
	bounds(tail float64) (lo, hi float64)
}

// noise is the distribution μ of an additive mechanism's noise, with the
// log-density ratio r(x, s) = ln μ(x − s) − ln μ(x) of a shift by s.
type noise interface {
	survival(x float64) float64 // μ((x, ∞))
	quantile(p float64) float64 // μ((−∞, x]) = p
	logRatio(x, s float64) float64
	// inverse returns the x with ℓ(x) = eps for the pair p, and false when
	// it has no closed form for it (bisection is used then).
	inverse(p *shiftPair, eps float64) (float64, bool)
}

// shiftPair is the pair of mixtures
//
//	P = (1 − wp)·μ + wp·μ(· − a),   Q = (1 − wq)·μ + wq·μ(· + c),
//
// a, c ≥ 0, whose privacy loss ℓ(x) = ln(dP/dQ)(x) is non-decreasing in x
// for noise with a log-concave density (Gaussian, Laplace): μ(x − a)/μ(x)
// grows and μ(x + c)/μ(x) falls with x. Every pair the accountant uses for
// additive noise is of this form (see Mechanism).
type shiftPair struct {
	mu     noise
	wp, a  float64
	wq, c  float64
	lmin   float64 // inf ℓ, the limit x → −∞
	lmax   float64 // sup ℓ, the limit x → +∞
	lo, hi float64 // where ℓ varies: ℓ is constant below lo and above hi
}

// logMix returns ln(1 − w + w·e^r) without overflow.
func logMix(w, r float64) float64 {
	switch {
	case w == 0:
		return 0
	case w == 1:
		return r
	case math.IsInf(r, 1):
		return r
	case r <= 30:
		return math.Log1p(w * math.Expm1(r))
	}
	return r + math.Log(w) + math.Log1p((1-w)/w*math.Exp(-r))
}

// loss returns ℓ(x).
func (p *shiftPair) loss(x float64) float64 {
	l := logMix(p.wp, p.mu.logRatio(x, p.a)) - logMix(p.wq, p.mu.logRatio(x, -p.c))
	if math.IsNaN(l) { // ±Inf − ±Inf far in a tail of vanishing noise
		if x > 0 {
			return p.lmax
		}
		return p.lmin
	}
	return l
}

// tails returns P((x, ∞)) and Q((x, ∞)).
func (p *shiftPair) tails(x float64) (float64, float64) {
	s := p.mu.survival(x)
	return (1-p.wp)*s + p.wp*p.mu.survival(x-p.a), (1-p.wq)*s + p.wq*p.mu.survival(x+p.c)
}

// delta returns H_{e^ε}(P‖Q) = P(ℓ > ε) − e^ε·Q(ℓ > ε): the outcomes where
// dP > e^ε dQ are those above the x where ℓ(x) = ε, as ℓ grows with x.
func (p *shiftPair) delta(eps float64) float64 {
	floor := max(0, -math.Expm1(eps)) // δ(ε) ≥ 1 − e^ε always
	switch {
	case eps < p.lmin:
		return floor
	case eps >= p.lmax:
		return 0
	}
	x, ok := p.mu.inverse(p, eps)
	if !ok || math.IsNaN(x) || math.IsInf(x, 0) {
		// No closed form, or one that overflowed (vanishing noise, where
		// the crossing lies between the components).
		x = p.bisect(eps)
	}
	tp, tq := p.tails(x)
	d := tp - math.Exp(eps)*tq
	return min(1, max(floor, d))
}

// bisect returns the x where ℓ crosses eps, for lmin ≤ eps < lmax: ℓ is
// constant outside [lo, hi] and non-decreasing inside.
func (p *shiftPair) bisect(eps float64) float64 {
	lo, hi := p.lo, p.hi
	for range 200 {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if p.loss(mid) > eps {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// bounds returns the losses at the tail- and (1 − tail)-quantiles of a
// bound on P: P(X ≤ x) ≤ μ((−∞, x]) as P's second component lies to the
// right of μ, and P(X > x) ≤ μ((x − a, ∞)).
func (p *shiftPair) bounds(tail float64) (lo, hi float64) {
	xlo := p.mu.quantile(tail)
	xhi := -p.mu.quantile(tail)
	if p.wp > 0 {
		xhi += p.a
	}
	return max(p.lmin, p.loss(xlo)), min(p.lmax, p.loss(xhi))
}

// gaussian is N(0, σ²).
type gaussian struct{ sigma float64 }

func (g gaussian) survival(x float64) float64 { return math.Erfc(x/(g.sigma*math.Sqrt2)) / 2 }

func (g gaussian) quantile(p float64) float64 { return g.sigma * distuv.UnitNormal.Quantile(p) }

// logRatio is ((2x − s)·s)/(2σ²), computed as (x − s/2)·(s/σ)/σ so that
// a tiny σ overflows to ±Inf rather than to NaN.
func (g gaussian) logRatio(x, s float64) float64 {
	if s == 0 {
		return 0
	}
	return (x - s/2) * (s / g.sigma) / g.sigma
}

// inverse solves ℓ(x) = eps in closed form for the three shapes of pair
// the accountant builds: remove (wq = 0), add (wp = 0) and the symmetric
// replace-one pair (wp = wq, a = c).
func (g gaussian) inverse(p *shiftPair, eps float64) (float64, bool) {
	switch {
	case p.wq == 0 && p.a > 0:
		// ln(1 − w + w·e^{r}) = ε with r = (x − a/2)·a/σ².
		r := eps
		if p.wp < 1 {
			r = math.Log(math.Expm1(eps)+p.wp) - math.Log(p.wp)
		}
		if r == 0 {
			return p.a / 2, true
		}
		return p.a/2 + r*g.sigma*(g.sigma/p.a), true
	case p.wp == 0 && p.c > 0:
		// −ln(1 − w + w·e^{r}) = ε with r = −(x + c/2)·c/σ².
		r := -eps
		if p.wq < 1 {
			r = math.Log(math.Expm1(-eps)+p.wq) - math.Log(p.wq)
		}
		if r == 0 {
			return -p.c / 2, true
		}
		return -p.c/2 - r*g.sigma*(g.sigma/p.c), true
	case p.wp == p.wq && p.a == p.c && p.a > 0:
		// With t = a·x/σ² and k = (1 − w)e^{a²/(2σ²)}/w, ℓ = ln(k + e^t) −
		// ln(k + e^{−t}), so 2 sinh(t − ε/2) = 2k·sinh(ε/2).
		t := eps / 2
		if p.wp < 1 {
			lk := math.Log1p(-p.wp) - math.Log(p.wp) + (p.a/g.sigma)*(p.a/g.sigma)/2
			t += asinhExp(lk, math.Sinh(eps/2))
		}
		if t == 0 {
			return 0, true
		}
		return t * g.sigma * (g.sigma / p.a), true
	}
	return 0, false
}

// asinhExp returns asinh(e^lk·y) without overflow.
func asinhExp(lk, y float64) float64 {
	if y == 0 {
		return 0
	}
	ly := lk + math.Log(math.Abs(y))
	v := ly + math.Ln2 // asinh(u) = ln(2u) + O(u⁻²)
	if ly < 300 {
		v = math.Asinh(math.Exp(ly))
	}
	if y < 0 {
		return -v
	}
	return v
}

// laplace is the Laplace distribution of scale b (density e^{−|x|/b}/2b).
type laplace struct{ b float64 }

func (l laplace) survival(x float64) float64 {
	if x >= 0 {
		return math.Exp(-x/l.b) / 2
	}
	return 1 - math.Exp(x/l.b)/2
}

func (l laplace) quantile(p float64) float64 {
	if p < 0.5 {
		return l.b * math.Log(2*p)
	}
	return -l.b * math.Log(2*(1-p))
}

// logRatio is (|x| − |x − s|)/b.
func (l laplace) logRatio(x, s float64) float64 { return (math.Abs(x) - math.Abs(x-s)) / l.b }

func (laplace) inverse(*shiftPair, float64) (float64, bool) { return 0, false }

// newShiftPair returns the pair with its loss range: ℓ is constant below
// x = −c and above x = a for Laplace noise, and tends to its limits for
// Gaussian noise.
func newShiftPair(mu noise, wp, a, wq, c float64) *shiftPair {
	p := &shiftPair{mu: mu, wp: wp, a: a, wq: wq, c: c}
	switch m := mu.(type) {
	case gaussian:
		p.lmin, p.lmax = math.Inf(-1), math.Inf(1)
		if wq == 0 && wp < 1 {
			p.lmin = math.Log1p(-wp)
		}
		if wp == 0 && wq < 1 {
			p.lmax = -math.Log1p(-wq)
		}
		p.lo, p.hi = -c-50*m.sigma-1, a+50*m.sigma+1
	case laplace:
		p.lo, p.hi = -c-m.b, a+m.b
		p.lmin, p.lmax = p.loss(p.lo), p.loss(p.hi)
		p.lo, p.hi = -c, a
	}
	return p
}

// discretePair is a pair of distributions on finitely many outcomes.
type discretePair struct{ p, q []float64 }

// delta returns Σ_o (P(o) − e^ε Q(o))₊.
func (d discretePair) delta(eps float64) float64 {
	e := math.Exp(eps)
	var s float64
	for i := range d.p {
		if v := d.p[i] - e*d.q[i]; v > 0 {
			s += v
		}
	}
	return min(1, max(s, -math.Expm1(eps)))
}

// bounds returns the smallest and largest finite loss.
func (d discretePair) bounds(float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for i := range d.p {
		if d.p[i] > 0 && d.q[i] > 0 {
			l := math.Log(d.p[i] / d.q[i])
			lo, hi = min(lo, l), max(hi, l)
		}
	}
	if lo > hi {
		return 0, 0
	}
	return lo, hi
}

// symmetrized is the pair whose profile is the larger of the profiles of
// (P, Q) and (Q, P) at every ε. It dominates both orientations at once,
// which a mechanism needs when the orientation of its worst case can change
// from one round to the next (Lebeda, Regehr, Kamath & Steinke 2024): the
// larger of two privacy profiles is convex and non-increasing in e^ε with
// δ(ε) ≥ 1 − e^ε, so it is the profile of some pair, and as the maximum of
// a family closed under swapping it is self-dual: that pair is its own
// swap.
type symmetrized struct{ pq, qp profile }

func (s symmetrized) delta(eps float64) float64 { return max(s.pq.delta(eps), s.qp.delta(eps)) }

func (s symmetrized) bounds(tail float64) (lo, hi float64) {
	l1, h1 := s.pq.bounds(tail)
	l2, h2 := s.qp.bounds(tail)
	return min(l1, l2), max(h1, h2)
}
