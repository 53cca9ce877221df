package accountant

import (
	"fmt"
	"math"
)

// PoissonGaussianRDP returns the Rényi differential privacy at real order
// alpha > 1 of the sampled Gaussian mechanism: each record enters the batch
// independently with probability q (Poisson sampling), the batch's sum of
// ℓ2-clipped contributions gets N(0, z²C²) noise, under the add/remove-one
// neighbouring relation. It is the exact ε(α) = ln(A_α)/(α − 1) of Mironov,
// Talwar & Zhang 2019 ("Rényi differential privacy of the sampled Gaussian
// mechanism", §3.3), with A_α = E_{x∼μ₀}[(μ(x)/μ₀(x))^α], μ₀ = N(0, z²),
// μ = (1 − q)μ₀ + q·N(1, z²):
//
//   - integer α (§3.3, eq. for A_α by binomial expansion):
//     A_α = Σ_{i=0}^{α} C(α,i)(1 − q)^{α−i} q^i exp((i² − i)/(2z²));
//   - fractional α: A_α = A_{α,0} + A_{α,1}, two series split at
//     z₀ = z² ln(1/q − 1) + ½,
//     A_{α,0} = Σ_i C(α,i) q^i (1 − q)^{α−i} e^{(i²−i)/(2z²)} · ½erfc((i − z₀)/(√2 z)),
//     A_{α,1} = Σ_i C(α,i) q^{α−i} (1 − q)^i e^{((α−i)²−(α−i))/(2z²)} · ½erfc((z₀ − (α − i))/(√2 z)),
//     with generalized binomial coefficients (of alternating sign beyond
//     i > α), summed until both terms fall below e^{−40}·A.
//
// Everything is summed in log space with signs. q = 0 gives 0 and q = 1 the
// unsampled α/(2z²).
func PoissonGaussianRDP(alpha, q, z float64) float64 {
	if !(alpha > 1) || math.IsInf(alpha, 1) {
		panic(fmt.Sprintf("accountant: Rényi order %g must be finite and exceed 1", alpha))
	}
	if !(q >= 0 && q <= 1) {
		panic(fmt.Sprintf("accountant: sampling rate q = %g must lie in [0, 1]", q))
	}
	mustPositive("z", z)
	switch {
	case q == 0:
		return 0
	case q == 1:
		return GaussianRDP(alpha, z)
	}
	var logA float64
	if alpha == math.Trunc(alpha) && alpha <= 1<<20 {
		logA = logAInt(int(alpha), q, z)
	} else {
		logA = logAFrac(alpha, q, z)
	}
	return max(logA, 0) / (alpha - 1)
}

func logAInt(alpha int, q, z float64) float64 {
	terms := make([]float64, alpha+1)
	lq, l1q := math.Log(q), math.Log1p(-q)
	for i := range terms {
		fi := float64(i)
		terms[i] = logBinomial(alpha, i) + fi*lq + float64(alpha-i)*l1q + (fi*fi-fi)/(2*z*z)
	}
	return logSumExp(terms)
}

// signedLog is ±e^mag; mag = −∞ is zero.
type signedLog struct {
	neg bool
	mag float64
}

func (a signedLog) add(b signedLog) signedLog {
	if math.IsInf(b.mag, -1) {
		return a
	}
	if math.IsInf(a.mag, -1) {
		return b
	}
	if a.neg == b.neg {
		hi, lo := max(a.mag, b.mag), min(a.mag, b.mag)
		return signedLog{a.neg, hi + math.Log1p(math.Exp(lo-hi))}
	}
	if a.mag == b.mag {
		return signedLog{false, math.Inf(-1)}
	}
	big, small := a, b
	if b.mag > a.mag {
		big, small = b, a
	}
	return signedLog{big.neg, big.mag + math.Log(-math.Expm1(small.mag-big.mag))}
}

func logAFrac(alpha, q, z float64) float64 {
	lq, l1q := math.Log(q), math.Log1p(-q)
	z0 := z*z*math.Log(1/q-1) + 0.5
	lgA, _ := math.Lgamma(alpha + 1)
	a0 := signedLog{false, math.Inf(-1)}
	a1 := a0
	for i := 0; ; i++ {
		fi := float64(i)
		j := alpha - fi
		lgI, _ := math.Lgamma(fi + 1)
		lgJ, signJ := math.Lgamma(j + 1)
		logCoef := lgA - lgI - lgJ
		neg := signJ < 0
		s0 := logCoef + fi*lq + j*l1q + (fi*fi-fi)/(2*z*z) + math.Log(0.5) + logErfc((fi-z0)/(math.Sqrt2*z))
		s1 := logCoef + j*lq + fi*l1q + (j*j-j)/(2*z*z) + math.Log(0.5) + logErfc((z0-j)/(math.Sqrt2*z))
		a0 = a0.add(signedLog{neg, s0})
		a1 = a1.add(signedLog{neg, s1})
		total := a0.add(a1)
		if fi > alpha && max(s0, s1) < total.mag-40 {
			if total.neg {
				panic(fmt.Sprintf("accountant: A_α negative at α = %g, q = %g, z = %g", alpha, q, z))
			}
			return total.mag
		}
		if i > 1<<16 {
			panic(fmt.Sprintf("accountant: A_α did not converge at α = %g, q = %g, z = %g", alpha, q, z))
		}
	}
}

// logErfc returns ln erfc(x) without underflow: directly while erfc(x) is
// far from underflow, else ln 2 + ln φ(x√2) + ln R(x√2) with the Mills ratio
// R (erfc(x) = 2Q(x√2) = 2φ(x√2)R(x√2)).
func logErfc(x float64) float64 {
	if x < 5 {
		return math.Log(math.Erfc(x))
	}
	t := x * math.Sqrt2
	return math.Ln2 - t*t/2 - 0.5*math.Log(2*math.Pi) + math.Log(millsRatio(t))
}
