package gamma

import (
	"errors"
	"math"
	"testing"

	"maple/algorithms/rng"
	"maple/privacy/internal/stattest"
)

// Reference values of Lemma 1 for inf L = 1, sup L = 2 (spec random-walk
// §3.3, computed independently and printed to four significant digits, so
// the comparison tolerance is half a unit of the fourth digit, relative).
func TestDeltaMatchesTheSpecTable(t *testing.T) {
	b := Bounds{Inf: 1, Sup: 2}
	eps := []float64{0.5, 1, 2, 3, 4, 5}
	table := []struct {
		theta float64
		delta []float64
	}{
		{0.1, []float64{0.8787, 0.8325, 0.7240, 0.6059, 0.4813, 0.3623}},
		{0.5, []float64{0.6147, 0.4374, 0.2279, 0.1046, 0.04419, 0.0177}},
		{1, []float64{0.5093, 0.3078, 0.1266, 0.04857, 0.01815, 0.006715}},
		{2, []float64{0.4209, 0.2309, 0.08599, 0.03169, 0.01166, 0.004289}},
		{10, []float64{0.3220, 0.1866, 0.06865, 0.02525, 0.00929, 0.003418}},
	}
	for _, row := range table {
		for k, e := range eps {
			got := Delta(e, row.theta, b)
			if math.Abs(got-row.delta[k]) > 5e-4*row.delta[k] {
				t.Errorf("δ(ε=%v, θ=%v) = %.6g, spec %.4g", e, row.theta, got, row.delta[k])
			}
		}
	}
	floors := []float64{0.3204, 0.1839, 0.06767, 0.02489, 0.009158, 0.003369}
	for k, e := range eps {
		if got := Floor(e, b); math.Abs(got-floors[k]) > 5e-4*floors[k] {
			t.Errorf("δ_∞(ε=%v) = %.6g, spec %.4g", e, got, floors[k])
		}
	}
}

// The spec's gonum cross-check, to nine digits.
func TestDeltaCrossCheck(t *testing.T) {
	for _, c := range []struct{ inf, sup, theta, eps, want float64 }{
		{1, 2, 1, 3, 0.048568007},
		{1, 10, 10, 1, 0.779890481},
	} {
		if got := Delta(c.eps, c.theta, Bounds{c.inf, c.sup}); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("δ(%v, %v, θ=%v, ε=%v) = %.9f, want %.9f", c.inf, c.sup, c.theta, c.eps, got, c.want)
		}
	}
}

// δ decreases in θ when ε ≥ ln(sup L/inf L); for smaller ε it dips below the
// floor before rising back (the documented non-monotonicity Theta copes with).
// Either way, far beyond the largest θ of the table (shapes down to 1e-12,
// where t underflows and the series branch is used) it equals the floor to
// 1e-6 relative.
func TestDeltaApproachesTheFloor(t *testing.T) {
	for _, b := range []Bounds{{1, 1.5}, {1, 2}, {1, 3}, {2, 20}} {
		for _, eps := range []float64{0.5, 1, 3, 6} {
			prev := math.Inf(1)
			monotone := eps >= math.Log(b.Ratio())
			for theta := 0.01 * b.Inf; theta < 1e13*b.Inf; theta *= 2 {
				d := Delta(eps, theta, b)
				// Allow rounding noise of a few ulps at the plateau.
				if monotone && d > prev*(1+1e-12) {
					t.Fatalf("%v, ε=%v: δ rises from %.15g to %.15g at θ=%g", b, eps, prev, d, theta)
				}
				prev = d
			}
			floor := Floor(eps, b)
			if math.Abs(prev-floor) > 1e-6*floor {
				t.Errorf("%v, ε=%v: δ(θ=1e13) = %.10g, floor %.10g", b, eps, prev, floor)
			}
		}
	}
	// The dip: at r = 2, ε = 0.5, δ(16) ≈ 0.3186 < δ_∞ ≈ 0.3204, so a target
	// of 0.319 is reachable although it lies below the floor.
	b := Bounds{1, 2}
	if d, f := Delta(0.5, 16, b), Floor(0.5, b); !(d < f-1e-3) {
		t.Errorf("δ(ε=0.5, θ=16) = %.5g, floor %.5g: expected the dip", d, f)
	}
	theta, err := Theta(0.5, 0.319, b)
	if err != nil || Delta(0.5, theta, b) > 0.319 {
		t.Errorf("Theta(0.5, 0.319) = %v, %v", theta, err)
	}
	// The spec's floors at ε = 3 for other ratios.
	for _, c := range []struct{ r, want float64 }{{1.5, 0.0011}, {3, 0.129}, {5, 0.316}, {10, 0.555}, {100, 0.926}} {
		got := Floor(3, Bounds{1, c.r})
		if math.Abs(got-c.want) > 0.006*c.want {
			t.Errorf("δ_∞(ε=3, r=%v) = %.4g, spec %v", c.r, got, c.want)
		}
	}
}

// Scaling L and θ by c leaves δ unchanged.
func TestDeltaIsScaleInvariant(t *testing.T) {
	for _, c := range []float64{1e-3, 7, 1e4} {
		a := Delta(2, 0.7, Bounds{1, 2.5})
		b := Delta(2, 0.7*c, Bounds{c, 2.5 * c})
		if math.Abs(a-b) > 1e-12 {
			t.Errorf("c=%v: δ %.15g vs %.15g", c, a, b)
		}
	}
}

// The smallest θ reaching a target δ (spec table, four digits; "inf." rows
// are infeasible).
func TestThetaInvertsDelta(t *testing.T) {
	eps := []float64{1, 2, 3, 4, 5, 6}
	cases := []struct {
		r, delta float64
		theta    []float64 // θ/inf L; 0 = infeasible
	}{
		{1.5, 0.06, []float64{0, 0.3156, 0.1469, 0.09043, 0.06346, 0.04806}},
		{1.5, 0.1, []float64{1.013, 0.2242, 0.1135, 0.07269, 0.0523, 0.04032}},
		{2, 0.06, []float64{0, 0, 0.8028, 0.4139, 0.2713, 0.1981}},
		{2, 0.08, []float64{0, 2.503, 0.6213, 0.3486, 0.236, 0.1756}},
		{2, 0.1, []float64{0, 1.44, 0.5182, 0.3054, 0.2114, 0.1594}},
	}
	for _, c := range cases {
		b := Bounds{Inf: 3, Sup: 3 * c.r} // inf L = 3: θ scales with it
		for k, e := range eps {
			theta, err := Theta(e, c.delta, b)
			if c.theta[k] == 0 {
				if !errors.Is(err, ErrInfeasible) {
					t.Errorf("r=%v δ=%v ε=%v: θ = %v, err %v; want infeasible", c.r, c.delta, e, theta, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("r=%v δ=%v ε=%v: %v", c.r, c.delta, e, err)
				continue
			}
			if got := theta / b.Inf; math.Abs(got-c.theta[k]) > 5e-4*c.theta[k] {
				t.Errorf("r=%v δ=%v ε=%v: θ/inf L = %.5g, spec %.4g", c.r, c.delta, e, got, c.theta[k])
			}
			if d := Delta(e, theta, b); d > c.delta {
				t.Errorf("r=%v δ=%v ε=%v: δ(θ) = %v exceeds the target", c.r, c.delta, e, d)
			}
		}
	}
	if _, err := Theta(1, 0.1, Bounds{Inf: 0, Sup: 1}); err == nil || errors.Is(err, ErrInfeasible) {
		t.Errorf("inf L = 0 accepted: %v", err)
	}
}

// Lemma 1 against the privacy loss sampled from the mechanism itself. Each
// estimate is a binomial fraction of n = 5·10⁴ draws (the larger of two), so
// five standard errors √(δ(1−δ)/n) bound the deviation with room to spare;
// the spec's own checks agreed to about 3 decimals.
func TestLemma1AgainstMonteCarlo(t *testing.T) {
	const n = 50000
	cases := []struct {
		b          Bounds
		theta, eps float64
	}{
		{Bounds{1, 10}, 10, 1},
		{Bounds{1, 2}, 1e4, 3},
		{Bounds{1, 2}, 1, 3},
		{Bounds{1, 1.5}, 10, 1},
		{Bounds{5, 9}, 0.5, 2},
	}
	for i, c := range cases {
		r := rng.New(uint64(i), "test", "lemma1")
		got := make([]float64, 1)
		MonteCarloDelta(got, []float64{c.eps}, c.theta, c.b, n, r, nil)
		want := Delta(c.eps, c.theta, c.b)
		se := math.Sqrt(want * (1 - want) / n)
		if math.Abs(got[0]-want) > 5*se {
			t.Errorf("%v θ=%v ε=%v: Monte Carlo %.5f, Lemma 1 %.5f (5 s.e. = %.5f)", c.b, c.theta, c.eps, got[0], want, 5*se)
		}
	}
}

// R(L) ~ Gamma(L/θ, θ) has mean L and variance Lθ, for shapes above and below
// 1 (the two sampling branches). With n draws the sample mean is within
// 5·√(Lθ/n) of L and the sample variance within 5 of its standard errors of
// Lθ (Gamma kurtosis 3 + 6θ/L).
func TestSampleMoments(t *testing.T) {
	const n = 200000
	for _, c := range []struct{ l, theta float64 }{{10, 0.5}, {10, 3}, {2, 5}, {1, 40}} {
		r := rng.New(7, "test", "moments")
		x := make([]float64, n)
		for k := range x {
			x[k] = math.Exp(LogSample(r, c.l, c.theta))
		}
		mean, variance := stattest.MeanVar(x)
		v := c.l * c.theta
		if se := stattest.MeanSE(math.Sqrt(v), n); math.Abs(mean-c.l) > 5*se {
			t.Errorf("L=%v θ=%v: mean %.5g, want %v ± %.3g", c.l, c.theta, mean, c.l, 5*se)
		}
		if se := stattest.VarianceSE(v, 3+6*c.theta/c.l, n); math.Abs(variance-v) > 5*se {
			t.Errorf("L=%v θ=%v: variance %.5g, want %v ± %.3g", c.l, c.theta, variance, v, 5*se)
		}
	}
}

// A KS test of the small-shape branch against gonum's CDF.
func TestSmallShapeDistribution(t *testing.T) {
	const n = 20000
	l, theta := 1.0, 20.0 // shape 0.05
	r := rng.New(3, "test", "ks")
	lnx := make([]float64, n)
	for k := range lnx {
		lnx[k] = LogSample(r, l, theta)
	}
	// Compare on the log scale: P(ln R ≤ y) = P(l/θ, e^y/θ).
	d := stattest.KS(lnx, func(y float64) float64 { return lowerReg(l/theta, y-math.Log(theta)) })
	if crit := stattest.KSCritical(n, 0.001); d > crit {
		t.Errorf("KS statistic %.4f > %.4f", d, crit)
	}
	// Shape 1e-4: R underflows float64 in many draws, ln R does not.
	if y := LogSample(r, 1, 1e4); math.IsInf(y, 0) || math.IsNaN(y) {
		t.Errorf("ln R = %v for shape 1e-4", y)
	}
}

// For every θ up to the largest float64, δ(ε, θ) stays at its floor δ_∞:
// at θ = 10³⁰⁸ the direct evaluation, its shapes subnormal and ln t
// overflowing, gave δ = 0 (and 0.28 for a floor of 0.18). The noise's
// standard deviation stays finite there too.
func TestHugeThetaStaysAtTheFloor(t *testing.T) {
	for _, b := range []Bounds{{1, 2}, {1, 1.5}, {2, 20}, {0.5, 4}, {1e-3, 1}, {1, 1 + 1e-9}} {
		for _, eps := range []float64{0, 0.1, 0.5, 1, 2, 5} {
			floor := Floor(eps, b)
			thetas := []float64{math.MaxFloat64, 1.7e308}
			for k := 12.0; k <= 308; k += 8 {
				thetas = append(thetas, math.Pow(10, k)*b.Inf)
			}
			for _, theta := range thetas {
				if math.IsInf(theta, 0) {
					continue
				}
				up, down := Tails(eps, theta, b)
				d := max(up, down)
				// Beyond θ = 10¹²·inf L, δ differs from its limit by O(inf L/θ)
				// ≤ 1e-12 and by the rounding of the ln Γ difference (a few
				// 1e-13 relative, TestDeltaApproachesTheFloor); 1e-9 leaves
				// room for both and catches the failures (50% and 100%).
				if !(up >= 0 && up <= 1 && down >= 0 && down <= 1) || math.Abs(d-floor) > 1e-9*max(floor, 1e-300) {
					t.Errorf("%v, ε=%v, θ=%g: tails (%v, %v), δ = %v; floor %v", b, eps, theta, up, down, d, floor)
				}
			}
		}
	}
	if sd := NoiseSD(2, math.MaxFloat64); math.IsInf(sd, 0) || math.Abs(sd/(math.Sqrt2*math.Sqrt(math.MaxFloat64))-1) > 1e-15 {
		t.Errorf("NoiseSD(2, MaxFloat64) = %v", sd)
	}
}
