package noise

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"maple/privacy/internal/stattest"
)

// n draws per distributional test. At α = 0.001 the KS critical value is
// c(α)/√n = √(ln(2000)/2)/√n ≈ 1.95/√n ≈ 0.0138: a correct sampler fails one
// such test in a thousand seeds, and a Laplace with the wrong scale (D ≈ 0.5,
// see TestPrintedScaleFailsKS) is rejected with certainty.
const n = 20000

// alpha is the KS significance level.
const alpha = 0.001

func stream(seed uint64) *rand.Rand {
	return rand.New(rand.NewChaCha8([32]byte{byte(seed), 'n', 'o', 'i', 's', 'e'}))
}

func draws(m Mechanism, std float64, seed uint64) []float64 {
	x := make([]float64, n)
	m.Fill(x, std, stream(seed))
	return x
}

func TestMechanismNames(t *testing.T) {
	for _, m := range []Mechanism{Laplace, Gaussian} {
		got, err := ParseMechanism(m.String())
		if err != nil || got != m {
			t.Fatalf("ParseMechanism(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseMechanism("Laplacian"); err == nil {
		t.Fatal("ParseMechanism accepted an unknown name")
	}
}

// The KS test compares the empirical CDF of n draws with the exact CDF of the
// intended distribution: Laplace with scale σ/√2 (gonum's distuv.Laplace) and
// Normal with standard deviation σ.
func TestKolmogorovSmirnov(t *testing.T) {
	crit := stattest.KSCritical(n, alpha)
	for _, tc := range []struct {
		m   Mechanism
		std float64
		cdf func(float64) float64
	}{
		{Laplace, 0.1, distuv.Laplace{Scale: 0.1 / math.Sqrt2}.CDF},
		{Laplace, 3, distuv.Laplace{Scale: 3 / math.Sqrt2}.CDF},
		{Gaussian, 0.1, distuv.Normal{Sigma: 0.1}.CDF},
		{Gaussian, 3, distuv.Normal{Sigma: 3}.CDF},
	} {
		d := stattest.KS(draws(tc.m, tc.std, 1), tc.cdf)
		if d > crit {
			t.Errorf("%v σ=%g: KS D = %.4f > %.4f", tc.m, tc.std, d, crit)
		}
	}
}

// Negative control for the KS test: the scale printed in paper 001 eq. (54),
// √2/σ_g instead of σ_g/√2, is 200 times too large at σ_g = 0.1 and must be
// rejected against the intended Laplace(σ_g/√2). (At σ_g = √2 the two scales
// coincide, which is why the control uses the paper's σ_g = 0.1.)
func TestPrintedScaleFailsKS(t *testing.T) {
	const sigma = 0.1
	x := make([]float64, n)
	r := stream(2)
	for i := range x {
		x[i] = LaplaceFromUint64(r.Uint64(), math.Sqrt2/sigma)
	}
	d := stattest.KS(x, distuv.Laplace{Scale: LaplaceScale(sigma)}.CDF)
	if crit := stattest.KSCritical(n, alpha); d <= crit {
		t.Fatalf("printed scale passed the KS test: D = %.4f ≤ %.4f", d, crit)
	}
}

// The sample mean and variance must lie within 5 standard errors of 0 and σ².
// The standard errors are σ/√n for the mean and σ²·√((κ−1)/n) for the
// variance, with kurtosis κ = μ₄/σ⁴ = 6 for the Laplace and 3 for the Normal.
// A 5-SE deviation has probability below 10⁻⁶ under normality of the estimates.
func TestMoments(t *testing.T) {
	const std = 0.7
	for _, tc := range []struct {
		m        Mechanism
		kurtosis float64
	}{{Laplace, 6}, {Gaussian, 3}} {
		mean, v := stattest.MeanVar(draws(tc.m, std, 3))
		if se := stattest.MeanSE(std, n); math.Abs(mean) > 5*se {
			t.Errorf("%v: mean %.5f, more than 5 SE (%.5f) from 0", tc.m, mean, se)
		}
		if se := stattest.VarianceSE(std*std, tc.kurtosis, n); math.Abs(v-std*std) > 5*se {
			t.Errorf("%v: variance %.5f, more than 5 SE (%.5f) from %.5f", tc.m, v, se, std*std)
		}
	}
}

// Add adds exactly the draws Fill writes, so Add on a zero vector equals Fill
// and Add on y equals y + Fill bit for bit (one rounding in each case).
func TestAddMatchesFill(t *testing.T) {
	for _, m := range []Mechanism{Laplace, Gaussian} {
		filled := make([]float64, 64)
		m.Fill(filled, 0.5, stream(4))
		y := make([]float64, 64)
		for i := range y {
			y[i] = float64(i) - 30
		}
		added := append([]float64(nil), y...)
		m.Add(added, 0.5, stream(4))
		for i := range y {
			if added[i] != y[i]+filled[i] {
				t.Fatalf("%v: Add[%d] = %g, want %g", m, i, added[i], y[i]+filled[i])
			}
		}
	}
}

// Fill overwrites: stale contents of dst must not leak into the noise.
func TestFillOverwrites(t *testing.T) {
	a := make([]float64, 8)
	b := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	Laplace.Fill(a, 1, stream(5))
	Laplace.Fill(b, 1, stream(5))
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("Fill[%d] depends on previous contents: %g vs %g", i, a[i], b[i])
		}
	}
}

// The extreme words map to the documented extremes: k = 2⁵³−1 gives u = 1 and
// a zero magnitude; k = 0 gives u = 2⁻⁵³ and magnitude b·53·ln 2; bit 63 flips
// the sign.
func TestLaplaceFromUint64Extremes(t *testing.T) {
	const b = 2.0
	if x := LaplaceFromUint64(1<<53-1, b); x != 0 {
		t.Errorf("u = 1 gives %g, want 0", x)
	}
	tail := b * 53 * math.Ln2
	// −ln(2⁻⁵³) is computed by Log, accurate to 1 ulp; 1e-14 relative covers it.
	if x := LaplaceFromUint64(0, b); math.Abs(x-tail) > 1e-14*tail {
		t.Errorf("u = 2⁻⁵³ gives %g, want %g", x, tail)
	}
	if x, y := LaplaceFromUint64(1<<63|12345, b), LaplaceFromUint64(12345, b); x != -y || y <= 0 {
		t.Errorf("sign bit: %g and %g", x, y)
	}
}

func TestFillDoesNotAllocate(t *testing.T) {
	dst := make([]float64, 32)
	r := stream(6)
	for _, m := range []Mechanism{Laplace, Gaussian} {
		if a := testing.AllocsPerRun(100, func() { m.Add(dst, 1, r) }); a != 0 {
			t.Errorf("%v.Add allocates %v times", m, a)
		}
	}
}

func TestInvalidMechanismPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Fill with an invalid mechanism did not panic")
		}
	}()
	Mechanism(7).Fill(make([]float64, 1), 1, stream(7))
}

func BenchmarkLaplaceFill(b *testing.B) {
	dst := make([]float64, 1024)
	r := stream(8)
	for b.Loop() {
		Laplace.Fill(dst, 1, r)
	}
}

// The sign is applied without a branch; the variate is bit for bit the
// branch's (a magnitude, negated when bit 63 is set), zeros included, for
// every word: random ones, and the extremes of the 53 bits with either sign.
func TestLaplaceFromUint64SignsAsTheBranchDoes(t *testing.T) {
	branch := func(x uint64, b float64) float64 {
		e := -b * math.Log(float64(x&(1<<53-1)+1)*0x1p-53)
		if x>>63 != 0 {
			return -e
		}
		return e
	}
	r := rand.New(rand.NewPCG(7, 8))
	words := []uint64{0, 1<<53 - 1, 1 << 63, 1<<63 | (1<<53 - 1), math.MaxUint64}
	for range 100000 {
		words = append(words, r.Uint64())
	}
	for _, x := range words {
		for _, b := range []float64{0.5, 2, 1e-300} {
			if got, want := LaplaceFromUint64(x, b), branch(x, b); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("x = %#x, b = %g: %g, the branch gives %g", x, b, got, want)
			}
		}
	}
}
