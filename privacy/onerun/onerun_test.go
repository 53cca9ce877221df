package onerun

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"maple/privacy/accountant"
)

// With every guess right and δ = 0 the p-value is q^r, so the bound solves
// q^r = 1 − c: ε = ln(q/(1 − q)) with q = (1 − c)^{1/r}. Bisection stops at
// 1e-9 absolute.
func TestAllCorrectClosedForm(t *testing.T) {
	for _, r := range []int{10, 100, 1000} {
		for _, c := range []float64{0.9, 0.95, 0.99} {
			q := math.Pow(1-c, 1/float64(r))
			want := math.Log(q / (1 - q))
			got, err := LowerBound(Outcome{Canaries: 2 * r, Guesses: r, Correct: r}, 0, c)
			if err != nil || math.Abs(got-want) > 2e-9 {
				t.Errorf("r = %d, c = %v: ε ≥ %.10f, want %.10f (%v)", r, c, got, want, err)
			}
		}
	}
}

// For δ = 0 the p-value is the binomial tail, which gonum computes
// independently (regularized incomplete beta); they agree to 1e-10
// relative.
func TestPValueIsTheBinomialTail(t *testing.T) {
	for _, tc := range []struct{ r, v int }{{100, 70}, {1000, 560}, {50, 50}, {20, 3}} {
		for _, eps := range []float64{0.1, 1, 3} {
			q := 1 / (1 + math.Exp(-eps))
			want := 1 - distuv.Binomial{N: float64(tc.r), P: q}.CDF(float64(tc.v-1))
			got := PValue(Outcome{Canaries: tc.r, Guesses: tc.r, Correct: tc.v}, eps, 0)
			if math.Abs(got-want) > 1e-10*want+1e-15 {
				t.Errorf("r = %d, v = %d, ε = %v: %v, want %v", tc.r, tc.v, eps, got, want)
			}
		}
	}
}

// The δ term only weakens the bound, and chance-level guessing proves
// nothing.
func TestDeltaAndChance(t *testing.T) {
	o := Outcome{Canaries: 1000, Guesses: 500, Correct: 400}
	e0, _ := LowerBound(o, 0, 0.95)
	e1, _ := LowerBound(o, 1e-5, 0.95)
	if !(e1 <= e0 && e0 > 0) {
		t.Errorf("δ = 0: %v, δ = 1e-5: %v", e0, e1)
	}
	if e, _ := LowerBound(Outcome{Canaries: 1000, Guesses: 1000, Correct: 500}, 0, 0.95); e != 0 {
		t.Errorf("chance-level guesses give ε ≥ %v", e)
	}
	for _, bad := range []Outcome{{0, 0, 0}, {10, 11, 0}, {10, 5, 6}} {
		if _, err := LowerBound(bad, 0, 0.95); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, err := LowerBound(o, 1, 0.95); err == nil {
		t.Error("δ = 1 accepted")
	}
}

// Known settings: the canaries go through a mechanism whose ε is known, and
// the bound at 95% confidence may exceed it in at most 5% of the audits
// (Theorem 3.1). Over 200 independent audits the count of exceedances is
// Binomial(200, ≤ 0.05); 22 or more has probability below 0.2%, so the test
// asserts at most 21.
//
//   - ε-randomized response on each of m = 1000 canaries, every canary
//     guessed (pure DP, δ = 0): the tight case.
//   - the Gaussian mechanism with μ = 2 on each canary (sensitivity 1,
//     noise σ = ½), the auditor guessing on the 200 largest |outputs|; its
//     exact ε at δ = 1e-5 is accountant.GaussianEpsilon(2, 1e-5).
func TestBoundRarelyExceedsTheTruth(t *testing.T) {
	const audits, m = 200, 1000
	for _, eps := range []float64{0.5, 2} {
		over := 0
		for a := range audits {
			r := rand.New(rand.NewPCG(uint64(a), 1))
			q := 1 / (1 + math.Exp(-eps))
			v := 0
			for range m {
				if r.Float64() < q {
					v++
				}
			}
			lb, _ := LowerBound(Outcome{m, m, v}, 0, 0.95)
			if lb > eps {
				over++
			}
		}
		if over > 21 {
			t.Errorf("randomized response ε = %v: bound above ε in %d of %d audits", eps, over, audits)
		}
	}
	delta := 1e-5
	truth := accountant.GaussianEpsilon(2, delta)
	over := 0
	best := 0.0
	for a := range audits {
		r := rand.New(rand.NewPCG(uint64(a), 2))
		type obs struct {
			x  float64
			in bool
		}
		o := make([]obs, m)
		for i := range o {
			in := r.Uint64()&1 == 1
			mean := -0.5
			if in {
				mean = 0.5
			}
			o[i] = obs{mean + 0.5*r.NormFloat64(), in}
		}
		slices.SortFunc(o, func(a, b obs) int { return cmpAbs(b.x, a.x) })
		v := 0
		for _, c := range o[:200] {
			if (c.x > 0) == c.in {
				v++
			}
		}
		lb, _ := LowerBound(Outcome{m, 200, v}, delta, 0.95)
		best = max(best, lb)
		if lb > truth {
			over++
		}
	}
	if over > 21 || best == 0 {
		t.Errorf("Gaussian μ = 2 (ε = %.3f): bound above it in %d of %d audits, largest bound %.3f", truth, over, audits, best)
	}
}

func cmpAbs(a, b float64) int {
	switch {
	case math.Abs(a) < math.Abs(b):
		return -1
	case math.Abs(a) > math.Abs(b):
		return 1
	}
	return 0
}
