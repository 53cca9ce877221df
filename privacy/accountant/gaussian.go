package accountant

import (
	"fmt"
	"math"
)

// GaussianDelta returns the exact δ(ε) of the Gaussian mechanism with
// sensitivity-to-noise ratio mu = Δ/σ (ℓ2 sensitivity Δ, noise N(0, σ²I)):
//
//	δ(ε) = Φ(μ/2 − ε/μ) − e^ε·Φ(−μ/2 − ε/μ),
//
// the smallest δ for which the mechanism is (ε, δ)-differentially private
// (Balle & Wang 2018, "Improving the Gaussian mechanism for differential
// privacy", Theorem 8; equivalently μ-Gaussian DP, Dong, Roth & Su 2022,
// Corollary 2.13). The second term is evaluated as φ(a)·R(μ/2 + ε/μ), with
// a = μ/2 − ε/μ and R the Mills ratio, since e^ε·φ(−μ/2 − ε/μ) = φ(a): it
// neither overflows nor underflows at the large ε of long compositions.
func GaussianDelta(mu, epsilon float64) float64 {
	mustPositive("μ", mu)
	mustNonNegative("ε", epsilon)
	a := mu/2 - epsilon/mu
	d := normalCDF(a) - normalPDF(a)*millsRatio(mu/2+epsilon/mu)
	return max(d, 0) // rounding can leave −1e-17 where δ is 0
}

// GaussianEpsilon returns the smallest ε ≥ 0 at which the Gaussian mechanism
// with ratio mu = Δ/σ is (ε, delta)-differentially private: the root of
// GaussianDelta(mu, ε) = delta, found by bisection (δ(ε) decreases in ε).
func GaussianEpsilon(mu, delta float64) float64 {
	mustPositive("μ", mu)
	mustProbability("δ", delta)
	if GaussianDelta(mu, 0) <= delta {
		return 0
	}
	lo, hi := 0.0, 1.0
	for GaussianDelta(mu, hi) > delta {
		lo, hi = hi, 2*hi
	}
	_, hi = bisect(func(e float64) bool { return GaussianDelta(mu, e) > delta }, lo, hi)
	return hi
}

// GaussianMu returns the largest ratio μ = Δ/σ at which the Gaussian
// mechanism is (epsilon, delta)-differentially private, the inverse of
// GaussianEpsilon: the σ that reaches a target is Δ/μ.
func GaussianMu(epsilon, delta float64) float64 {
	mustPositive("ε", epsilon)
	mustProbability("δ", delta)
	lo, hi := 0.0, 1.0
	for GaussianDelta(hi, epsilon) <= delta {
		lo, hi = hi, 2*hi
	}
	lo, _ = bisect(func(mu float64) bool { return mu == 0 || GaussianDelta(mu, epsilon) <= delta }, lo, hi)
	return lo
}

// GaussianComposedMu returns the ratio of n adaptively composed Gaussian
// mechanisms, each of sensitivity delta and noise σ: √n·Δ/σ. Their
// composition is exactly the Gaussian mechanism with that ratio (μ-GDP
// composes as √(μ₁² + … + μ_n²), Dong, Roth & Su 2022, Corollary 3.3), so
// GaussianDelta and GaussianEpsilon of the result are exact for the whole
// composition, not a bound on it.
func GaussianComposedMu(sensitivity, sigma float64, n int) float64 {
	mustNonNegative("Δ", sensitivity)
	mustPositive("σ", sigma)
	if n < 0 {
		panic(fmt.Sprintf("accountant: %d compositions", n))
	}
	return math.Sqrt(float64(n)) * sensitivity / sigma
}

// bisect narrows [lo, hi], where below(lo) is true and below(hi) false, to
// adjacent floating-point numbers around the boundary and returns them.
func bisect(below func(float64) bool, lo, hi float64) (float64, float64) {
	for {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			return lo, hi
		}
		if below(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
}

// normalCDF is Φ, the standard normal distribution function.
func normalCDF(x float64) float64 { return math.Erfc(-x/math.Sqrt2) / 2 }

// normalPDF is φ, the standard normal density.
func normalPDF(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }

// millsSwitch is where millsRatio changes from the direct quotient to the
// continued fraction: below it erfc and the density are far from underflow
// (erfc(5/√2) ≈ 5.7e-7), above it the continued fraction converges in a
// few dozen terms.
const millsSwitch = 5

// millsTerms is the depth of the continued fraction. Its convergence is
// slowest at the smallest t it is used for; at t = 5, 80 terms agree with the
// direct quotient to rounding (TestMillsRatio).
const millsTerms = 80

// millsRatio returns R(t) = (1 − Φ(t))/φ(t) for t ≥ 0: directly below
// millsSwitch, and above it by Laplace's continued fraction
// R(t) = 1/(t + 1/(t + 2/(t + 3/(t + …)))) (Abramowitz & Stegun 26.2.14),
// evaluated from the tail.
func millsRatio(t float64) float64 {
	if t < millsSwitch {
		return normalCDF(-t) / normalPDF(t)
	}
	f := t
	for k := millsTerms; k >= 1; k-- {
		f = t + float64(k)/f
	}
	return 1 / f
}

func mustProbability(name string, p float64) {
	if !(p > 0 && p < 1) {
		panic(fmt.Sprintf("accountant: %s = %g must lie in (0, 1)", name, p))
	}
}
