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

// The realized ε with every Δ(j) at the bound equals the bound, and is below
// it otherwise. The sum of 1000 equal terms has relative error ≤ 1000u ≈
// 1.1e-13 (Higham's bound for recursive summation), hence 1e-12.
func TestRealizedEpsilon(t *testing.T) {
	const P, sigma, i = 30, 0.1, 1000
	bound := 0.3 + 0.2 + math.Sqrt(P)*0.01
	deltas := make([]float64, i)
	for j := range deltas {
		deltas[j] = bound
	}
	got, want := RealizedDecentralizedEpsilon(P, sigma, deltas), DecentralizedEpsilon(P, sigma, 0.3, 0.2, 0.01, i)
	if math.Abs(got-want) > 1e-12*want {
		t.Errorf("realized ε at the bound %.12g, bound %.12g", got, want)
	}
	deltas[500] = bound / 2
	if r := RealizedDecentralizedEpsilon(P, sigma, deltas); !(r < want) {
		t.Errorf("realized ε %g not below the bound %g", r, want)
	}
	// (√2·2/1)(0.5 + 1.5) = 4√2 for P = 2, σ_g = 1.
	if r := RealizedDecentralizedEpsilon(2, 1, []float64{0.5, 1.5}); !near(r, 4*math.Sqrt2) {
		t.Errorf("realized ε = %g, want 4√2", r)
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

func TestHighProbabilityLevel(t *testing.T) {
	for _, tc := range []struct {
		name             string
		msd, B, msdP, Bp float64
		want             float64
	}{
		// (1 − 0.25/1)(1 − 1/4) = 0.75·0.75; all values dyadic: exact.
		{"both informative", 0.25, 1, 1, 2, 0.5625},
		{"zero error", 0, 1, 0, 1, 1},
		{"one vacuous", 2, 1, 0.25, 1, 0},
		// Both factors negative: clipping each at 0 gives 0, not the
		// positive product (1 − 2)(1 − 3) = 2.
		{"both vacuous", 2, 1, 3, 1, 0},
	} {
		if got := HighProbabilityLevel(tc.msd, tc.B, tc.msdP, tc.Bp); got != tc.want {
			t.Errorf("%s: level %g, want %g", tc.name, got, tc.want)
		}
	}
	if lo, hi := HighProbabilityLevel(0.1, 1, 0.1, 1), HighProbabilityLevel(0.1, 2, 0.1, 2); !(hi > lo) {
		t.Errorf("level does not grow with B: %g ≤ %g", hi, lo)
	}
}

func TestMutualInformation(t *testing.T) {
	if mi := MutualInformation(0, 1); mi != 0 {
		t.Errorf("I = %g for a constant message, want 0", mi)
	}
	// σ_w² = σ_g²: ½ ln 2; σ_w² = 3σ_g²: ½ ln 4 = ln 2. One rounding each in
	// Log1p and the division: 1e-15 absolute covers it.
	if mi := MutualInformation(0.01, 0.01); math.Abs(mi-0.5*math.Ln2) > 1e-15 {
		t.Errorf("I = %g, want ½ ln 2", mi)
	}
	if mi := MutualInformation(0.3, 0.1); math.Abs(mi-math.Ln2) > 1e-15 {
		t.Errorf("I = %g, want ln 2", mi)
	}
}

func TestInvalidInputsPanic(t *testing.T) {
	for name, f := range map[string]func(){
		"σ = 0":    func() { DecentralizedEpsilon(3, 0, 1, 1, 1, 1) },
		"P = 0":    func() { DecentralizedEpsilon(0, 1, 1, 1, 1, 1) },
		"B < 0":    func() { FederatedEpsilon(1, -1, 1, 1, 1) },
		"i < 0":    func() { FederatedEpsilon(1, 1, 1, 1, -1) },
		"ε = 0":    func() { FederatedSigma(0, 1, 1, 1, 1) },
		"Δ NaN":    func() { RealizedDecentralizedEpsilon(2, 1, []float64{math.NaN()}) },
		"σ_g² = 0": func() { MutualInformation(1, 0) },
		"B = 0":    func() { HighProbabilityLevel(0, 0, 0, 1) },
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
