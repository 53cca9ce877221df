package randomwalk

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/topology"
)

// pathProblem is three nodes on the path 0 – 1 – 2 (degrees 1, 2, 1), one
// sample each, and the logistic loss with ρ = 1/(2N), so that N·J_i is the
// paper's f_i = N·ln(1 + e^{−y xᵀw}) + ½‖w‖² (spec §6.1).
func pathProblem(t *testing.T) (Problem, [][]float64, []float64) {
	t.Helper()
	g, err := topology.NewGraph(3, [][2]int{{0, 1}, {1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	xs := [][]float64{{1, 2}, {-0.5, 0.3}, {3, -1}}
	ys := []float64{1, -1, 1}
	sets := make([]*data.Set, 3)
	for i := range sets {
		sets[i] = &data.Set{Dim: 2, X: append([]float64(nil), xs[i]...), Y: []float64{ys[i]}}
	}
	return Problem{Graph: g, Sets: sets, Loss: loss.Loss{Kind: loss.Logistic, Rho: 1.0 / 6}}, xs, ys
}

// One step of every walk variant, written out from the paper's formulas
// rather than with the package's helpers (the actor test compares the actor
// run with Reference, and both step through Node.Walk, so it cannot catch a
// wrong formula): w ← Π_W(w − γ_k·c_i·∇f_i(w)) with γ_k = γ₀/k^q,
// ∇f_i(w) = −N·y_i·x_i·σ(−y_i x_iᵀw) + w, L_i = 1 + N‖x_i‖²/4 and
// c_i = 1 (uniform walk, Algorithm 1), L̄/L_i (Algorithms 2 and 3 as
// printed) or R̄/R_i (the unbiased option), R_i the announced weights; and
// the Metropolis–Hastings transition probabilities of the path,
// P(i, j) = (1/deg i)·min{1, (π_j deg i)/(π_i deg j)}. The only operations
// are a handful of products and one exponential per step, so 1e-13 relative
// to the coordinates (of order 1–10) is rounding.
func TestWalkStepClosedForm(t *testing.T) {
	const N, gamma0, q = 3.0, 0.05, 0.75
	p, xs, ys := pathProblem(t)
	var L [3]float64
	var lbar float64
	for i, x := range xs {
		L[i] = 1 + N*(x[0]*x[0]+x[1]*x[1])/4
		lbar += L[i] / N
	}
	w0 := []float64{0.3, -0.7}
	grad := func(i int, w []float64) []float64 {
		s := 1 / (1 + math.Exp(ys[i]*(xs[i][0]*w[0]+xs[i][1]*w[1])))
		return []float64{-N*ys[i]*xs[i][0]*s + w[0], -N*ys[i]*xs[i][1]*s + w[1]}
	}
	cases := []struct {
		name   string
		cfg    Config
		weight func(i int, w Weights) float64
	}{
		{"uniform", Config{Target: Uniform}, func(int, Weights) float64 { return 1 }},
		{"importance", Config{Target: Importance}, func(i int, _ Weights) float64 { return lbar / L[i] }},
		{"gamma, true L", Config{Target: Importance, Privacy: Privacy{Mechanism: GammaMechanism, Theta: 2}},
			func(i int, _ Weights) float64 { return lbar / L[i] }},
		{"gamma, noisy R", Config{Target: Importance, Weighting: NoisyR, Privacy: Privacy{Mechanism: GammaMechanism, Theta: 2}},
			func(i int, w Weights) float64 {
				var rbar float64
				for _, lw := range w.LogW {
					rbar += math.Exp(lw) / N
				}
				return rbar / math.Exp(w.LogW[i])
			}},
	}
	for _, tc := range cases {
		for _, radius := range []float64{100, 0.5} {
			cfg := tc.cfg
			cfg.Protocol, cfg.Walks, cfg.StepSize, cfg.Exponent, cfg.Radius = Walk, 1, gamma0, q, radius
			nodes, w, err := NewNodes(&cfg, p, streamsOf(7))
			if err != nil {
				t.Fatal(err)
			}
			for i := range L {
				if math.Abs(w.L[i]-L[i]) > 1e-13*L[i] {
					t.Fatalf("%s: L_%d = %v, want 1 + N‖x‖²/4 = %v", tc.name, i, w.L[i], L[i])
				}
			}
			for i, n := range nodes {
				c := tc.weight(i, w)
				if math.Abs(w.Gradient[i]-c) > 1e-13*c {
					t.Errorf("%s: c_%d = %v, want %v", tc.name, i, w.Gradient[i], c)
				}
				// Step k = 1 (γ₀) from w0, then step k = 2 (γ₀/2^q):
				// Walk(walk, k, last) takes steps k+1 … last, proposing no
				// move after the last one.
				want := append([]float64(nil), w0...)
				model := append([]float64(nil), w0...)
				for k := 1; k <= 2; k++ {
					g := grad(i, want)
					step := gamma0 / math.Pow(float64(k), q) * c
					for j := range want {
						want[j] -= step * g[j]
					}
					if norm := math.Hypot(want[0], want[1]); norm > radius {
						want[0], want[1] = want[0]*radius/norm, want[1]*radius/norm
					}
					next, done := n.Walk(0, k-1, k, model, func(int, int, []float64) {})
					if next != -1 || done != k {
						t.Fatalf("%s: node %d step %d: next %d, done %d", tc.name, i, k, next, done)
					}
					for j := range want {
						if math.Abs(model[j]-want[j]) > 1e-13*max(1, math.Abs(want[j])) {
							t.Errorf("%s, radius %v: node %d after step %d: w = %v, want %v", tc.name, radius, i, k, model, want)
							break
						}
					}
				}
			}
			// The Metropolis–Hastings matrix of the announced weights on the
			// path: node 1 has degree 2, the ends degree 1.
			pi := Stationary(w.LogW)
			P := Transition(p.Graph, w.LogW)
			deg := []float64{1, 2, 1}
			for _, e := range [][2]int{{0, 1}, {1, 0}, {1, 2}, {2, 1}} {
				i, j := e[0], e[1]
				want := math.Min(1, pi[j]*deg[i]/(pi[i]*deg[j])) / deg[i]
				if got := P.At(i, j); math.Abs(got-want) > 1e-15 {
					t.Errorf("%s: P(%d,%d) = %v, want %v", tc.name, i, j, got, want)
				}
			}
		}
	}
}

// project leaves w exactly as the comparison with floats.Norm would, and
// scales it by the same factor, for vectors of every size around the
// sphere: just inside, on it, just outside, far in, far out, tiny, huge and
// all zero.
func TestProjectIsTheNormComparison(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 20000 {
		n := 1 + r.IntN(40)
		radius := math.Ldexp(0.5+r.Float64(), r.IntN(40)-20)
		w := make([]float64, n)
		for j := range w {
			w[j] = r.NormFloat64()
		}
		// Put w at a relative distance from the sphere between −10⁻⁴ and
		// 10⁻⁴ or within a few ulps of it, or far in or out, or give it
		// extreme magnitudes.
		target := radius * (1 + (r.Float64()-0.5)*2e-4)
		switch r.IntN(8) {
		case 4, 5: // within a few ulps of the sphere, where the sums disagree
			target = radius * (1 + float64(r.IntN(21)-10)*0x1p-52)
		case 0:
			target = radius * r.Float64()
		case 1:
			target = radius * (1 + 10*r.Float64())
		case 2:
			target = math.Ldexp(1, r.IntN(1200)-600)
		case 3:
			target = 0
		}
		if norm := floats.Norm(w, 2); norm > 0 {
			floats.Scale(target/norm, w)
		}
		want := slices.Clone(w)
		if norm := floats.Norm(want, 2); norm > radius {
			floats.Scale(radius/norm, want)
		}
		project(w, radius)
		for j := range w {
			if math.Float64bits(w[j]) != math.Float64bits(want[j]) {
				t.Fatalf("n = %d, radius %v, target norm %v: project gives %v, the norm comparison %v", n, radius, target, w, want)
			}
		}
	}
}
