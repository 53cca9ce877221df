package manyrun

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"maple/privacy/internal/stattest"
)

// shiftUnits draws n units of rounds observations each: σξ plus s with
// probability q when in, minus s with probability q when out and opposite,
// plus a per-round offset m_t common to every unit (what the rest of the
// training adds).
func shiftUnits(r *rand.Rand, n, rounds int, s, sigma, q float64, in, opposite bool, m []float64) [][]float64 {
	units := make([][]float64, n)
	for u := range units {
		x := make([]float64, rounds)
		for t := range x {
			x[t] = m[t] + sigma*r.NormFloat64()
			switch {
			case in && r.Float64() < q:
				x[t] += s
			case !in && opposite && r.Float64() < q:
				x[t] -= s
			}
		}
		units[u] = x
	}
	return units
}

// The bound exceeds the true θ = s/σ no more often than the confidence
// allows: 300 audits at 95 % may exceed it at most MaxExceedances(300,
// 0.05, 10⁻³) times (a binomial tail of 10⁻³ for a correct bound), under
// add/remove and replace-one, with a common offset per round.
func TestShiftBoundCoverage(t *testing.T) {
	const audits, n, rounds, s, sigma, q = 300, 200, 10, 1.0, 2.5, 0.5
	theta := s / sigma
	for _, opposite := range []bool{false, true} {
		r := rand.New(rand.NewPCG(7, 11))
		m := make([]float64, rounds)
		for t := range m {
			m[t] = 3 * r.NormFloat64()
		}
		over := 0
		for range audits {
			in := shiftUnits(r, n, rounds, s, sigma, q, true, opposite, m)
			out := shiftUnits(r, n, rounds, s, sigma, q, false, opposite, m)
			b, err := GaussianShift(in, out, q, opposite, 0.95)
			if err != nil {
				t.Fatal(err)
			}
			if b.Theta > theta {
				over++
			}
		}
		if max := stattest.MaxExceedances(audits, 0.05, 1e-3); over > max {
			t.Errorf("opposite %v: the bound exceeded θ = %v in %d of %d audits, more than %d", opposite, theta, over, audits, max)
		}
	}
}

// With 1 000 units a side of 10 rounds at q = ½, s/σ = 0.4, the bound is
// where its construction puts it: D = q·s = 0.5 less 1.96 standard errors
// √(2(σ² + q(1 − q)s²)/(T·n)) = 0.036, over q times σ's upper bound
// (1 + 1.96/√(2·df))·σ: θ⁻ ≈ 0.339, within 4 of its standard deviations
// (≈ 0.0284: the standard error over q·σ⁺).
func TestShiftBoundIsNearTheTruth(t *testing.T) {
	const n, rounds, s, sigma, q = 1000, 10, 1.0, 2.5, 0.5
	r := rand.New(rand.NewPCG(3, 5))
	m := make([]float64, rounds)
	in := shiftUnits(r, n, rounds, s, sigma, q, true, false, m)
	out := shiftUnits(r, n, rounds, s, sigma, q, false, false, m)
	b, err := GaussianShift(in, out, q, false, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	se := math.Sqrt(2 * (sigma*sigma + q*(1-q)*s*s) / (rounds * n))
	sigmaUp := sigma * (1 + 1.96/math.Sqrt(2*float64((n-1)*rounds)))
	want := (q*s - 1.96*se) / (q * sigmaUp)
	sd := se / (q * sigmaUp)
	if math.Abs(b.Theta-want) > 4*sd {
		t.Errorf("θ⁻ = %.4g, want %.4g ± %.3g", b.Theta, want, 4*sd)
	}
	if !strings.Contains(b.Description, "It assumes") {
		t.Errorf("the description states no assumption: %s", b.Description)
	}
}

func TestShiftBoundErrors(t *testing.T) {
	units := func(n int, edit func(u [][]float64)) [][]float64 {
		x := make([][]float64, n)
		for i := range x {
			x[i] = []float64{1, 2}
		}
		if edit != nil {
			edit(x)
		}
		return x
	}
	enough := units(MinShiftUnits, nil)
	for _, c := range []struct {
		in, out [][]float64
		rate    float64
		conf    float64
		name    string
	}{
		{units(MinShiftUnits-1, nil), enough, 0.5, 0.95, "units"},
		{enough, enough, 0, 0.95, "rate"},
		{enough, enough, 0.5, 1, "confidence"},
		{enough, units(MinShiftUnits, func(u [][]float64) { u[1] = u[1][:1] }), 0.5, 0.95, "out[1]"},
		{units(MinShiftUnits, func(u [][]float64) { u[0] = []float64{1, math.NaN()} }), enough, 0.5, 0.95, "in[0][1]"},
		// 30 units of 2 rounds at rate 0.1: 6 rounds expected to carry
		// the canary, fewer than MinShiftEvents.
		{enough, enough, 0.1, 0.95, "rounds"},
	} {
		if _, err := GaussianShift(c.in, c.out, c.rate, false, c.conf); err == nil || !strings.HasPrefix(err.Error(), c.name+":") {
			t.Errorf("want an error naming %s, got %v", c.name, err)
		}
	}
}
