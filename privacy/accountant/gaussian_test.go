package accountant

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/integrate/quad"
)

// The Mills ratio switches from the direct quotient to the continued
// fraction at t = 5; both are accurate there, and agree to a few ulps
// (tolerance 1e-14: the quotient carries erfc's ≈ 1e-16 relative error and
// the exponential's, the fraction 80 divisions of ≤ 1u each, ≈ 1e-14 worst
// case). Far out, R(t) = 1/t − 1/t³ + 3/t⁵ − 15/t⁷ + O(t⁻⁹): at t = 1000 the
// omitted 105/t⁹ is 1e-25 relative, so the series is exact to rounding.
func TestMillsRatio(t *testing.T) {
	direct := normalCDF(-millsSwitch) / normalPDF(millsSwitch)
	if cf := millsRatio(millsSwitch); math.Abs(cf-direct) > 1e-14*direct {
		t.Errorf("R(5): continued fraction %.17g, direct %.17g", cf, direct)
	}
	if r := millsRatio(0); math.Abs(r-math.Sqrt(math.Pi/2)) > 1e-15 {
		t.Errorf("R(0) = %.17g, want √(π/2)", r)
	}
	x := 1000.0
	series := 1/x - 1/(x*x*x) + 3/math.Pow(x, 5) - 15/math.Pow(x, 7)
	if r := millsRatio(x); math.Abs(r-series) > 1e-15*series {
		t.Errorf("R(1000) = %.17g, series %.17g", r, series)
	}
}

// At ε = 0 the analytic Gaussian δ is the total variation distance between
// N(0, 1) and N(μ, 1): 2Φ(μ/2) − 1 = erf(μ/(2√2)).
func TestGaussianDeltaAtZero(t *testing.T) {
	for _, mu := range []float64{0.01, 0.5, 1, 3, 10} {
		want := math.Erf(mu / (2 * math.Sqrt2))
		if got := GaussianDelta(mu, 0); math.Abs(got-want) > 1e-15 {
			t.Errorf("μ = %g: δ(0) = %.17g, want erf(μ/2√2) = %.17g", mu, got, want)
		}
	}
}

// An independent derivation of δ(ε): the privacy loss of the Gaussian
// mechanism is L ~ N(μ²/2, μ²), and δ(ε) = E[(1 − e^{ε−L})₊] (Balle & Wang
// 2018, Theorem 5). The integrand is smooth on [ε, μ²/2 + 12μ] (the normal
// tail beyond 12 standard deviations is below 1e-32), so 200-point
// Gauss–Legendre quadrature is accurate far below the 1e-12 tolerance, which
// covers the rounding of the closed form's difference of two terms.
func TestGaussianDeltaMatchesPrivacyLossIntegral(t *testing.T) {
	for _, mu := range []float64{0.3, 1, 2.5} {
		for _, eps := range []float64{0, 0.1, 1, 3} {
			m, s := mu*mu/2, mu
			f := func(l float64) float64 {
				return -math.Expm1(eps-l) * math.Exp(-(l-m)*(l-m)/(2*s*s)) / (s * math.Sqrt(2*math.Pi))
			}
			lo := math.Max(eps, m-12*s)
			want := quad.Fixed(f, lo, m+12*s, 200, nil, 0)
			if got := GaussianDelta(mu, eps); math.Abs(got-want) > 1e-12 {
				t.Errorf("μ = %g, ε = %g: δ = %.15g, integral %.15g", mu, eps, got, want)
			}
		}
	}
}

// The classical Gaussian mechanism (Dwork & Roth 2014, Theorem A.1): for
// ε ∈ (0, 1), σ = Δ·√(2 ln(1.25/δ))/ε gives (ε, δ)-DP. The exact δ at that σ
// can only be smaller, and the exact ε at that δ can only be smaller.
func TestClassicalGaussianMechanismIsWithinTheExactBound(t *testing.T) {
	for _, delta := range []float64{1e-3, 1e-5, 1e-9} {
		for _, eps := range []float64{0.05, 0.5, 0.99} {
			mu := eps / math.Sqrt(2*math.Log(1.25/delta)) // Δ/σ
			if d := GaussianDelta(mu, eps); d > delta {
				t.Errorf("ε = %g, δ = %g: exact δ %g exceeds the classical one", eps, delta, d)
			}
			if e := GaussianEpsilon(mu, delta); e > eps {
				t.Errorf("ε = %g, δ = %g: exact ε %g exceeds the classical one", eps, delta, e)
			}
		}
	}
}

// GaussianEpsilon inverts GaussianDelta in ε and GaussianMu inverts it in μ.
// Bisection stops at adjacent doubles, so the recovered value is within a
// few ulps of the original; 1e-9 relative leaves room for δ(ε)'s flatness
// (a relative change r in δ moves ε by about r·δ/|δ′(ε)|).
func TestGaussianInverses(t *testing.T) {
	for _, mu := range []float64{0.2, 1, 5, 40, 3000} {
		for _, delta := range []float64{1e-2, 1e-5, 1e-10} {
			eps := GaussianEpsilon(mu, delta)
			if eps == 0 {
				if GaussianDelta(mu, 0) > delta {
					t.Errorf("μ = %g, δ = %g: ε = 0 but δ(0) = %g", mu, delta, GaussianDelta(mu, 0))
				}
				continue
			}
			if d := GaussianDelta(mu, eps); d > delta || d < delta*(1-1e-9) {
				t.Errorf("μ = %g: δ(ε(%g)) = %.12g", mu, delta, d)
			}
			if back := GaussianMu(eps, delta); math.Abs(back-mu) > 1e-9*mu {
				t.Errorf("μ = %g, δ = %g: μ(ε(μ)) = %.15g", mu, delta, back)
			}
		}
	}
}

// n compositions of a Gaussian mechanism are one with √n times its ratio.
func TestGaussianComposedMu(t *testing.T) {
	if got := GaussianComposedMu(2, 0.5, 9); got != 12 {
		t.Errorf("√9·2/0.5 = %g, want 12", got)
	}
}

// At α = 2 the subsampled bound has two terms:
// ε′(2) = ln(1 + q²·min(4(e^{1/z²} − 1), 2e^{1/z²})). The code goes through
// logarithms and back (≈ 6 roundings), hence 1e-14 relative.
func TestSubsampledGaussianRDPAtOrderTwo(t *testing.T) {
	for _, q := range []float64{0.01, 0.1, 0.5} {
		for _, z := range []float64{0.5, 1, 4} {
			e := math.Exp(1 / (z * z))
			want := math.Log1p(q * q * math.Min(4*(e-1), 2*e))
			want = math.Min(want, GaussianRDP(2, z))
			if got := SubsampledGaussianRDP(2, q, z); math.Abs(got-want) > 1e-14*want {
				t.Errorf("q = %g, z = %g: ε′(2) = %.17g, want %.17g", q, z, got, want)
			}
		}
	}
}

// Subsampling only helps, and helps more the smaller the sample; at q = 1 the
// bound is the Gaussian's.
func TestSubsampledGaussianRDPMonotone(t *testing.T) {
	for _, alpha := range []int{2, 3, 8, 32} {
		z := 1.2
		if got, want := SubsampledGaussianRDP(alpha, 1, z), GaussianRDP(float64(alpha), z); got != want {
			t.Errorf("α = %d: q = 1 gives %g, want the Gaussian's %g", alpha, got, want)
		}
		prev := 0.0
		for _, q := range []float64{0.001, 0.01, 0.1, 0.5} {
			got := SubsampledGaussianRDP(alpha, q, z)
			if !(got >= prev && got <= GaussianRDP(float64(alpha), z)) {
				t.Errorf("α = %d, q = %g: %g not in [%g, Gaussian]", alpha, q, got, prev)
			}
			prev = got
		}
	}
}

// Converting the Gaussian's RDP ρα (ρ = T/(2z²)) over real orders gives
// ρ + 2√(ρ ln(1/δ)) at α* = 1 + √(ln(1/δ)/ρ). Integer orders can only do
// worse, by at most the loss of moving α* to the nearer integer.
func TestRDPToDPAgainstTheContinuousOptimum(t *testing.T) {
	for _, rho := range []float64{0.01, 0.5, 40} {
		delta := 1e-5
		L := math.Log(1 / delta)
		want := rho + 2*math.Sqrt(rho*L)
		got, order := RDPToDP(func(a int) float64 { return rho * float64(a) }, delta)
		f := func(a float64) float64 { return rho*a + L/(a-1) }
		star := 1 + math.Sqrt(L/rho)
		worst := math.Max(f(math.Max(2, math.Floor(star))), f(math.Min(MaxOrder, math.Ceil(star))))
		if got < want-1e-12 || got > worst+1e-12 {
			t.Errorf("ρ = %g: ε = %g at α = %d, want in [%g, %g]", rho, got, order, want, worst)
		}
	}
}

// The exact composition of the analytic Gaussian mechanism is optimal, so
// the RDP route for the same T rounds can only give a larger ε — but not
// much larger: the two are independent computations of one quantity, and
// RDP's conversion loss at these settings is well under a factor of 2.
func TestRDPIsLooserThanTheExactComposition(t *testing.T) {
	delta := 1e-5
	for _, z := range []float64{0.8, 2, 10} {
		for _, T := range []int{1, 100, 10000} {
			exact := GaussianEpsilon(GaussianComposedMu(1, z, T), delta)
			rdp, _ := RDPToDP(func(a int) float64 { return float64(T) * GaussianRDP(float64(a), z) }, delta)
			if !(rdp >= exact && rdp <= 2*exact) {
				t.Errorf("z = %g, T = %d: RDP ε %g, exact %g", z, T, rdp, exact)
			}
		}
	}
}
