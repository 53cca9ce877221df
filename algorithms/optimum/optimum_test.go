package optimum

import (
	"math"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// At the closed-form minimizer the weighted aggregate gradient must vanish. The
// gradient is a sum of O(N) terms of size O(1) with rounding ε ≈ 1.1e-16, and
// the Cholesky solve adds a relative error of about κ·ε (κ < 100 here), so
// 1e-12 leaves two orders of magnitude of margin.
func TestLeastSquaresZeroesTheGradient(t *testing.T) {
	c := data.RegressionConfig{Agents: 5, SamplesMin: 20, SamplesMax: 40, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}
	sets, _ := data.Regression(c, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	for _, weights := range [][]float64{Uniform(5), {0.1, 0.2, 0.3, 0.15, 0.25}} {
		w, err := LeastSquares(sets, weights, l.Rho)
		if err != nil {
			t.Fatal(err)
		}
		total := make([]float64, 3)
		g := make([]float64, 3)
		for k, s := range sets {
			l.FullGrad(g, w, s)
			for j := range g {
				total[j] += weights[k] * g[j]
			}
		}
		for j, v := range total {
			if math.Abs(v) > 1e-12 {
				t.Errorf("weights %v: gradient coordinate %d = %v at w^o", weights, j, v)
			}
		}
	}
}

// Noise-free data with ρ = 0 are fitted exactly: w^o = w⋆.
func TestLeastSquaresRecoversNoiseFreeModel(t *testing.T) {
	c := data.RegressionConfig{Agents: 3, SamplesMin: 10, SamplesMax: 10, Dim: 2, CovScale: 1}
	sets, wStar := data.Regression(c, 2)
	w, err := LeastSquares(sets, Uniform(3), 0)
	if err != nil {
		t.Fatal(err)
	}
	for j := range w {
		if math.Abs(w[j]-wStar[j]) > 1e-12 {
			t.Errorf("coordinate %d: w^o = %v, w⋆ = %v", j, w[j], wStar[j])
		}
	}
}

func TestLeastSquaresRejectsBadInput(t *testing.T) {
	if _, err := LeastSquares(nil, nil, 0); err == nil {
		t.Error("no datasets accepted")
	}
	zero := &data.Set{Dim: 2, X: []float64{0, 0}, Y: []float64{1}}
	if _, err := LeastSquares([]*data.Set{zero}, []float64{1}, 0); err == nil {
		t.Error("singular system accepted")
	}
}
