// Package onerun turns the outcome of a one-run privacy audit into an
// empirical lower bound on ε (Steinke, Nasr & Jagielski, "Privacy auditing
// with one (1) training run", NeurIPS 2023).
//
// The auditor inserts m canaries (examples for DP-SGD, clients for
// DP-FedAvg), each included independently with probability ½, trains once,
// and then guesses inclusion for r of them (abstaining on the rest); v of
// the guesses are right. If the training is (ε, δ)-DP, the number of right
// guesses is stochastically dominated, up to a δ term, by Binomial(r, q)
// with q = e^ε/(1 + e^ε) — the accuracy of ε-randomized response — so
// (their Theorem 3.1 and its (ε, δ) form, Proposition 5.2 and Appendix D)
//
//	P[W ≥ v] ≤ β(ε) + α(ε)·2mδ,
//	β(ε) = P[Binomial(r, q) ≥ v],
//	α(ε) = max_{1≤i≤v} (1/i)·P[v − i ≤ Binomial(r, q) < v].
//
// PValue evaluates the right-hand side; LowerBound returns the largest ε
// whose p-value is still below 1 − confidence: with that confidence the
// training is not (ε′, δ)-DP for any ε′ below it. A correct accountant's ε
// can therefore exceed the bound only with probability 1 − confidence
// (TestBoundRarelyExceedsTheTruth).
//
// From scores to a bound (guess.go): an auditor with a score per canary
// (higher meaning "in", e.g. privacy/auditscore's likelihood ratios) guesses
// "in" for the highest and "out" for the lowest and abstains on the rest
// (Guess, Audit). The guess counts must be fixed before the audited run is
// seen — by the scenario, or planned from a model or a pilot run (Plan,
// ExpectedBound) — or else chosen as the best of a grid on the run itself
// with the confidence split over the grid (AuditBest, a union bound).
package onerun

import (
	"fmt"
	"math"
)

// Outcome is what an audit observed.
type Outcome struct {
	// Canaries is m, the canaries randomized in or out.
	Canaries int
	// Guesses is r, the canaries the auditor did not abstain on.
	Guesses int
	// Correct is v, the right guesses.
	Correct int
}

// Validate reports the first impossible count.
func (o Outcome) Validate() error {
	switch {
	case o.Canaries < 1:
		return fmt.Errorf("canaries: must be at least 1, got %d", o.Canaries)
	case o.Guesses < 0 || o.Guesses > o.Canaries:
		return fmt.Errorf("guesses: must lie in [0, %d], got %d", o.Canaries, o.Guesses)
	case o.Correct < 0 || o.Correct > o.Guesses:
		return fmt.Errorf("correct: must lie in [0, %d], got %d", o.Guesses, o.Correct)
	}
	return nil
}

// PValue returns the bound β(ε) + 2mδ·α(ε) on the probability of o.Correct
// or more right guesses under any (eps, delta)-DP training, at most 1.
func PValue(o Outcome, eps, delta float64) float64 {
	if err := o.Validate(); err != nil {
		panic("onerun: " + err.Error())
	}
	if !(eps >= 0) || !(delta >= 0 && delta <= 1) {
		panic(fmt.Sprintf("onerun: ε = %v, δ = %v", eps, delta))
	}
	r, v := o.Guesses, o.Correct
	if v == 0 {
		return 1
	}
	lq := -math.Log1p(math.Exp(-eps)) // ln q
	l1q := lq - eps                   // ln(1 − q), since q/(1 − q) = e^ε
	// ln P[Binomial(r, q) = v] by lgamma once; its neighbours by the ratio
	// of consecutive terms, P(k+1)/P(k) = (r − k)/(k + 1) · e^ε, which
	// loses a few ulps over r steps where lgamma per term would cost three
	// lgamma calls (TestPValueIsTheBinomialTail bounds the drift).
	a, _ := math.Lgamma(float64(r + 1))
	b, _ := math.Lgamma(float64(v + 1))
	c, _ := math.Lgamma(float64(r - v + 1))
	atV := a - b - c + float64(v)*lq + float64(r-v)*l1q
	terms := make([]float64, 0, r-v+1)
	for k, l := v, atV; k <= r; k++ {
		terms = append(terms, l)
		l += math.Log(float64(r-k)/float64(k+1)) + eps
	}
	p := math.Exp(logSumExp(terms))
	if delta > 0 {
		var alpha, below float64
		l := atV
		for i := 1; i <= v; i++ {
			k := v - i // P(k) from P(k+1) = l
			l += math.Log(float64(k+1)/float64(r-k)) - eps
			below += math.Exp(l)
			alpha = max(alpha, below/float64(i))
		}
		p += alpha * delta * 2 * float64(o.Canaries)
	}
	return min(p, 1)
}

// LowerBound returns the largest ε ≥ 0 (to 1e-9 absolute) at which PValue
// is below 1 − confidence, and 0 when even ε = 0 is not rejected. The
// p-value grows with ε, so ε is found by bisection.
func LowerBound(o Outcome, delta, confidence float64) (float64, error) {
	if err := o.Validate(); err != nil {
		return 0, err
	}
	if err := checkLevels(delta, confidence); err != nil {
		return 0, err
	}
	level := 1 - confidence
	if PValue(o, 0, delta) >= level {
		return 0, nil
	}
	lo, hi := 0.0, 1.0
	for PValue(o, hi, delta) < level {
		lo, hi = hi, 2*hi
		if hi > 1e4 {
			return math.Inf(1), nil // every guess right with δ = 0 and vast r
		}
	}
	for hi-lo > 1e-9 {
		mid := lo + (hi-lo)/2
		if PValue(o, mid, delta) < level {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

func logSumExp(xs []float64) float64 {
	m := math.Inf(-1)
	for _, x := range xs {
		m = max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	var s float64
	for _, x := range xs {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}
