package gamma

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// The privacy profile of the Gamma mechanism: the tightest δ(ε) it satisfies
// on inputs in [inf L, sup L], and its inverse.
//
// For outputs distributed as P under one input and Q under another, the
// smallest δ at ε is the hockey-stick divergence
//
//	δ(ε) = E_P[(1 − e^{ε − ℓ})₊] = P[ℓ ≥ ε] − e^ε·Q[ℓ ≥ ε],  ℓ = ln(dP/dQ),
//
// of which Lemma 1's tail P[ℓ ≥ ε] is the first term alone: sufficient, not
// tight. The Gamma mechanism's privacy loss is affine in ln Z (LossUp), so
// {ℓ ≥ ε} is a half-line of outputs and both terms are regularized
// incomplete gamma functions at Lemma 1's own thresholds t±:
//
//	up   (P = Gamma(sup L/θ, θ), Q = Gamma(inf L/θ, θ)): Q(sup L/θ, t₊) − e^ε·Q(inf L/θ, t₊),
//	down (P = Gamma(inf L/θ, θ), Q = Gamma(sup L/θ, θ)): P(inf L/θ, t₋) − e^ε·P(sup L/θ, t₋),
//
// and the profile is the larger of the two. The tests compare it with a
// numerical integration of E_P[(1 − e^{ε − ℓ})₊] (gonum's quad) and with
// Monte Carlo, and check that no interior pair of inputs does worse than the
// extreme pair.

// ProfileTails returns the hockey-stick divergences at ε of the extreme pair
// of inputs in both directions: up with the output drawn on sup L against
// inf L, down the other way round. Profile is their maximum.
func ProfileTails(eps, theta float64, b Bounds) (up, down float64) {
	d := b.Sup - b.Inf
	if d == 0 {
		return 0, 0 // one possible input: the output reveals nothing
	}
	s, i := b.Sup/theta, b.Inf/theta
	lg := lgamma(s) - lgamma(i)
	k := theta / d
	lnUp, lnDown := (eps+lg)*k, (-eps+lg)*k
	if s < minShape || math.IsInf(lnUp, 0) || math.IsInf(lnDown, 0) {
		return limitProfile(eps, b)
	}
	e := math.Exp(eps)
	up = upperReg(s, lnUp) - e*upperReg(i, lnUp)
	down = lowerReg(i, lnDown) - e*lowerReg(s, lnDown)
	return max(up, 0), max(down, 0) // a divergence is ≥ 0; rounding may not be
}

// limitProfile returns the limits of ProfileTails as θ → ∞, where the output
// law of input L tends to P[Z/θ ≤ t] = t^{L/θ} near 0 (see minShape): with
// r = sup L/inf L and d = sup L − inf L,
//
//	up   → [ε < ln r]·(1 − e^{sup L(ε − ln r)/d} − e^ε·(1 − e^{inf L(ε − ln r)/d})),
//	down → e^{−inf L(ε + ln r)/d} − e^ε·e^{−sup L(ε + ln r)/d}.
func limitProfile(eps float64, b Bounds) (up, down float64) {
	d := b.Sup - b.Inf
	lr := math.Log(b.Ratio())
	e := math.Exp(eps)
	if eps < lr {
		up = -math.Expm1(b.Sup*(eps-lr)/d) + e*math.Expm1(b.Inf*(eps-lr)/d)
	}
	down = math.Exp(-b.Inf*(eps+lr)/d) - e*math.Exp(-b.Sup*(eps+lr)/d)
	return max(up, 0), max(down, 0)
}

// Profile returns the Gamma mechanism's privacy profile δ(ε): the smallest δ
// for which the mechanism with noise θ on inputs in b is (ε, δ)-LDP, at most
// Lemma 1's Delta(ε, θ, b).
func Profile(eps, theta float64, b Bounds) float64 {
	up, down := ProfileTails(eps, theta, b)
	return max(up, down)
}

// Epsilon returns the tight ε of the Gamma mechanism at δ: the smallest ε ≥ 0
// with Profile(ε) ≤ delta, to an absolute 1e-12. delta must lie in (0, 1).
func Epsilon(delta, theta float64, b Bounds) float64 {
	return invert(func(e float64) float64 { return Profile(e, theta, b) }, delta)
}

// Lemma1Epsilon returns the ε that Lemma 1 certifies at δ for noise θ: the
// smallest ε ≥ 0 with Delta(ε, θ) ≤ delta, to an absolute 1e-12 — the paper's
// claim, which Epsilon never exceeds. delta must lie in (0, 1).
func Lemma1Epsilon(delta, theta float64, b Bounds) float64 {
	return invert(func(e float64) float64 { return Delta(e, theta, b) }, delta)
}

// invert returns the smallest ε ≥ 0 with f(ε) ≤ delta for f nonincreasing in
// ε and tending to 0 (both δ's do: each term is a tail beyond a threshold
// that grows with ε, or a hockey-stick divergence), by doubling then
// bisection.
func invert(f func(float64) float64, delta float64) float64 {
	if !(delta > 0 && delta < 1) {
		panic("gamma: δ must lie in (0, 1)")
	}
	if f(0) <= delta {
		return 0
	}
	lo, hi := 0.0, 1.0
	for f(hi) > delta {
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return math.Inf(1) // not reached for δ > 0: the tails vanish long before
		}
	}
	for hi-lo > 1e-12 {
		mid := (lo + hi) / 2
		if f(mid) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// Divergence returns the Kullback–Leibler divergences between the outputs on
// the extreme inputs: up = KL(Gamma(sup L/θ) ‖ Gamma(inf L/θ)), down the
// reverse. For shapes a, a′ of one scale,
//
//	KL(Gamma(a) ‖ Gamma(a′)) = (a − a′)ψ(a) − ln Γ(a) + ln Γ(a′),
//
// with ψ the digamma function. up + down is the expected gap between the
// log-likelihood ratio LossUp on outputs of sup L and on outputs of inf L.
func Divergence(theta float64, b Bounds) (up, down float64) {
	s, i := b.Sup/theta, b.Inf/theta
	up = (s-i)*mathext.Digamma(s) - lgamma(s) + lgamma(i)
	down = (i-s)*mathext.Digamma(i) - lgamma(i) + lgamma(s)
	return up, down
}
