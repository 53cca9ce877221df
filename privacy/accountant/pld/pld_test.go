package pld

import (
	"math"
	"testing"

	"maple/privacy/accountant"
)

func gauss(z, q float64, n int64, s accountant.Sampling, r accountant.Relation) *Distribution {
	d, err := Compose(GaussianMechanism(z, q, s, r), n, Options{})
	if err != nil {
		panic(err)
	}
	return d
}

// TensorFlow Privacy's compute_dp_sgd_privacy_test.py (commit 03035d5d of
// tensorflow/privacy, test_compute_dp_sgd_example_privacy) prints ε =
// 2.4612381 for 1.2 epochs at Poisson rate 0.01 (120 steps), z = 0.7,
// δ = 1e-5 with AccountantType.PLD, which is dp_accounting's PLDAccountant()
// with its defaults: add-or-remove-one, value_discretization_interval
// 1e-4, connect-the-dots, both directions; with microbatching z is halved,
// 0.35, and ε = 18.6977407. The same algorithm on the same grid agrees to
// the 7 decimals printed (assertAlmostEqual), so the tolerance is half a
// unit of the 7th decimal.
func TestTensorFlowPrivacyPLDValues(t *testing.T) {
	for _, c := range []struct{ z, want float64 }{{0.7, 2.4612381}, {0.35, 18.6977407}} {
		if got := gauss(c.z, 0.01, 120, accountant.Poisson, accountant.AddRemove).Epsilon(1e-5); math.Abs(got-c.want) > 5e-8 {
			t.Errorf("z = %g: ε = %.9f, TF Privacy %.7f", c.z, got, c.want)
		}
	}
}

// Google's dp_accounting pld_privacy_accountant_test.py (commit b5b0286e
// of google/differential-privacy): test_gaussian_basic (z = √3 three times
// is μ = 1 GDP, δ(1) = 0.126936, tolerance 1e-3), test_poisson_subsampled_
// gaussian (q = 0.2, z = 0.5, three times: δ(1) = 0.15594 and ε(0.15594)
// = 1, tolerance 1e-3), test_laplace_basic (Laplace b = 1 three times and
// b = 2 twice is pure 4-DP: ε(1e-14) = 4 within 1e-6) and
// test_randomized_response (replace-one, p = 4/(3 + e), 4 answers: pure
// 1-DP, δ(1) = 0 to 7 places). Their tolerances are used.
func TestDPAccountingPLDValues(t *testing.T) {
	if d := gauss(math.Sqrt(3), 1, 3, accountant.Poisson, accountant.AddRemove).Delta(1); math.Abs(d-0.126936) > 1e-3 {
		t.Errorf("Gaussian μ = 1: δ(1) = %v", d)
	}
	p := gauss(0.5, 0.2, 3, accountant.Poisson, accountant.AddRemove)
	if d, e := p.Delta(1), p.Epsilon(0.15594); math.Abs(d-0.15594) > 1e-3 || math.Abs(e-1) > 1e-3 {
		t.Errorf("Poisson-subsampled Gaussian: δ(1) = %v, ε(0.15594) = %v", d, e)
	}
	a, _ := NewAccountant(Options{})
	a.Compose(Mechanism{Noise: Laplace, NoiseMultiplier: 1, Rate: 1}, 3)
	a.Compose(Mechanism{Noise: Laplace, NoiseMultiplier: 2, Rate: 1}, 2)
	if e, _ := a.Epsilon(1e-14); math.Abs(e-4) > 1e-6 {
		t.Errorf("Laplace: ε(1e-14) = %v, want 4", e)
	}
	rr, err := Compose(Mechanism{Noise: RandomizedResponse, Flip: 4 / (3 + math.E), Buckets: 4, Rate: 1, Relation: accountant.ReplaceOne}, 1, Options{})
	if err != nil || rr.Delta(1) > 5e-8 {
		t.Errorf("randomized response: δ(1) = %v, %v", rr.Delta(1), err)
	}
}

// dp_accounting's test_poisson_subsampled_laplace composes Laplace b = 0.5
// at q = 0.2 three times, which is pure ε-DP with ε = 3·ln(1 + q(e² − 1)) =
// 2.469622 (amplification of a pure guarantee by Poisson sampling is
// exactly this for the Laplace mechanism's extreme loss); it prints
// 2.46964. Ours is an upper bound: the extreme loss lies between two grid
// points and connect-the-dots puts part of its mass on the upper one, so
// ε(1e-14) lies in [exact, exact + 3Δ].
func TestSubsampledLaplaceIsPure(t *testing.T) {
	exact := 3 * math.Log1p(0.2*math.Expm1(2))
	d, _ := Compose(Mechanism{Noise: Laplace, NoiseMultiplier: 0.5, Rate: 0.2}, 3, Options{})
	if e := d.Epsilon(1e-14); e < exact || e > exact+3*DefaultInterval {
		t.Errorf("ε(1e-14) = %.7f, exact %.7f", e, exact)
	}
}

// Opacus' tests/prv_accountant.py (commit 4d0ebc84 of pytorch/opacus)
// holds ε at δ = 1e-6 of Microsoft's prv_accountant for (σ, q, steps):
// each is the PRV accountant's eps_upper, its estimate at δ(1 − 1/1000)
// plus eps_error = 0.01, and the true ε lies in [eps_upper − 0.02,
// eps_upper] (the estimate is within eps_error of it). Our upper bound must
// lie in that certified interval; tests/accountants_test.py's
// test_prv_accountant (σ = 1.5, q = 0.04, 2250 steps, δ = 1e-5: 6.7774) is
// checked the same way.
func TestOpacusPRVValues(t *testing.T) {
	for _, c := range []struct {
		z, q  float64
		n     int64
		delta float64
		prv   float64
	}{
		{0.8, 0.05, 100, 1e-6, 6.74105193941409996938318727189},
		{3.0, 0.2, 100, 1e-6, 3.38122051022184422208738396876},
		{2.0, 0.001, 1000, 1e-6, 0.0712187825381152272985474382949},
		{1.5, 0.05, 1000, 1e-6, 6.20996924657726712126759593957},
		{1.5, 0.001, 20000, 1e-6, 0.437005108654860807693154356457},
		{1.5, 0.04, 2250, 1e-5, 6.777395712150674},
	} {
		got := gauss(c.z, c.q, c.n, accountant.Poisson, accountant.AddRemove).Epsilon(c.delta)
		if got > c.prv || got < c.prv-0.02 {
			t.Errorf("σ = %g, q = %g, %d steps: ε = %.6f outside the PRV interval [%.6f, %.6f]", c.z, c.q, c.n, got, c.prv-0.02, c.prv)
		}
	}
}

// At q = 1, k compositions of the Gaussian mechanism are exactly the
// Gaussian mechanism with μ = √k/z (accountant.GaussianComposedMu, Balle &
// Wang 2018 for its ε). Connect-the-dots puts each round's profile below
// the exact one shifted by one interval (a chord between grid points lies
// under the curve's value at the left point), and domination survives
// composition, so ε_PLD ≤ ε_exact + kΔ; it is an upper bound, so
// ε_PLD ≥ ε_exact up to the rounding of the root (1e-9). Heterogeneous
// rounds (z₁ k₁ times, z₂ k₂ times) are μ = √(k₁/z₁² + k₂/z₂²).
func TestGaussianMatchesExactComposition(t *testing.T) {
	for _, c := range []struct {
		z     float64
		k     int64
		delta float64
	}{{1, 10, 1e-5}, {2, 50, 1e-6}, {5, 3, 1e-3}, {0.8, 1, 1e-5}} {
		exact := accountant.GaussianEpsilon(accountant.GaussianComposedMu(1, c.z, int(c.k)), c.delta)
		got := gauss(c.z, 1, c.k, accountant.Poisson, accountant.AddRemove).Epsilon(c.delta)
		if got < exact-1e-9 || got > exact+float64(c.k)*DefaultInterval {
			t.Errorf("z = %g, k = %d: ε = %.9f, exact %.9f", c.z, c.k, got, exact)
		}
	}
	a, _ := NewAccountant(Options{})
	a.Compose(GaussianMechanism(1, 1, accountant.Poisson, accountant.AddRemove), 4)
	a.Compose(GaussianMechanism(2, 1, accountant.Poisson, accountant.AddRemove), 8)
	exact := accountant.GaussianEpsilon(math.Sqrt(4+8.0/4), 1e-5)
	if got, _ := a.Epsilon(1e-5); got < exact-1e-9 || got > exact+12*DefaultInterval {
		t.Errorf("heterogeneous: ε = %.9f, exact %.9f", got, exact)
	}
	// Replace-one without sampling is sensitivity 2: μ = 2√k/z.
	exact = accountant.GaussianEpsilon(accountant.GaussianComposedMu(2, 3, 10), 1e-5)
	if got := gauss(3, 1, 10, accountant.Poisson, accountant.ReplaceOne).Epsilon(1e-5); got < exact-1e-9 || got > exact+10*DefaultInterval {
		t.Errorf("replace-one: ε = %.9f, exact %.9f", got, exact)
	}
}

// The Laplace mechanism's exact profile is δ(ε) = 1 − e^{(ε − 1/b)/2} for
// 0 ≤ ε < 1/b (a one-line integral), randomized response's δ(ε) =
// (P(x) − e^ε P(x′))₊; connect-the-dots matches a profile at the grid
// points up to rounding. Each mass is a second difference of δ values ≤ 1
// divided by e^Δ − 1, so it carries an error up to 4u/Δ ≈ 8.9e-12, and the
// negative ones are clamped to 0: over n grid points δ may exceed the exact
// value by n·8.9e-12, and never falls below it by more than 1e-15. Laplace
// b = 2 has losses in [−1/2, 1/2], n = 10⁴; randomized response p = 0.3,
// k = 5 in [−2.54, 2.54], n = 5.1·10⁴.
func TestProfilesAtGridPoints(t *testing.T) {
	d, _ := Compose(Mechanism{Noise: Laplace, NoiseMultiplier: 2, Rate: 1}, 1, Options{})
	for _, i := range []float64{0, 1000, 2500, 4999} {
		eps := i * DefaultInterval
		if got, want := d.Delta(eps), -math.Expm1((eps-0.5)/2); got < want-1e-15 || got > want+1e4*8.9e-12 {
			t.Errorf("Laplace δ(%g) = %.15g, want %.15g", eps, got, want)
		}
	}
	p, k := 0.3, 5.0
	rr, _ := Compose(Mechanism{Noise: RandomizedResponse, Flip: p, Buckets: 5, Rate: 1, Relation: accountant.ReplaceOne}, 1, Options{})
	for _, i := range []float64{0, 3000, 20000} {
		eps := i * DefaultInterval
		want := max(0, 1-p+p/k-math.Exp(eps)*p/k)
		if got := rr.Delta(eps); got < want-1e-15 || got > want+5.1e4*8.9e-12 {
			t.Errorf("randomized response δ(%g) = %.15g, want %.15g", eps, got, want)
		}
	}
}

// Epsilon and Delta are inverse: δ(ε(δ)) ≤ δ (ε is the smallest with δ(ε)
// ≤ δ, found in closed form between grid points; 1e-9 relative covers the
// logarithm's rounding), and ε falls as δ grows.
func TestEpsilonInvertsDelta(t *testing.T) {
	d := gauss(1, 0.05, 100, accountant.Poisson, accountant.AddRemove)
	prev := math.Inf(1)
	for _, delta := range []float64{1e-10, 1e-7, 1e-5, 1e-3, 0.1, 0.5} {
		e := d.Epsilon(delta)
		if got := d.Delta(e); got > delta*(1+1e-9) {
			t.Errorf("δ(ε(%g)) = %g", delta, got)
		}
		if !(e <= prev) {
			t.Errorf("ε(%g) = %g above ε at a smaller δ, %g", delta, e, prev)
		}
		prev = e
	}
}

// The replace-one Poisson pair, the record's contribution at +C in one data
// set and −C in the other, dominates every other placement x, x′ ∈ [−C, C]
// of a scalar contribution: δ of (1 − q)N(0) + qN(x) against (1 − q)N(0) +
// qN(x′) is checked below the pair's at several ε, by quadrature of
// (p − e^ε q)₊ on a grid of step 1e-3 over ±12σ (error below 1e-9).
func TestReplaceOnePairDominates(t *testing.T) {
	const q, z = 0.3, 0.8
	pair := newShiftPair(gaussian{z}, q, 1, q, 1)
	phi := func(x, m float64) float64 { return math.Exp(-(x-m)*(x-m)/(2*z*z)) / (z * math.Sqrt(2*math.Pi)) }
	hockey := func(a, b, eps float64) float64 {
		var s float64
		for x := -12 * z; x <= 12*z+1; x += 1e-3 {
			v := (1-q)*phi(x, 0) + q*phi(x, a) - math.Exp(eps)*((1-q)*phi(x, 0)+q*phi(x, b))
			if v > 0 {
				s += v * 1e-3
			}
		}
		return s
	}
	for _, eps := range []float64{-0.5, 0, 0.3, 1, 2} {
		top := pair.delta(eps)
		if want := hockey(1, -1, eps); math.Abs(top-want) > 1e-6 {
			t.Errorf("ε = %g: closed form %v, quadrature %v", eps, top, want)
		}
		for _, xs := range [][2]float64{{1, 0}, {0, 1}, {0.5, -0.5}, {1, 0.2}, {-0.3, 0.9}} {
			if h := hockey(xs[0], xs[1], eps); h > top+1e-6 {
				t.Errorf("ε = %g, x = %v: δ %v above the pair's %v", eps, xs, h, top)
			}
		}
	}
}

// Fixed-size sampling is never accounted below Poisson sampling at the
// same rate: its pair moves the sum by 2C. Replace-one with fixed size
// (the symmetrized pair) is at least add-remove with fixed size.
func TestFixedSizeOrdering(t *testing.T) {
	poisson := gauss(1, 0.05, 20, accountant.Poisson, accountant.ReplaceOne).Epsilon(1e-5)
	fixedAR := gauss(1, 0.05, 20, accountant.FixedSize, accountant.AddRemove).Epsilon(1e-5)
	fixedRO := gauss(1, 0.05, 20, accountant.FixedSize, accountant.ReplaceOne).Epsilon(1e-5)
	if !(poisson < fixedAR && fixedAR <= fixedRO) {
		t.Errorf("Poisson replace-one %v, fixed add-remove %v, fixed replace-one %v", poisson, fixedAR, fixedRO)
	}
}

// The accountant asked after every round agrees with one composition of
// all the rounds (the same power of the same transform), and the PLD is
// tighter than the Rényi accountant of the same mechanism.
func TestAccountantPerRound(t *testing.T) {
	m := GaussianMechanism(2, 0.05, accountant.Poisson, accountant.AddRemove)
	a, _ := NewAccountant(Options{})
	var e float64
	for range 30 {
		a.Compose(m, 1)
		e, _ = a.Epsilon(1e-5)
	}
	if want := gauss(2, 0.05, 30, accountant.Poisson, accountant.AddRemove).Epsilon(1e-5); math.Abs(e-want) > 1e-9 {
		t.Errorf("per round %v, at once %v", e, want)
	}
	s := accountant.SubsampledGaussian{Rate: 0.05, NoiseMultiplier: 2, Steps: 30}
	if rdp, _ := s.Epsilon(1e-5, accountant.Balle2020); !(e < rdp) {
		t.Errorf("PLD %v not below RDP %v", e, rdp)
	}
}

// Rounds composes its one discretized round into exactly what Compose
// gives, bit for bit, whatever counts were asked before and in whichever
// order (a ledger's runs ask in the order their rounds end; the run
// directories must not depend on it), for a symmetric and an asymmetric
// pair.
func TestRoundsAreComposeWhateverWasAskedBefore(t *testing.T) {
	for _, m := range []Mechanism{
		GaussianMechanism(1, 0.2, accountant.Poisson, accountant.AddRemove),
		GaussianMechanism(1, 1, accountant.Poisson, accountant.ReplaceOne),
	} {
		r, err := NewRounds(m, Options{Interval: 1e-3})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int64{1, 7, 30, 2, 30, 0} {
			got, err := r.Compose(n)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := Compose(m, n, Options{Interval: 1e-3})
			for _, d := range []float64{1e-5, 0.1} {
				if g, w := got.Epsilon(d), want.Epsilon(d); g != w && !(math.IsNaN(g) && math.IsNaN(w)) {
					t.Errorf("%v, %d rounds, δ = %g: Rounds %v, Compose %v", m, n, d, g, w)
				}
			}
		}
	}
}

// NoiseMultiplier inverts ε(z): the z found reaches the target and 1e-5
// less noise does not (bisection stops at 1e-6 relative).
func TestNoiseMultiplier(t *testing.T) {
	m := GaussianMechanism(1, 0.01, accountant.Poisson, accountant.AddRemove)
	coarse := Options{Interval: 1e-3} // the search is the same at any Δ, ten times faster
	z, err := NoiseMultiplier(m, 120, 2, 1e-5, coarse)
	if err != nil {
		t.Fatal(err)
	}
	at := func(z float64) float64 {
		d, err := Compose(GaussianMechanism(z, 0.01, accountant.Poisson, accountant.AddRemove), 120, coarse)
		if err != nil {
			t.Fatal(err)
		}
		return d.Epsilon(1e-5)
	}
	if at(z) > 2 || at(z*(1-1e-5)) <= 2 {
		t.Errorf("z = %v: ε = %v, ε just below = %v", z, at(z), at(z*(1-1e-5)))
	}
	// Below the mass the truncations put at infinite loss no noise reaches
	// a finite ε.
	if _, err := NoiseMultiplier(m, 120, 1, 1e-17, coarse); err == nil {
		t.Error("an unreachable target was accepted")
	}
}
