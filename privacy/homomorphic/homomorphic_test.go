package homomorphic

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"maple/privacy/noise"
)

const (
	sigma = 0.1 // σ_g of paper 001's regression experiment
	dim   = 3   // model dimension M of the draws
	// stochTol is the tolerance on sums of weights in CheckForm: the test
	// matrices are built by at most P ≤ 12 additions or one division per
	// entry, so their row and column sums are 1 to ≲ 12·1.1e-16.
	stochTol = 1e-12
)

// cancelTol bounds the residual of a form that cancels algebraically. Residual
// sums n ≤ P(d_max+1) ≤ P² ≤ 144 terms q_p·a_mp·c_mp·g_m (P ≤ 12 in these
// tests). For recursive summation |error| ≤ (n−1)·u·Σ|terms| with
// u = 2⁻⁵³ ≈ 1.1e-16 (Higham, Accuracy and Stability, §4.2), and
// Σ|terms| ≤ 2·max_m|g_m|: Σ_p q_p = 1, and Σ_{m≠p} a_mp|c_mp| = 1 − a_pp and
// a_pp|s_p| = 1 − a_pp for ratio-free, and likewise for the ratio form with
// q = 1/P. Laplace draws of scale σ/√2 exceed 20σ with probability e^{−20√2}
// ≈ 5e-13 each, so |error| ≤ 143·1.1e-16·40σ ≈ 6.3e-13σ. The Perron vector
// from an LU solve satisfies Aq = q to a few ulps, adding ~1e-15σ. Hence
// 1e-12σ.
const cancelTol = 1e-12 * sigma

// draws returns P independent GH draws g_p, Laplace with standard deviation σ.
func draws(r *rand.Rand, p int) [][]float64 {
	g := make([][]float64, p)
	for m := range g {
		g[m] = make([]float64, dim)
		noise.Laplace.Fill(g[m], sigma, r)
	}
	return g
}

func maxAbs(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

func residual(a *mat.Dense, q []float64, g [][]float64, f Form) []float64 {
	dst := make([]float64, dim)
	Residual(a, q, g, f, dst)
	return dst
}

type namedMatrix struct {
	name string
	a    *mat.Dense
}

// testMatrices returns, for one seed, a graph size P ∈ [4, 12] and the weight
// rules under test.
func testMatrices(seed uint64) (r *rand.Rand, ms []namedMatrix) {
	r = rand.New(rand.NewPCG(seed, 7))
	p := 4 + r.IntN(9)
	und := randomConnected(r, p, 0.25)
	return r, []namedMatrix{
		{"metropolis", metropolis(und)},
		{"averaging", averaging(und)},
		{"random symmetric-support", randomWeights(r, und)},
		{"random directed", randomWeights(r, randomDirected(r, p, 0.2))},
		{"birkhoff", birkhoff(r, p, 2)},
	}
}

func TestFormNames(t *testing.T) {
	for _, f := range []Form{RatioFree, Ratio} {
		got, err := ParseForm(f.String())
		if err != nil || got != f {
			t.Fatalf("ParseForm(%q) = %v, %v", f.String(), got, err)
		}
	}
	if _, err := ParseForm("ratio_free"); err == nil {
		t.Fatal("ParseForm accepted an unknown name")
	}
}

// The ratio-free form cancels for every left-stochastic A with Aq = q:
// doubly stochastic or not, symmetric support or not.
func TestRatioFreeCancels(t *testing.T) {
	for seed := range uint64(40) {
		r, ms := testMatrices(seed)
		for _, m := range ms {
			if err := CheckForm(m.a, RatioFree, stochTol); err != nil {
				t.Fatalf("seed %d %s: CheckForm: %v", seed, m.name, err)
			}
			p, _ := m.a.Dims()
			res := residual(m.a, perron(m.a), draws(r, p), RatioFree)
			if e := maxAbs(res); e > cancelTol {
				t.Errorf("seed %d %s (P=%d): ratio-free residual %.3g > %.3g", seed, m.name, p, e, cancelTol)
			}
		}
	}
}

// The ratio form cancels for doubly-stochastic A: the symmetric Metropolis rule
// and the non-symmetric Birkhoff combinations.
func TestRatioCancelsForDoublyStochastic(t *testing.T) {
	for seed := range uint64(40) {
		r, ms := testMatrices(seed)
		for _, m := range []namedMatrix{ms[0], ms[4]} {
			if err := CheckForm(m.a, Ratio, stochTol); err != nil {
				t.Fatalf("seed %d %s: CheckForm refused a doubly-stochastic matrix: %v", seed, m.name, err)
			}
			p, _ := m.a.Dims()
			res := residual(m.a, perron(m.a), draws(r, p), Ratio)
			if e := maxAbs(res); e > cancelTol {
				t.Errorf("seed %d %s: ratio residual %.3g > %.3g", seed, m.name, e, cancelTol)
			}
		}
	}
}

// For the averaging rule (left-stochastic, not doubly stochastic) the ratio
// form leaves g_s with the coefficient κ_s = (Aᵀq)_s − q_s (spec §3.2): the
// residual is Σ_s κ_s g_s, far above the cancellation tolerance, and
// CheckForm refuses the form with the reason.
func TestRatioFailsForAveragingRule(t *testing.T) {
	for seed := range uint64(40) {
		r, ms := testMatrices(seed)
		a := ms[1].a
		p, _ := a.Dims()
		q := perron(a)
		kappa := make([]float64, p)
		for s := range p {
			for k := range p {
				kappa[s] += a.At(k, s) * q[k]
			}
			kappa[s] -= q[s]
		}
		// For the averaging rule q_p = (d_p+1)/S with S = Σ_k (d_k+1) ≤ P², so
		// κ_s = (mean_{k∈N_s∪{s}}(d_k+1) − (d_s+1))/S. At the leaf of
		// randomConnected the mean is ≥ (2+3)/2, so |κ| ≥ 0.5/144 > 1e-3.
		if maxAbs(kappa) < 1e-3 {
			t.Fatalf("seed %d: averaging matrix is (nearly) doubly stochastic, max|κ| = %g", seed, maxAbs(kappa))
		}
		err := CheckForm(a, Ratio, stochTol)
		if err == nil || !strings.Contains(err.Error(), "cancels only for doubly-stochastic A") || !strings.Contains(err.Error(), "use form: ratio-free") {
			t.Fatalf("seed %d: CheckForm(averaging, Ratio) = %v", seed, err)
		}
		g := draws(r, p)
		res := residual(a, q, g, Ratio)
		want := make([]float64, dim)
		for s := range p {
			for i := range want {
				want[i] += kappa[s] * g[s][i]
			}
		}
		// Residual and the prediction are two roundings of the same sum; with
		// the ratio (d_r+1)/(d_s+1) ≤ P the terms total ≤ P·max|g|, so each
		// has error ≤ 144·1.1e-16·12·20σ ≈ 4e-12σ: 1e-11σ bounds the gap.
		for i := range want {
			if d := math.Abs(res[i] - want[i]); d > 1e-11*sigma {
				t.Fatalf("seed %d: residual[%d] = %g, predicted Σκg = %g", seed, i, res[i], want[i])
			}
		}
		if e := maxAbs(res); e < 1e6*cancelTol {
			t.Errorf("seed %d: ratio residual %.3g is not ≫ %.3g", seed, e, cancelTol)
		}
	}
}

// The literal index reading of paper 001 eq. (44), c = a_sr/a_rs for the
// message s → r, makes g_s enter with Σ_r q_r a_sr²/a_rs − q_s(1 − a_ss). For a
// non-symmetric doubly-stochastic A that coefficient is not zero, which is why
// Ratio implements the reading c = a_rs/a_sr (see the package comment).
func TestLiteralIndexReadingOfEq44DoesNotCancel(t *testing.T) {
	// A = 0.5I + 0.3Π + 0.2Πᵀ for the 3-cycle Π: doubly stochastic, full
	// support. For each sender the literal coefficient is
	// (1/3)(0.3²/0.2 + 0.2²/0.3) − (1/3)(0.5) = (1/3)(0.5833… − 0.5) = 1/36.
	a := mat.NewDense(3, 3, []float64{
		0.5, 0.3, 0.2,
		0.2, 0.5, 0.3,
		0.3, 0.2, 0.5,
	})
	if err := CheckForm(a, Ratio, stochTol); err != nil {
		t.Fatalf("CheckForm: %v", err)
	}
	for s := range 3 {
		var literal float64
		for r := range 3 {
			if r != s {
				literal += a.At(s, r) * a.At(s, r) / a.At(r, s) / 3
			}
		}
		literal -= (1 - a.At(s, s)) / 3
		// Eight roundings of numbers ≤ 0.5: 1e-15 is a few ulps.
		if math.Abs(literal-1.0/36) > 1e-15 {
			t.Fatalf("literal coefficient of sender %d = %g, want 1/36", s, literal)
		}
	}
	g := [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
	if e := maxAbs(residual(a, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, g, Ratio)); e > 1e-15 {
		t.Fatalf("implemented ratio form leaves %g on unit draws", e)
	}
}

func TestCoefficients(t *testing.T) {
	a := mat.NewDense(3, 3, []float64{
		0.5, 0.2, 0.3,
		0.3, 0.6, 0.1,
		0.2, 0.2, 0.6,
	})
	// All expected values are single roundings of the printed fractions.
	for _, tc := range []struct {
		form             Form
		sender, receiver int
		want             float64
	}{
		{RatioFree, 0, 1, 1},
		{RatioFree, 2, 0, 1},
		{Ratio, 0, 1, 0.3 / 0.2}, // a_10/a_01: weight 0 gives 1 over weight 1 gives 0
		{Ratio, 1, 0, 0.2 / 0.3},
		{Ratio, 2, 1, 0.1 / 0.2},
		{RatioFree, 1, 1, -0.4 / 0.6},
		{Ratio, 0, 0, -1},
	} {
		if got := EdgeCoefficient(a, tc.form, tc.sender, tc.receiver); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("EdgeCoefficient(%v, %d→%d) = %g, want %g", tc.form, tc.sender, tc.receiver, got, tc.want)
		}
	}
	if got := SelfCoefficient(a, 2); math.Abs(got-(-0.4/0.6)) > 1e-15 {
		t.Errorf("SelfCoefficient(2) = %g, want −2/3", got)
	}
}

func TestCheckFormRefuses(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	directed := randomWeights(r, randomDirected(r, 6, 0.2))
	zeroSelf := mat.NewDense(2, 2, []float64{0, 1, 1, 0})
	for _, tc := range []struct {
		name string
		a    mat.Matrix
		form Form
		want string // substring of the error
	}{
		{"not square", mat.NewDense(2, 3, nil), RatioFree, "not square"},
		{"negative weight", mat.NewDense(2, 2, []float64{1.5, 0.5, -0.5, 0.5}), RatioFree, "a[1][0] = -0.5 is not a nonnegative number"},
		{"column sum", mat.NewDense(2, 2, []float64{0.5, 0.5, 0.4, 0.5}), RatioFree, "column 0 of the combination matrix sums to 0.9, not 1"},
		{"zero self-weight", zeroSelf, RatioFree, "agent 0 has self-weight a[0][0] = 0"},
		{"zero self-weight, ratio", zeroSelf, Ratio, "agent 0 has self-weight"},
		{"asymmetric support", directed, Ratio, "needs symmetric support"},
		{"unknown form", eye(2), Form(9), "unknown graph-homomorphic form"},
	} {
		err := CheckForm(tc.a, tc.form, stochTol)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: CheckForm = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if err := CheckForm(directed, RatioFree, stochTol); err != nil {
		t.Errorf("ratio-free refused a directed left-stochastic matrix: %v", err)
	}
}

// The row-sum message names the first row whose sum is not 1, and that sum.
func TestCheckFormRowMessage(t *testing.T) {
	a := mat.NewDense(3, 3, []float64{
		0.5, 0.25, 0.25,
		0.25, 0.5, 0.25,
		0.25, 0.25, 0.5,
	})
	a.Set(2, 1, 0.08)
	a.Set(1, 1, 0.67) // column 1 still sums to 1; rows 1 and 2 sum to 1.17 and 0.83
	want := "the printed ratio form (paper 001 eq. 44) cancels only for doubly-stochastic A; column sums are fine but row 1 sums to 1.17; use form: ratio-free"
	if err := CheckForm(a, Ratio, stochTol); err == nil || err.Error() != want {
		t.Fatalf("CheckForm = %v\nwant %s", err, want)
	}
}

func TestResidualPanicsOnBadDims(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Residual accepted draws of the wrong length")
		}
	}()
	Residual(eye(2), []float64{0.5, 0.5}, [][]float64{{1}, {1, 2}}, RatioFree, make([]float64, 1))
}

func BenchmarkResidual(b *testing.B) {
	r, ms := testMatrices(3)
	a := ms[0].a
	p, _ := a.Dims()
	q, g, dst := perron(a), draws(r, p), make([]float64, dim)
	for b.Loop() {
		Residual(a, q, g, RatioFree, dst)
	}
}
