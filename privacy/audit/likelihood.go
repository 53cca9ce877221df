package audit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"

	"maple/privacy/noise"
)

// This file is the other half of the package: not what an eavesdropper
// reconstructs, but how well a differential-privacy auditor tells two
// neighbouring datasets apart from the same messages. The auditor knows both
// datasets and everything but the noise, so that it knows the mean of each
// noisy coordinate x = y + n under either dataset, μ₀ = y(D) or μ₁ = y(D′),
// and the law of n; its best test (Neyman–Pearson) adds up the log-likelihood
// ratios log f(x − μ₁) − log f(x − μ₀) of the coordinates it sees.

// Noise is the law of the noise on one coordinate of a message: a Laplace
// variable, a Gaussian one, or c times the sum of n independent Laplace
// variables (the local graph-homomorphic mask of a sender with n partners,
// which a receiver weighs by a = 1/c). The zero value is not a law; use the
// constructors.
type Noise struct {
	law   noiseLaw
	scale float64 // the Laplace scale b of each term, or the Gaussian σ
	terms int     // the number of Laplace terms (1 for Laplace)
	// coef[k] is the log of the k-th coefficient of the density of a sum
	// of terms > 1 Laplace variables (logLaplaceSum), computed once.
	coef []float64
}

type noiseLaw int8

const (
	laplaceLaw noiseLaw = iota + 1
	gaussianLaw
)

// LaplaceNoise returns the zero-mean Laplace law of standard deviation std
// (scale std/√2, as package noise draws it).
func LaplaceNoise(std float64) Noise { return LaplaceSumNoise(1, std, 1) }

// GaussianNoise returns the zero-mean normal law of standard deviation std.
func GaussianNoise(std float64) Noise {
	mustPositiveFinite("standard deviation", std)
	return Noise{law: gaussianLaw, scale: std, terms: 1}
}

// MechanismNoise returns the law of a draw of mechanism m of standard
// deviation std, as package noise draws it: GaussianNoise or LaplaceNoise.
func MechanismNoise(m noise.Mechanism, std float64) Noise {
	if m == noise.Gaussian {
		return GaussianNoise(std)
	}
	return LaplaceNoise(std)
}

// LaplaceSumNoise returns the law of c·(g₁ + … + g_n), the g_i independent
// zero-mean Laplace variables of standard deviation std: the mask a local
// graph-homomorphic sender with n partners adds to its message to a receiver
// that gives it the weight 1/c.
func LaplaceSumNoise(n int, std, c float64) Noise {
	if n < 1 {
		panic(fmt.Sprintf("audit: a sum of %d Laplace variables", n))
	}
	mustPositiveFinite("standard deviation", std)
	mustPositiveFinite("factor", math.Abs(c))
	return Noise{law: laplaceLaw, scale: math.Abs(c) * std / math.Sqrt2, terms: n, coef: laplaceSumCoefficients(n)}
}

// Scaled returns the law of c·n for n of law l, c ≠ 0: the law of a draw a
// message carries multiplied by c (a graph-homomorphic edge coefficient).
func (l Noise) Scaled(c float64) Noise {
	mustPositiveFinite("factor", math.Abs(c))
	l.scale *= math.Abs(c)
	return l
}

// Scale returns the law's scale: the Laplace scale b of each term (times
// the factor), or the Gaussian σ.
func (l Noise) Scale() float64 { return l.scale }

// String describes the law.
func (l Noise) String() string {
	switch {
	case l.law == gaussianLaw:
		return fmt.Sprintf("Gaussian(σ = %g)", l.scale)
	case l.terms == 1:
		return fmt.Sprintf("Laplace(b = %g)", l.scale)
	}
	return fmt.Sprintf("sum of %d Laplace(b = %g)", l.terms, l.scale)
}

// LogDensity returns log f(x), f the density of the law.
func (l Noise) LogDensity(x float64) float64 {
	if l.law == gaussianLaw {
		z := x / l.scale
		return -z*z/2 - math.Log(l.scale) - math.Log(2*math.Pi)/2
	}
	return logLaplaceSum(l.coef, math.Abs(x)/l.scale) - math.Log(l.scale)
}

// LogRatio returns log f(x − mu1) − log f(x − mu0): the log-likelihood ratio
// of an observation x of a value of mean mu1 against mean mu0 under this
// noise, positive when x is likelier under mu1. For one Laplace or Gaussian
// term it is computed in closed form, (|x − μ₀| − |x − μ₁|)/b or
// ((x − μ₀)² − (x − μ₁)²)/(2σ²).
func (l Noise) LogRatio(x, mu0, mu1 float64) float64 {
	switch {
	case l.law == gaussianLaw:
		d0, d1 := x-mu0, x-mu1
		return (d0*d0 - d1*d1) / (2 * l.scale * l.scale)
	case l.terms == 1:
		return (math.Abs(x-mu0) - math.Abs(x-mu1)) / l.scale
	}
	return l.LogDensity(x-mu1) - l.LogDensity(x-mu0)
}

// Divergence returns the Kullback–Leibler divergence KL(f(· − d) ‖ f) of
// the law shifted by d from the law itself: the expected LogRatio(x, 0, d)
// when x has mean d, and, the law being symmetric, minus its expectation when
// x has mean 0. In closed form for one Laplace term, |d|/b + e^{−|d|/b} − 1,
// and for a Gaussian, d²/(2σ²); numerically (Gauss–Legendre on panels split
// at the density's kinks) for a sum of Laplace terms.
func (l Noise) Divergence(d float64) float64 {
	switch {
	case d == 0:
		return 0
	case l.law == gaussianLaw:
		return d * d / (2 * l.scale * l.scale)
	case l.terms == 1:
		u := math.Abs(d) / l.scale
		return u + math.Expm1(-u)
	}
	return l.divergence(d)
}

// divergence computes KL(f(· − d) ‖ f) = ∫ f(y)·(log f(y) − log f(y + d)) dy
// numerically: Gauss–Legendre rules of 16 nodes on panels at most four
// scales wide in each of the three intervals between −R, the kinks at y = 0
// (of f, for Laplace terms) and y = −d (of f(y + d)), and R, beyond which
// both tails, of order |y|^{n−1}e^{−|y|/b} (or e^{−y²/2σ²}), hold a mass
// below e^{−30}: R = |d| + (40 + 4n)·scale.
func (l Noise) divergence(d float64) float64 {
	f := func(y float64) float64 {
		ly := l.LogDensity(y)
		return math.Exp(ly) * (ly - l.LogDensity(y+d))
	}
	R := math.Abs(d) + (40+4*float64(l.terms))*l.scale
	cuts := [4]float64{-R, min(0, -d), max(0, -d), R}
	var sum float64
	for k := range 3 {
		lo, hi := cuts[k], cuts[k+1]
		panels := max(1, int(math.Ceil((hi-lo)/(4*l.scale))))
		w := (hi - lo) / float64(panels)
		for p := range panels {
			sum += quad.Fixed(f, lo+float64(p)*w, lo+float64(p+1)*w, 16, nil, 0)
		}
	}
	return sum
}

// laplaceSumCoefficients returns, for a sum of n > 1 independent Laplace
// variables of scale b, the logs of the coefficients c_k of its density at
// |x| = b·u,
//
//	f_n(x) = (e^{−u}/b) Σ_{k=0}^{n−1} c_k·u^{n−1−k},   c_k = C(n−1, k)·(n−1+k)! / ((n−1)!²·2^{n+k}):
//
// the sum is the difference of two independent Gamma(n, b) variables, and
// expanding (x + t)^{n−1} in their convolution gives the terms. For n = 1 it
// is the Laplace density e^{−u}/(2b), and it returns nil.
func laplaceSumCoefficients(n int) []float64 {
	if n == 1 {
		return nil
	}
	lgN, _ := math.Lgamma(float64(n))
	coef := make([]float64, n)
	for k := range n {
		lg, _ := math.Lgamma(float64(n + k))
		coef[k] = lchoose(n-1, k) + lg - 2*lgN - float64(n+k)*math.Ln2
	}
	return coef
}

// logLaplaceSum returns log(b·f_n(b·u)) from the coefficients of
// laplaceSumCoefficients (nil for n = 1), adding the terms in the log
// domain.
func logLaplaceSum(coef []float64, u float64) float64 {
	if coef == nil {
		return -u - math.Ln2
	}
	n := len(coef)
	lu := math.Log(u) // −Inf at u = 0: only the k = n−1 term remains
	top := math.Inf(-1)
	for k, c := range coef {
		if e := n - 1 - k; e > 0 {
			c += float64(e) * lu
		}
		top = max(top, c)
	}
	var s float64
	for k, c := range coef {
		if e := n - 1 - k; e > 0 {
			c += float64(e) * lu
		}
		s += math.Exp(c - top)
	}
	return -u + top + math.Log(s)
}

// lchoose returns log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

func mustPositiveFinite(name string, x float64) {
	if !(x > 0) || math.IsInf(x, 1) {
		panic(fmt.Sprintf("audit: %s %v must be positive and finite", name, x))
	}
}
