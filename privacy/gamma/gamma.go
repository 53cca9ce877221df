package gamma

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mathext"
	"gonum.org/v1/gonum/stat/distuv"
)

// LogSample returns ln R for one draw R ~ Gamma(shape l/θ, scale θ) from r:
// mean l, variance l·θ. l and theta must be positive and finite.
func LogSample(r *rand.Rand, l, theta float64) float64 {
	a := l / theta
	if a >= 1 {
		// gonum's Beta is the rate 1/θ, not the scale θ.
		return math.Log(distuv.Gamma{Alpha: a, Beta: 1 / theta, Src: r}.Rand())
	}
	// G(a) = G(a+1)·U^{1/a} for a < 1, in logs so that tiny shapes do not
	// underflow; 1 − Float64() lies in (0, 1].
	g := distuv.Gamma{Alpha: a + 1, Beta: 1, Src: r}.Rand()
	return math.Log(g) + math.Log(1-r.Float64())/a + math.Log(theta)
}

// Bounds is the input range [Inf, Sup] of the mechanism: inf L and sup L of
// Lemma 1, the values L can take over the data domain.
type Bounds struct {
	Inf, Sup float64
}

// Validate reports whether 0 < Inf ≤ Sup < ∞.
func (b Bounds) Validate() error {
	if !(b.Inf > 0) || !(b.Sup >= b.Inf) || math.IsInf(b.Sup, 1) {
		return fmt.Errorf("gamma: need 0 < inf L ≤ sup L < ∞, got [%v, %v]", b.Inf, b.Sup)
	}
	return nil
}

// Ratio returns sup L / inf L, on which (with θ/inf L and ε) δ depends.
func (b Bounds) Ratio() float64 { return b.Sup / b.Inf }

// lgamma returns ln Γ(x) for x > 0.
func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// Thresholds of ln t below which t^s/Γ(s+1) replaces P(s, t) (t underflows,
// and the series P(s,t) = t^s e^{−t}/Γ(s+1)·(1 + t/(s+1) + …) is exact to
// float64 there), and above which P(s, t) = 1 (t ≥ e^{700} exceeds any shape
// used here by hundreds of orders of magnitude).
const (
	lnTinyT = -700.0
	lnHugeT = 700.0
)

// lowerReg returns P(s, t) = γ(s, t)/Γ(s), the regularized lower incomplete
// gamma function, given ln t.
func lowerReg(s, lnT float64) float64 {
	switch {
	case lnT < lnTinyT:
		return math.Exp(s*lnT - lgamma(s+1))
	case lnT > lnHugeT:
		return 1
	}
	return mathext.GammaIncReg(s, math.Exp(lnT))
}

// upperReg returns Q(s, t) = 1 − P(s, t), given ln t.
func upperReg(s, lnT float64) float64 {
	switch {
	case lnT < lnTinyT:
		return -math.Expm1(s*lnT - lgamma(s+1))
	case lnT > lnHugeT:
		return 0
	}
	return mathext.GammaIncRegComp(s, math.Exp(lnT))
}

// minShape is the smallest shape sup L/θ at which Tails evaluates Lemma 1
// directly. Below it the terms equal their limits as θ → ∞ (limitTails) to
// every digit of a float64: ln Γ(x) = −ln x − γx + O(x²) for small x, so the
// exponents and the factors 1/Γ(x+1) differ from the limit's by a relative
// γ·sup L/θ < 0.58·2⁻⁶⁰ ≈ 5e-19, far below the 2⁻⁵³ of a float64 — while the
// direct evaluation subtracts two ln Γ of about −ln x and multiplies the
// difference by θ/(sup L − inf L), losing digits as θ grows (six of them for
// sup L/inf L = 1 + 1e-9), and towards θ = 10³⁰⁸ overflows (δ = 0 and 0.28
// on either side of a floor of 0.18).
const minShape = 0x1p-60

// Tails returns the two terms of Lemma 1 at (ε, θ): up = P[loss ≥ ε] when
// the input is sup L and the alternative inf L, down the same with the roles
// swapped. Delta is their maximum. For θ beyond 2⁶⁰·sup L (≈ 1.2e18·sup L),
// or wherever the exponent ln t overflows, they are their limits as θ → ∞,
// whose maximum is Floor: equal to the exact terms to float64 precision
// (see minShape).
func Tails(eps, theta float64, b Bounds) (up, down float64) {
	d := b.Sup - b.Inf
	if d == 0 {
		return 0, 0 // a single possible input: the output reveals nothing
	}
	s, i := b.Sup/theta, b.Inf/theta
	if s < minShape {
		return limitTails(eps, b)
	}
	lg := lgamma(s) - lgamma(i)
	k := theta / d
	lnUp, lnDown := (eps+lg)*k, (-eps+lg)*k
	if math.IsInf(lnUp, 0) || math.IsInf(lnDown, 0) {
		return limitTails(eps, b)
	}
	return upperReg(s, lnUp), lowerReg(i, lnDown)
}

// limitTails returns the limits of the two terms of Lemma 1 as θ → ∞
// (spec random-walk §3.3), with r = sup L/inf L:
//
//	up   → [ε < ln r]·(1 − e^{sup L(ε − ln r)/(sup L − inf L)}),
//	down → e^{−inf L(ε + ln r)/(sup L − inf L)}.
func limitTails(eps float64, b Bounds) (up, down float64) {
	d := b.Sup - b.Inf
	lr := math.Log(b.Ratio())
	down = math.Exp(-b.Inf * (eps + lr) / d)
	if eps < lr {
		up = -math.Expm1(b.Sup * (eps - lr) / d)
	}
	return up, down
}

// Delta returns Lemma 1's δ(ε, θ): the Gamma mechanism with noise θ on inputs
// in b is (ε, δ)-LDP for every δ ≥ Delta(ε, θ, b).
func Delta(eps, theta float64, b Bounds) float64 {
	up, down := Tails(eps, theta, b)
	return max(up, down)
}

// Floor returns δ_∞(ε), the limit of Delta as θ → ∞ (spec random-walk §3.3):
//
//	δ_∞ = max{ e^{−inf L(ε + ln r)/(sup L − inf L)}, [ε < ln r]·(1 − e^{sup L(ε − ln r)/(sup L − inf L)}) },
//
// with r = sup L/inf L. For ε ≥ ln r, δ decreases to it and no amount of
// noise reaches a δ below it; for ε < ln r, δ(θ) dips slightly below it at
// finite θ before rising back (see Theta).
func Floor(eps float64, b Bounds) float64 {
	if b.Sup == b.Inf {
		return 0
	}
	up, down := limitTails(eps, b)
	return max(down, up)
}

// NoiseSD returns the standard deviation √(Lθ) of the mechanism's output on
// input l, computed as √L·√θ so that it stays finite for every finite L and
// θ (Lθ itself overflows beyond about 1.8·10³⁰⁸).
func NoiseSD(l, theta float64) float64 { return math.Sqrt(l) * math.Sqrt(theta) }

// ErrInfeasible is returned by Theta when no θ in its search range reaches
// the target δ.
var ErrInfeasible = errors.New("gamma: target δ is not reachable with any θ")

// Search range of Theta, relative to inf L: θ/inf L ∈ [1e-9, 1e12], scanned
// on a geometric grid of ratio 2^{1/8}. Beyond 1e12·inf L δ equals its floor
// to many digits (TestDeltaApproachesTheFloor).
const (
	minThetaRel = 1e-9
	maxThetaRel = 1e12
	gridStep    = math.Ln2 / 8
)

// Theta returns the smallest θ (to a relative precision of 1e-10) at which
// Delta(ε, θ) ≤ delta: the least noise that gives (ε, δ)-LDP by Lemma 1.
//
// δ(θ) is not monotone: for ε < ln(sup L/inf L) it dips slightly below its
// floor δ_∞ before rising back to it (at sup L/inf L = 2, ε = 0.5 the minimum
// is ≈ 0.3186 near θ = 16·inf L, the floor 0.3204). Theta therefore scans θ
// upwards on a geometric grid for the first point meeting the target and
// bisects between it and the grid point before; a target that no grid point
// meets returns an error wrapping ErrInfeasible.
func Theta(eps, delta float64, b Bounds) (float64, error) {
	if err := b.Validate(); err != nil {
		return 0, err
	}
	if !(eps >= 0) || math.IsInf(eps, 1) || !(delta > 0 && delta < 1) {
		return 0, fmt.Errorf("gamma: need ε ≥ 0 and 0 < δ < 1, got ε = %v, δ = %v", eps, delta)
	}
	lo, top := math.Log(minThetaRel*b.Inf), math.Log(maxThetaRel*b.Inf)
	if Delta(eps, math.Exp(lo), b) <= delta {
		return math.Exp(lo), nil
	}
	hi := lo
	for Delta(eps, math.Exp(hi), b) > delta {
		lo = hi
		if hi += gridStep; hi > top {
			return 0, fmt.Errorf("%w: δ = %v at ε = %v with sup L/inf L = %.6g (the floor δ_∞ is %.6g)", ErrInfeasible, delta, eps, b.Ratio(), Floor(eps, b))
		}
	}
	// Invariant: Delta(lo) > delta ≥ Delta(hi).
	for hi-lo > 1e-10 {
		mid := (lo + hi) / 2
		if Delta(eps, math.Exp(mid), b) > delta {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp(hi), nil
}

// LossUp returns the privacy loss ln p(Z | sup L) − ln p(Z | inf L) at an
// output Z = e^{lnZ}:
//
//	ln Γ(inf L/θ) − ln Γ(sup L/θ) + ((sup L − inf L)/θ)·ln(Z/θ).
//
// The loss of the opposite direction is its negative.
func LossUp(lnZ, theta float64, b Bounds) float64 {
	return lgamma(b.Inf/theta) - lgamma(b.Sup/theta) + (b.Sup-b.Inf)/theta*(lnZ-math.Log(theta))
}

// TruncatedLossUp returns the privacy loss ln p(Y | sup L) − ln p(Y | inf L)
// of the truncated Gamma mechanism, whose output Y is the draw clipped to
// [e^{lnLow}, e^{lnHigh}], at ln Y = lnY: LossUp inside the range, and at the
// clipping points, where the output has atoms, the log ratio of the two
// inputs' probabilities of the clipped tail.
func TruncatedLossUp(lnY, theta, lnLow, lnHigh float64, b Bounds) float64 {
	s, i := b.Sup/theta, b.Inf/theta
	lt := math.Log(theta)
	switch {
	case lnY <= lnLow:
		return lnLowerReg(s, lnLow-lt) - lnLowerReg(i, lnLow-lt)
	case lnY >= lnHigh:
		return math.Log(upperReg(s, lnHigh-lt)) - math.Log(upperReg(i, lnHigh-lt))
	}
	return LossUp(lnY, theta, b)
}

// lnLowerReg returns ln P(s, t) given ln t, without underflow for tiny t.
func lnLowerReg(s, lnT float64) float64 {
	if lnT < lnTinyT {
		return s*lnT - lgamma(s+1)
	}
	return math.Log(lowerReg(s, lnT))
}

// MonteCarloDelta estimates δ at every ε of eps by sampling: n outputs of
// the mechanism on sup L and n on inf L from r, the fraction of each whose
// privacy loss against the other input is at least ε, and the larger of the
// two fractions: the quantity Lemma 1 bounds. dst receives the estimates (it
// must have len(eps)); losses is scratch of length 2n, or nil.
func MonteCarloDelta(dst, eps []float64, theta float64, b Bounds, n int, r *rand.Rand, losses []float64) []float64 {
	if cap(losses) < 2*n {
		losses = make([]float64, 2*n)
	}
	losses = losses[:2*n]
	for k := range n {
		losses[k] = LossUp(LogSample(r, b.Sup, theta), theta, b)
		losses[n+k] = -LossUp(LogSample(r, b.Inf, theta), theta, b)
	}
	for e, x := range eps {
		var up, down int
		for k := range n {
			if losses[k] >= x {
				up++
			}
			if losses[n+k] >= x {
				down++
			}
		}
		dst[e] = float64(max(up, down)) / float64(n)
	}
	return losses
}
