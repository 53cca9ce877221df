// Package auditscore holds the scores a privacy auditor computes from what it
// observes, higher meaning "the canary was in": the log-likelihood ratio of
// the Gaussian and of the Laplace mechanism with Poisson participation, which
// are the most powerful tests for those mechanisms (Neyman–Pearson), and a
// linear discriminant fitted on half of the runs for views whose distribution
// the auditor does not know. The one-run (privacy/onerun) and many-run
// (privacy/manyrun) audits turn the scores into lower bounds on ε.
//
// # Why the likelihood ratio
//
// An audit decides between two hypotheses about one observation y: the
// canary was out (y ~ P₀) or in (y ~ P₁). By the Neyman–Pearson lemma the
// test that thresholds log(p₁(y)/p₀(y)) has the smallest false-negative
// rate at every false-positive rate, so its errors trace the mechanism's
// trade-off curve itself, and the audit's lower bound can reach the
// accountant's upper bound only with such a score (or one monotone in it).
// The ratio is only optimal for the model it is computed under: if the
// auditor's model of the view is wrong (unknown other contributions, a
// different noise), the score is still a valid score — every audit bound
// holds for any score fixed before the evaluated data are seen — but a
// weaker one.
package auditscore

import (
	"fmt"
	"math"
)

// Gaussian returns the log-likelihood ratio
//
//	Σ_t log((1 − q) + q·exp((s·x_t − s²/2)/σ²))
//
// of T observations x_t of a Gaussian mechanism under Poisson participation:
// with the canary out, the x_t are i.i.d. N(0, σ²); with it in, each release
// is independently shifted by s with probability q, so x_t ~ (1 − q)·N(0, σ²)
// + q·N(s, σ²). At q = 1 it is the linear score (s·Σx_t − T·s²/2)/σ².
//
// For a white-box auditor of DP-SGD or DP-FedAvg, x_t is the released step's
// component along the canary's direction (the canary's own push is s along
// it, the noise N(0, σ²) per coordinate), with whatever else moves the model
// along that direction subtracted; it is the most powerful test of "in"
// against "out" exactly when that model holds (other contributions known or
// orthogonal to the direction, rounds independent given the past), and the
// basis of the idealised one-run audit of DP-FedAvg (privacy/onerun's
// TestIdealisedDPFedAvg).
func Gaussian(x []float64, s, sigma, q float64) (float64, error) {
	if err := checkMixture(x, s, q); err != nil {
		return 0, err
	}
	if !(sigma > 0) || math.IsInf(sigma, 1) {
		return 0, fmt.Errorf("sigma: must be positive and finite, got %v", sigma)
	}
	v := sigma * sigma
	return mixture(x, q, func(x float64) float64 { return (s*x - s*s/2) / v }), nil
}

// Laplace returns the log-likelihood ratio
//
//	Σ_t log((1 − q) + q·exp((|x_t| − |x_t − s|)/b))
//
// of T observations of a scalar Laplace mechanism of scale b under Poisson
// participation: x_t ~ Lap(0, b) with the canary out, and with it in
// x_t ~ (1 − q)·Lap(0, b) + q·Lap(s, b). It is the most powerful test for a
// released scalar (or one coordinate of per-coordinate Laplace noise) that
// the canary shifts by s. Each round's term lies in [−|s|/b, |s|/b]: unlike
// the Gaussian's, a Laplace canary's evidence saturates, no observation of
// one round moving the log ratio by more than the round's ε = |s|/b.
func Laplace(x []float64, s, b, q float64) (float64, error) {
	if err := checkMixture(x, s, q); err != nil {
		return 0, err
	}
	if !(b > 0) || math.IsInf(b, 1) {
		return 0, fmt.Errorf("b: must be positive and finite, got %v", b)
	}
	return mixture(x, q, func(x float64) float64 { return (math.Abs(x) - math.Abs(x-s)) / b }), nil
}

// mixture returns Σ_t log((1 − q) + q·e^{a(x_t)}), each term as
// log-sum-exp so that a large a(x_t) neither overflows nor loses the 1 − q.
func mixture(x []float64, q float64, a func(float64) float64) float64 {
	var sum float64
	if q == 1 {
		for _, xt := range x {
			sum += a(xt)
		}
		return sum
	}
	l1q, lq := math.Log1p(-q), math.Log(q)
	for _, xt := range x {
		u, w := l1q, lq+a(xt)
		if u < w {
			u, w = w, u
		}
		sum += u + math.Log1p(math.Exp(w-u))
	}
	return sum
}

func checkMixture(x []float64, s, q float64) error {
	switch {
	case len(x) == 0:
		return fmt.Errorf("x: no observations")
	case !(q > 0 && q <= 1):
		return fmt.Errorf("q: the participation probability must lie in (0, 1], got %v", q)
	case math.IsNaN(s) || math.IsInf(s, 0):
		return fmt.Errorf("s: the canary's shift must be finite, got %v", s)
	}
	for t, xt := range x {
		if math.IsNaN(xt) || math.IsInf(xt, 0) {
			return fmt.Errorf("x[%d]: must be finite, got %v", t, xt)
		}
	}
	return nil
}
