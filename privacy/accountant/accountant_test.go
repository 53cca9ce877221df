package accountant

import (
	"math"
	"testing"
)

// relTol is the tolerance of comparisons with values computed by hand: each
// side is a product or quotient of at most 6 rounded factors, so the two
// differ by ≤ 12u ≈ 1.3e-15 relative; 1e-14 covers that.
const relTol = 1e-14

func near(got, want float64) bool {
	return math.Abs(got-want) <= relTol*math.Abs(want)
}

func TestDecentralizedEpsilonByHand(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		P                     int
		sigma, B, Bp, optDist float64
		i                     int
		want                  float64
	}{
		// Spec §3.5 [derived]: P = 30, σ_g = 0.1, i = 1000 gives
		// √2·30/0.1·1000 = 300000√2 = 424264.0687… per unit of
		// B + B′ + √30‖w^o − w′^o‖.
		{"paper scale", 30, 0.1, 1, 0, 0, 1000, 300000 * math.Sqrt2},
		// With B = B′ = 0.5 and ‖w^o − w′^o‖ = 1/√30 the bracket is 2.
		{"paper scale, bracket 2", 30, 0.1, 0.5, 0.5, 1 / math.Sqrt(30), 1000, 600000 * math.Sqrt2},
		// P = 4, σ_g = √2: √2·4/√2 = 4; bracket 0.5 + 0.25 + 2·0.125 = 1;
		// i = 3: ε = 12.
		{"small", 4, math.Sqrt2, 0.5, 0.25, 0.125, 3, 12},
		{"i = 0", 10, 1, 1, 1, 1, 0, 0},
	} {
		if got := DecentralizedEpsilon(tc.P, tc.sigma, tc.B, tc.Bp, tc.optDist, tc.i); !near(got, tc.want) {
			t.Errorf("%s: ε = %.10g, want %.10g", tc.name, got, tc.want)
		}
	}
}

func TestFederatedEpsilonByHand(t *testing.T) {
	// σ_g = 0.5, B = 1, B′ = 2, ‖w^o − w′^o‖ = 3, i = 10:
	// (√2/0.5)·6·10 = 120√2 = 169.7056…
	if got := FederatedEpsilon(0.5, 1, 2, 3, 10); !near(got, 120*math.Sqrt2) {
		t.Errorf("ε = %.10g, want 120√2", got)
	}
	// The thesis's FL formula is the decentralized one with P = 1.
	if f, d := FederatedEpsilon(0.3, 0.2, 0.1, 0.7, 50), DecentralizedEpsilon(1, 0.3, 0.2, 0.1, 0.7, 50); f != d {
		t.Errorf("federated %g ≠ decentralized with P = 1 %g", f, d)
	}
}

// Inverse(forward(σ)) = σ: the forward and inverse maps are each ≤ 6
// roundings, so the round trip is exact to ≤ 12u ≈ 1.3e-15 relative.
func TestInversesRoundTrip(t *testing.T) {
	for _, P := range []int{1, 7, 30, 1000} {
		for _, sigma := range []float64{1e-3, 0.1, 0.8944, 50} {
			for _, i := range []int{1, 17, 1000, 1 << 20} {
				eps := DecentralizedEpsilon(P, sigma, 0.3, 1.7, 0.05, i)
				if got := DecentralizedSigma(P, eps, 0.3, 1.7, 0.05, i); !near(got, sigma) {
					t.Errorf("decentralized P=%d σ=%g i=%d: round trip gives %.17g", P, sigma, i, got)
				}
				eps = FederatedEpsilon(sigma, 0.3, 1.7, 0.05, i)
				if got := FederatedSigma(eps, 0.3, 1.7, 0.05, i); !near(got, sigma) {
					t.Errorf("federated σ=%g i=%d: round trip gives %.17g", sigma, i, got)
				}
			}
		}
	}
}

// ε grows with i, P, B, B′ and ‖w^o − w′^o‖ and falls with σ_g; σ_g for a
// target ε falls with ε.
func TestMonotonicity(t *testing.T) {
	base := func(P int, sigma, B, Bp, d float64, i int) float64 {
		return DecentralizedEpsilon(P, sigma, B, Bp, d, i)
	}
	e0 := base(10, 0.5, 1, 1, 1, 100)
	for name, e := range map[string]float64{
		"i": base(10, 0.5, 1, 1, 1, 101), "P": base(11, 0.5, 1, 1, 1, 100),
		"B": base(10, 0.5, 1.01, 1, 1, 100), "B′": base(10, 0.5, 1, 1.01, 1, 100),
		"‖w^o − w′^o‖": base(10, 0.5, 1, 1, 1.01, 100),
	} {
		if !(e > e0) {
			t.Errorf("ε does not grow with %s: %g ≤ %g", name, e, e0)
		}
	}
	if e := base(10, 0.51, 1, 1, 1, 100); !(e < e0) {
		t.Errorf("ε does not fall with σ_g: %g ≥ %g", e, e0)
	}
	if s1, s2 := DecentralizedSigma(10, 1, 1, 1, 1, 100), DecentralizedSigma(10, 2, 1, 1, 1, 100); !(s2 < s1) {
		t.Errorf("σ_g does not fall with the target ε: %g ≥ %g", s2, s1)
	}
}

func TestNormFactor(t *testing.T) {
	if f := NormFactor(L2, 100); f != 1 {
		t.Errorf("ℓ2 factor %g, want 1", f)
	}
	if f := NormFactor(L1, 4); f != 2 {
		t.Errorf("ℓ1 factor for M = 4 is %g, want 2", f)
	}
	for _, n := range []Norm{L1, L2} {
		if got, err := ParseNorm(n.String()); err != nil || got != n {
			t.Errorf("ParseNorm(%q) = %v, %v", n.String(), got, err)
		}
	}
	if _, err := ParseNorm("L2"); err == nil {
		t.Error("ParseNorm accepted an unknown name")
	}
}

func TestInvalidInputsPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"σ = 0":    func() { DecentralizedEpsilon(3, 0, 1, 1, 1, 1) },
		"P = 0":    func() { DecentralizedEpsilon(0, 1, 1, 1, 1, 1) },
		"B < 0":    func() { FederatedEpsilon(1, -1, 1, 1, 1) },
		"i < 0":    func() { FederatedEpsilon(1, 1, 1, 1, -1) },
		"ε = 0":    func() { FederatedSigma(0, 1, 1, 1, 1) },
		"M = 0":    func() { NormFactor(L1, 0) },
		"bad norm": func() { NormFactor(Norm(5), 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
