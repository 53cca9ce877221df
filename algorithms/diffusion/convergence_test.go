package diffusion

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"maple/topology"
)

// iterationRadius returns ρ(Aᵀ(I − μH)), the spectral radius of noise-free
// full-batch ATC's error recursion (block (p, m) = a_mp(I − μH_m)).
func iterationRadius(t *testing.T, A mat.Matrix, Hs []*mat.Dense, mu float64) float64 {
	t.Helper()
	P, M := len(Hs), Hs[0].RawMatrix().Rows
	B := mat.NewDense(P*M, P*M, nil)
	for m := range P {
		for p := range P {
			for i := range M {
				for j := range M {
					v := -mu * Hs[m].At(i, j)
					if i == j {
						v++
					}
					B.Set(p*M+i, m*M+j, A.At(m, p)*v)
				}
			}
		}
	}
	var eig mat.Eigen
	if !eig.Factorize(B, mat.EigenNone) {
		t.Fatal("eigendecomposition failed")
	}
	var rho float64
	for _, v := range eig.Values(nil) {
		rho = max(rho, math.Hypot(real(v), imag(v)))
	}
	return rho
}

// Noise-free full-batch ATC on a doubly-stochastic A converges to the fixed
// point w = Aᵀ(w − μ∇J(w)), which for least squares is the solution of a PM×PM
// linear system (atcFixedPoint). The error contracts by ρ = ρ(Aᵀ(I − μH)) per
// iteration; after n = ⌈ln(1e-13/‖w_0 − w_∞‖_∞)/ln ρ⌉ iterations the linear
// error bound ρⁿ‖e_0‖ is 1e-13 up to the eigenvector conditioning of a
// 30×30 nonsymmetric matrix (a few units here), so 1e-10 is a generous bound;
// it also covers the rounding of n steps, each within a few ulps of O(1) values.
func TestATCConvergesToFixedPoint(t *testing.T) {
	A, sets, l := regressionNetwork(t, topology.Metropolis)
	const mu = 0.1
	want := atcFixedPoint(A, sets, l, mu)
	Hs := make([]*mat.Dense, len(sets))
	for p := range sets {
		Hs[p], _ = hessian(sets[p], l)
	}
	rho := iterationRadius(t, A, Hs, mu)
	if rho >= 1 {
		t.Fatalf("ρ = %v: μ = %v is unstable", rho, mu)
	}
	var e0 float64
	for _, w := range want {
		for _, v := range w {
			e0 = max(e0, math.Abs(v))
		}
	}
	n := int(math.Ceil(math.Log(1e-13/e0) / math.Log(rho)))
	var got [][]float64
	err := Reference(Config{Strategy: ATC, StepSize: mu}, Problem{A: A, Sets: sets, Loss: l, W0: make([]float64, len(want[0]))}, 1, n,
		Hooks{Models: func(i int, W [][]float64) {
			if i == n {
				got = W
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	for p := range want {
		for j := range want[p] {
			if d := math.Abs(got[p][j] - want[p][j]); d > 1e-10 {
				t.Fatalf("after %d iterations (ρ = %.6f) agent %d coordinate %d: %v, fixed point %v", n, rho, p, j, got[p][j], want[p][j])
			}
		}
	}
}

// The fixed point's centroid is biased by O(μ): with w_p = w^o + μx_p + O(μ²),
// the order-μ terms of w = Aᵀ(w − μ∇J(w)) give (I − Aᵀ)x = −Aᵀb (b_p =
// ∇J_p(w^o)), which fixes x up to a common shift, and the order-μ² terms are
// solvable only if Σ_p q_p H_p x_p = 0, which fixes the shift: the centroid
// moves by μc with c = −(Σ q_p H_p)⁻¹ Σ q_p H_p x_p for x centred (Σ q_p x_p =
// 0) (firstOrderBias). So the centroid MSD is μ²‖c‖²(1 + O(μ)): the bias of
// paper 001 Thm 2, O(μ²) in MSD, with its constant. The test checks the closed
// form against the exact fixed points: the relative deviation
// MSD/(μ²‖c‖²) − 1 must halve with μ (ratio within [0.4, 0.6], i.e. the
// next-order term is O(μ)), and be within 10% at μ = 0.01.
func TestCentroidBiasIsSecondOrder(t *testing.T) {
	A, sets, l, wo, q := metropolisProblem(t)
	c := firstOrderBias(A, q, sets, l, wo)
	c2 := sqDist(c, make([]float64, len(c)))
	if c2 == 0 {
		t.Fatal("heterogeneous agents should bias the centroid at first order")
	}
	wc := make([]float64, len(wo))
	var prev float64
	for i, mu := range []float64{0.04, 0.02, 0.01} {
		Centroid(wc, q, atcFixedPoint(A, sets, l, mu))
		rel := sqDist(wc, wo)/(mu*mu*c2) - 1
		if i > 0 {
			if r := rel / prev; r < 0.4 || r > 0.6 {
				t.Errorf("μ = %v: relative deviation %.4g, %.3g× that at 2μ; want about 0.5 (an O(μ) next-order term)", mu, rel, r)
			}
		}
		prev = rel
	}
	if math.Abs(prev) > 0.1 {
		t.Errorf("μ = 0.01: centroid MSD deviates from μ²‖c‖² by %.3g (relative), want within 10%%", prev)
	}
}
