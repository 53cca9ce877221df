// Package stattest holds the goodness-of-fit statistics the privacy tests use to
// check that a sampler draws from the distribution it claims: the one-sample
// Kolmogorov–Smirnov statistic and its asymptotic critical value, and the
// sample mean and variance with their standard errors; and the binomial
// count the audits' coverage tests allow.
package stattest

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// MaxExceedances returns the smallest c with P[Binomial(n, p) > c] ≤ level:
// of n independent trials that each fail with probability at most p, more
// than c fail with probability at most level. A coverage test of a bound
// that claims to fail with probability at most p asserts at most c failures
// in n independent repetitions; it fails wrongly with probability at most
// level, and a bound that fails more often than it claims makes it fail.
func MaxExceedances(n int, p, level float64) int {
	b := distuv.Binomial{N: float64(n), P: p}
	for c := range n {
		if 1-b.CDF(float64(c)) <= level {
			return c
		}
	}
	return n
}

// KS returns the one-sample Kolmogorov–Smirnov statistic
//
//	D = sup_x |F_n(x) − F(x)|
//
// of the samples against the continuous CDF cdf. The samples are sorted in
// place. With x_(1) ≤ … ≤ x_(n), the supremum is attained at a sample point:
// D = max_i max(i/n − F(x_(i)), F(x_(i)) − (i−1)/n).
func KS(samples []float64, cdf func(float64) float64) float64 {
	slices.Sort(samples)
	n := float64(len(samples))
	var d float64
	for i, x := range samples {
		f := cdf(x)
		d = max(d, float64(i+1)/n-f, f-float64(i)/n)
	}
	return d
}

// KSCritical returns the asymptotic critical value of D at level alpha for n
// samples, c(α)/√n with c(α) = √(−ln(α/2)/2) (Kolmogorov's limit law
// P(√n·D > c) → 2Σ_k (−1)^{k−1} e^{−2k²c²}, of which the first term dominates
// for small α). For α = 0.001, c ≈ 1.9495, the usual "1.95/√n".
func KSCritical(n int, alpha float64) float64 {
	return math.Sqrt(-math.Log(alpha/2)/2) / math.Sqrt(float64(n))
}

// MeanVar returns the sample mean and the unbiased sample variance of x.
func MeanVar(x []float64) (mean, variance float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	for _, v := range x {
		d := v - mean
		variance += d * d
	}
	return mean, variance / (n - 1)
}

// MeanSE returns the standard error σ/√n of the mean of n draws with standard
// deviation sd.
func MeanSE(sd float64, n int) float64 {
	return sd / math.Sqrt(float64(n))
}

// VarianceSE returns the standard error √((μ₄ − σ⁴)/n) of the sample variance of
// n draws with variance v and kurtosis μ₄/σ⁴ = kurtosis (3 for a Normal, 6 for a
// Laplace).
func VarianceSE(v, kurtosis float64, n int) float64 {
	return v * math.Sqrt((kurtosis-1)/float64(n))
}
