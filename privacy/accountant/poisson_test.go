package accountant

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// At α = 2 the binomial expansion has three terms:
// A₂ = (1 − q)² + 2q(1 − q) + q²e^{1/z²} = 1 + q²(e^{1/z²} − 1), so
// ε(2) = ln(1 + q²(e^{1/z²} − 1)). The code takes ln Σ e^{t_i} with the
// sum near 1: its rounding is a few ulps of 1 in absolute terms, so the
// tolerance is 1e-13 relative plus 1e-15 absolute (which dominates when ε
// is tiny, at q = 1e-4).
func TestPoissonRDPAtOrderTwo(t *testing.T) {
	for _, q := range []float64{1e-4, 0.01, 0.3, 0.9} {
		for _, z := range []float64{0.5, 1.1, 4} {
			want := math.Log1p(q * q * math.Expm1(1/(z*z)))
			if got := PoissonGaussianRDP(2, q, z); math.Abs(got-want) > 1e-13*want+1e-15 {
				t.Errorf("q = %g, z = %g: ε(2) = %.17g, want %.17g", q, z, got, want)
			}
		}
	}
	if PoissonGaussianRDP(3.5, 0, 1) != 0 || PoissonGaussianRDP(3.5, 1, 2) != GaussianRDP(3.5, 2) {
		t.Error("q = 0 or q = 1 is not the closed form")
	}
}

// The fractional-order series evaluated at integer orders, where the
// generalized binomial coefficients vanish beyond α, is a second
// computation of the binomial expansion; they agree to 1e-10 relative (the
// series adds erfc-weighted terms whose rounding is ≈ 1e-15 each, and
// splits each term in two).
func TestPoissonFractionalSeriesMatchesIntegerExpansion(t *testing.T) {
	for _, q := range []float64{0.001, 0.05, 0.5} {
		for _, z := range []float64{0.7, 1.1, 3} {
			for _, a := range []int{2, 3, 8, 32} {
				want := logAInt(a, q, z)
				got, ok := logAFrac(float64(a), q, z)
				if !ok || math.Abs(got-want) > 1e-10*math.Max(1e-300, math.Abs(want)) && math.Abs(got-want) > 1e-15 {
					t.Errorf("q = %g, z = %g, α = %d: series %.15g, expansion %.15g", q, z, a, got, want)
				}
			}
		}
	}
}

// An independent computation at fractional orders: A_α = ∫ μ₀ (μ/μ₀)^α by
// Gauss–Legendre quadrature over μ₀'s ±40z range (the integrand is smooth;
// its mass beyond is below e^{−800}). 2000 nodes make the quadrature error
// negligible next to the 1e-9 relative tolerance on ε, which covers the
// series' truncation at e^{−40}·A.
func TestPoissonFractionalOrdersMatchQuadrature(t *testing.T) {
	for _, q := range []float64{0.01, 0.2} {
		for _, z := range []float64{0.8, 1.5} {
			for _, a := range []float64{1.5, 2.7, 6.25} {
				f := func(x float64) float64 {
					m0 := math.Exp(-x * x / (2 * z * z))
					m1 := math.Exp(-(x - 1) * (x - 1) / (2 * z * z))
					ratio := (1 - q) + q*m1/m0
					return m0 / (z * math.Sqrt(2*math.Pi)) * math.Pow(ratio, a)
				}
				A := quad.Fixed(f, -40*z, 40*z, 2000, nil, 0)
				want := math.Log(A) / (a - 1)
				if got := PoissonGaussianRDP(a, q, z); math.Abs(got-want) > 1e-9*want {
					t.Errorf("q = %g, z = %g, α = %g: ε = %.12g, quadrature %.12g", q, z, a, got, want)
				}
			}
		}
	}
}

// tfOrders are the orders of TensorFlow Privacy's MNIST tutorial
// (tutorials/mnist_dpsgd_tutorial.py: 1.1 … 10.9 and 12 … 63).
func tfOrders() []float64 {
	var o []float64
	for x := 1; x < 100; x++ {
		o = append(o, 1+float64(x)/10)
	}
	for a := 12; a < 64; a++ {
		o = append(o, float64(a))
	}
	return o
}

// Published values. TensorFlow Privacy's tutorials/README.md (commit
// 047e1eef of tensorflow/privacy) prints, for MNIST (N = 60000, δ = 1e-5,
// batch 256, 60000//256 = 234 steps per epoch, Poisson rate 256/60000, its
// tutorial's orders and the classic conversion): ε = 1.00 after 1 epoch,
// 1.04 after 2 and 2.92 after 60 with z = 1.12, and 1.20 after 10 epochs
// with z = 1.2. Opacus' documentation of compute_dp_sgd_privacy
// (opacus.ai/api/compute_dp_sgd_privacy.html) prints ε = 2.39 at optimal
// α = 5 for rate 0.01, z = 1.0, 300 steps, orders {2, 5, 10, 20, 100},
// δ = 1e-5, which current Opacus computes with the Balle et al. 2020
// conversion. Each is printed to two decimals, so the tolerance is half a
// unit of the last digit, 0.005. (The README's third row, z = 0.6 for 30
// epochs printed as 9.74, computes to 9.747 here: it is not asserted.)
func TestPublishedDPSGDValues(t *testing.T) {
	for _, tc := range []struct {
		z      float64
		epochs int
		want   float64
	}{{1.12, 1, 1.00}, {1.12, 2, 1.04}, {1.12, 60, 2.92}, {1.2, 10, 1.20}} {
		s := SubsampledGaussian{Rate: 256.0 / 60000, NoiseMultiplier: tc.z, Steps: tc.epochs * (60000 / 256)}
		if got, _ := BestEpsilon(tfOrders(), s.RDP, 1e-5, Classic); math.Abs(got-tc.want) > 0.005 {
			t.Errorf("TF Privacy z = %g, %d epochs: ε = %.4f, published %.2f", tc.z, tc.epochs, got, tc.want)
		}
	}
	s := SubsampledGaussian{Rate: 0.01, NoiseMultiplier: 1, Steps: 300}
	got, order := BestEpsilon([]float64{2, 5, 10, 20, 100}, s.RDP, 1e-5, Balle2020)
	if math.Abs(got-2.39) > 0.005 || order != 5 {
		t.Errorf("Opacus example: ε = %.4f at α = %g, published 2.39 at 5", got, order)
	}
}

// Balle et al.'s conversion is never worse than the classic one, and both
// match their formulas by hand: ρ = 1, α = 11, δ = e^{−10} gives
// 1 + 10/10 = 2 classically and 2 + ln(10/11) − ln(11)/10 with Balle et al.
func TestConversions(t *testing.T) {
	d := math.Exp(-10)
	if got := Classic.Epsilon(1, 11, d); math.Abs(got-2) > 1e-15 {
		t.Errorf("classic: %v", got)
	}
	want := 2 + math.Log(10.0/11) - math.Log(11)/10
	if got := Balle2020.Epsilon(1, 11, d); math.Abs(got-want) > 1e-15 {
		t.Errorf("Balle: %v, want %v", got, want)
	}
	for _, a := range []float64{1.01, 1.5, 2, 10, 100} {
		for _, r := range []float64{0, 0.01, 1, 30} {
			if b, c := Balle2020.Epsilon(r, a, 1e-6), Classic.Epsilon(r, a, 1e-6); b > c {
				t.Errorf("α = %g, ρ = %g: Balle %g > classic %g", a, r, b, c)
			}
		}
	}
}

// The Poisson-sampled Gaussian at rate q is never worse than the unsampled
// mechanism, and grows with q; DP-SGD's ε grows with epochs and falls with z.
func TestSubsampledGaussianMonotone(t *testing.T) {
	for _, a := range []float64{1.5, 4, 20} {
		prev := 0.0
		for _, q := range []float64{0.001, 0.01, 0.1, 0.5, 1} {
			r := PoissonGaussianRDP(a, q, 1.3)
			if r < prev || r > GaussianRDP(a, 1.3)*(1+1e-12) {
				t.Errorf("α = %g, q = %g: %g not in [%g, Gaussian]", a, q, r, prev)
			}
			prev = r
		}
	}
	e1, _ := DPSGD(60000, 256, 10, 1.1, Poisson).Epsilon(1e-5, Balle2020)
	e2, _ := DPSGD(60000, 256, 20, 1.1, Poisson).Epsilon(1e-5, Balle2020)
	e3, _ := DPSGD(60000, 256, 20, 1.3, Poisson).Epsilon(1e-5, Balle2020)
	if !(e1 < e2 && e3 < e2) {
		t.Errorf("ε(10 epochs) %g, ε(20) %g, ε(20, z = 1.3) %g", e1, e2, e3)
	}
	// Fixed-size sampling has integer orders only.
	f := DPFedAvg(1000, 100, 50, 1, FixedSize)
	if !math.IsInf(f.RDP(2.5), 1) || math.IsInf(f.RDP(3), 1) {
		t.Error("fixed-size sampling at fractional orders")
	}
	if e, o := f.Epsilon(1e-5, Classic); math.IsInf(e, 1) || o != math.Trunc(o) {
		t.Errorf("fixed-size ε = %g at α = %g", e, o)
	}
	if s := DPSGD(60000, 256, 60, 1.1, Poisson); s.Steps != 14063 || s.Rate != 256.0/60000 {
		t.Errorf("DPSGD steps %d rate %g", s.Steps, s.Rate)
	}
}

// Solving for z inverts Epsilon: ε(z(ε)) ≤ ε, and z is the smallest such
// (ε at z·(1 − 1e-6) exceeds the target). Bisection stops at 1e-9
// relative; ε moves by far more than the slack over a 1e-6 change of z.
func TestNoiseMultiplierForTarget(t *testing.T) {
	for _, tc := range []struct {
		s      SubsampledGaussian
		target float64
	}{
		{DPSGD(60000, 256, 60, 1, Poisson), 1},
		{DPFedAvg(3400, 100, 1500, 1, Poisson), 8},
		{DPFedAvg(500, 50, 100, 1, FixedSize), 1},
		{DPFedAvg(500, 50, 100, 1, FixedSize), 8},
	} {
		s, target := tc.s, tc.target
		{
			z, err := NoiseMultiplier(s, target, 1e-5, Balle2020)
			if err != nil {
				t.Fatal(err)
			}
			s.NoiseMultiplier = z
			e, _ := s.Epsilon(1e-5, Balle2020)
			s.NoiseMultiplier = z * (1 - 1e-6)
			e2, _ := s.Epsilon(1e-5, Balle2020)
			if e > target || e2 <= target {
				t.Errorf("%+v, target %g: z = %g gives %g (%g just below)", s, target, z, e, e2)
			}
		}
	}
}

func TestInvalidInputsNameTheField(t *testing.T) {
	for field, s := range map[string]SubsampledGaussian{
		"noise_multiplier:": {Rate: 0.1, NoiseMultiplier: -1, Steps: 1},
		"sampling rate:":    {Rate: 2, NoiseMultiplier: 1, Steps: 1},
		"steps:":            {Rate: 0.1, NoiseMultiplier: 1, Steps: -1},
	} {
		if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := NoiseMultiplier(DPSGD(100, 10, 1, 1, Poisson), 1, 1, Classic); err == nil || !strings.HasPrefix(err.Error(), "delta:") {
		t.Errorf("δ = 1: %v", err)
	}
	if _, err := NoiseMultiplier(DPSGD(100, 10, 1, 1, Poisson), -1, 1e-5, Classic); err == nil || !strings.HasPrefix(err.Error(), "epsilon:") {
		t.Errorf("ε < 0: %v", err)
	}
}
