package gamma

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"

	"maple/algorithms/rng"
)

// At inf L = 1, sup L = 2 and θ = 1 the outputs are Exp(1) and Erlang(2):
// the privacy loss is ln z, and the hockey-stick divergences have closed
// forms, up = e^{−e^ε} and down = e^{−u} + (1 − e^ε)(1 − e^{−u}) with
// u = e^{−ε}. At ε = 0 both are the total-variation distance e^{−1}. At the
// paper's ε = 3 the tight δ is 0.02449, half of Lemma 1's 0.04857 (the
// spec's reference value, TestDeltaMatchesTheSpecTable). The regularized incomplete
// gamma functions are accurate to about 1e-14; 1e-12 relative allows for
// the subtraction.
func TestProfileClosedForm(t *testing.T) {
	b := Bounds{Inf: 1, Sup: 2}
	for _, eps := range []float64{0, 0.25, 0.5, 1, 2, 3, 4} {
		u := math.Exp(-eps)
		wantUp := math.Exp(-math.Exp(eps))
		wantDown := math.Exp(-u) + (1-math.Exp(eps))*(-math.Expm1(-u))
		up, down := ProfileTails(eps, 1, b)
		if math.Abs(up-wantUp) > 1e-12*wantUp || math.Abs(down-wantDown) > 1e-12*wantDown {
			t.Errorf("ε=%v: tails (%.15g, %.15g), closed form (%.15g, %.15g)", eps, up, down, wantUp, wantDown)
		}
	}
	if d, l1 := Profile(3, 1, b), Delta(3, 1, b); math.Abs(d-0.0244855001) > 1e-9 || math.Abs(l1-0.048568007) > 1e-9 {
		t.Errorf("ε=3: tight δ %.6g (want 0.0244855001), Lemma 1 %.9g", d, l1)
	}
}

// The profile against a numerical integration of its definition,
// E_P[(1 − e^{ε − ℓ})₊], with gonum's quad over u = ln(Z/θ), whose density
// e^{au − e^u}/Γ(a) is smooth: 2000 Legendre points on the region where the
// integrand is positive (mapped to a finite interval) integrate it to about
// 1e-10 relative; 1e-8 leaves room.
func TestProfileAgainstQuadrature(t *testing.T) {
	for _, c := range []struct {
		b          Bounds
		theta, eps float64
	}{
		{Bounds{1, 2}, 1, 3}, {Bounds{1, 2}, 0.5, 1}, {Bounds{1, 1.5}, 0.2, 2},
		{Bounds{2, 5}, 1.5, 0.5}, {Bounds{1, 10}, 1, 4}, {Bounds{3, 4}, 1, 0.1},
	} {
		s, i := c.b.Sup/c.theta, c.b.Inf/c.theta
		loss := func(u float64) float64 { return lgamma(i) - lgamma(s) + (s-i)*u } // LossUp at ln Z = u + ln θ
		density := func(a, u float64) float64 { return math.Exp(a*u - math.Exp(u) - lgamma(a)) }
		k := c.theta / (c.b.Sup - c.b.Inf)
		lnUp, lnDown := (c.eps+lgamma(s)-lgamma(i))*k, (-c.eps+lgamma(s)-lgamma(i))*k
		up := quad.Fixed(func(u float64) float64 {
			return density(s, u) * -math.Expm1(c.eps-loss(u))
		}, lnUp, math.Inf(1), 2000, nil, 0)
		down := quad.Fixed(func(u float64) float64 {
			return density(i, u) * -math.Expm1(c.eps+loss(u))
		}, math.Inf(-1), lnDown, 2000, nil, 0)
		gotUp, gotDown := ProfileTails(c.eps, c.theta, c.b)
		if math.Abs(gotUp-up) > 1e-8*max(up, 1e-6) || math.Abs(gotDown-down) > 1e-8*max(down, 1e-6) {
			t.Errorf("%v θ=%v ε=%v: tails (%.10g, %.10g), quadrature (%.10g, %.10g)", c.b, c.theta, c.eps, gotUp, gotDown, up, down)
		}
	}
}

// The profile against Monte Carlo: the mean of (1 − e^{ε − ℓ})₊ over n draws
// of the mechanism on sup L (up) and on inf L (down). The summand lies in
// [0, 1], so its variance is at most δ(1 − δ) and five of the resulting
// standard errors bound the deviation.
func TestProfileAgainstMonteCarlo(t *testing.T) {
	const n = 100000
	for k, c := range []struct {
		b          Bounds
		theta, eps float64
	}{
		{Bounds{1, 2}, 1, 1}, {Bounds{1, 1.5}, 0.1469, 3}, {Bounds{1, 2}, 0.8028, 3}, {Bounds{5, 9}, 0.5, 2}, {Bounds{1, 2}, 50, 0.2},
	} {
		r := rng.New(uint64(k), "test", "profile")
		var up, down float64
		for range n {
			up += max(-math.Expm1(c.eps-LossUp(LogSample(r, c.b.Sup, c.theta), c.theta, c.b)), 0)
			down += max(-math.Expm1(c.eps+LossUp(LogSample(r, c.b.Inf, c.theta), c.theta, c.b)), 0)
		}
		up, down = up/n, down/n
		wantUp, wantDown := ProfileTails(c.eps, c.theta, c.b)
		for _, p := range [][2]float64{{up, wantUp}, {down, wantDown}} {
			if se := math.Sqrt(p[1] * (1 - p[1]) / n); math.Abs(p[0]-p[1]) > 5*se+1e-12 {
				t.Errorf("%v θ=%v ε=%v: Monte Carlo %.5g, profile %.5g (5 s.e. %.3g)", c.b, c.theta, c.eps, p[0], p[1], 5*se)
			}
		}
	}
}

// The profile is the tight δ: never above Lemma 1's, and no pair of inputs
// inside [inf L, sup L] has a larger hockey-stick divergence than the
// extreme pair (checked on a 9×9 grid, as the spec checked Lemma 1's). Its
// inverse meets δ, and the tight ε never exceeds Lemma 1's.
func TestProfileIsTightAndBelowLemma1(t *testing.T) {
	for _, b := range []Bounds{{1, 2}, {1, 1.5}, {2, 7}} {
		for _, theta := range []float64{0.1, 0.8, 5, 1e3} {
			for _, eps := range []float64{0, 0.5, 1, 2, 3, 5} {
				p := Profile(eps, theta, b)
				if l := Delta(eps, theta, b); p > l*(1+1e-12) {
					t.Errorf("%v θ=%v ε=%v: tight δ %v above Lemma 1's %v", b, theta, eps, p, l)
				}
				for a := range 9 {
					for c := a + 1; c < 9; c++ {
						lo := b.Inf + float64(a)*(b.Sup-b.Inf)/8
						hi := b.Inf + float64(c)*(b.Sup-b.Inf)/8
						// 1e-12 absolute: rounding of the divergences.
						if q := Profile(eps, theta, Bounds{lo, hi}); q > p+1e-12 {
							t.Errorf("%v θ=%v ε=%v: pair (%v, %v) has δ %v > extremes' %v", b, theta, eps, lo, hi, q, p)
						}
					}
				}
			}
			for _, delta := range []float64{1e-5, 0.03, 0.1} {
				e := Epsilon(delta, theta, b)
				// Bisection to 1e-12 in ε: δ there is within its slope times
				// that of the target.
				if d := Profile(e, theta, b); d > delta*(1+1e-9) {
					t.Errorf("%v θ=%v: δ(Epsilon(%v)) = %v", b, theta, delta, d)
				}
				if e > 0 && Profile(e-1e-9, theta, b) <= delta {
					t.Errorf("%v θ=%v: Epsilon(%v) = %v is not the smallest", b, theta, delta, e)
				}
				if l := Lemma1Epsilon(delta, theta, b); e > l+1e-12 {
					t.Errorf("%v θ=%v δ=%v: tight ε %v above Lemma 1's %v", b, theta, delta, e, l)
				}
			}
		}
	}
	// θ = 0.8028 is the least that Lemma 1 calibrates to (3, 0.06) at
	// sup L/inf L = 2 (the spec's table): Lemma1Epsilon gives back 3.
	b := Bounds{3, 6}
	theta, err := Theta(3, 0.06, b)
	if err != nil {
		t.Fatal(err)
	}
	if e := Lemma1Epsilon(0.06, theta, b); math.Abs(e-3) > 1e-6 {
		t.Errorf("Lemma1Epsilon at the calibrated θ = %v, want 3", e)
	}
}

// Far beyond any θ of use, the profile equals its limit as θ → ∞ (the
// branch below minShape), as Lemma 1's tails equal theirs: 1e-6 relative
// at θ = 1e13·inf L, where the direct evaluation still applies.
func TestProfileApproachesItsLimit(t *testing.T) {
	for _, b := range []Bounds{{1, 1.5}, {1, 2}, {2, 20}} {
		for _, eps := range []float64{0, 0.2, 1, 3} {
			up, down := ProfileTails(eps, 1e13*b.Inf, b)
			lu, ld := limitProfile(eps, b)
			if math.Abs(up-lu) > 1e-6*max(lu, 1e-12) || math.Abs(down-ld) > 1e-6*max(ld, 1e-12) {
				t.Errorf("%v ε=%v: tails (%.10g, %.10g), limits (%.10g, %.10g)", b, eps, up, down, lu, ld)
			}
			hu, hd := ProfileTails(eps, math.MaxFloat64, b)
			if hu != lu || hd != ld {
				t.Errorf("%v ε=%v at θ = MaxFloat64: (%v, %v), limits (%v, %v)", b, eps, hu, hd, lu, ld)
			}
		}
	}
}

// The expected log-likelihood ratio is the Kullback–Leibler divergence: at
// shapes 2 and 1 (θ = 1), KL(Erlang(2) ‖ Exp(1)) = ψ(2) = 1 − γ and
// KL(Exp(1) ‖ Erlang(2)) = −ψ(1) = γ, Euler's constant γ. Against the mean
// of LossUp over n draws, within five standard errors (the loss ln Z has
// variance ψ′(a): π²/6 − 1 under Erlang(2), π²/6 under Exp(1)).
func TestDivergenceIsTheExpectedLoss(t *testing.T) {
	const euler = 0.57721566490153286
	b := Bounds{1, 2}
	up, down := Divergence(1, b)
	// gonum's Digamma is accurate to about 1e-11 here (ψ(2) is off by 5e-11).
	if math.Abs(up-(1-euler)) > 1e-10 || math.Abs(down-euler) > 1e-10 {
		t.Errorf("divergences (%.16g, %.16g), want (1 − γ, γ)", up, down)
	}
	const n = 100000
	r := rng.New(1, "test", "kl")
	var mUp, mDown float64
	for range n {
		mUp += LossUp(LogSample(r, b.Sup, 1), 1, b)
		mDown -= LossUp(LogSample(r, b.Inf, 1), 1, b)
	}
	mUp, mDown = mUp/n, mDown/n
	if se := math.Sqrt((math.Pi*math.Pi/6 - 1) / n); math.Abs(mUp-up) > 5*se {
		t.Errorf("mean loss on sup L %.5g, KL %.5g ± %.2g", mUp, up, 5*se)
	}
	if se := math.Sqrt(math.Pi * math.Pi / 6 / n); math.Abs(mDown-down) > 5*se {
		t.Errorf("mean loss on inf L %.5g, KL %.5g ± %.2g", mDown, down, 5*se)
	}
}
