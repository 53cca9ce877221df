package optimum

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

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

// The normal equations are summed on the raw storage through BLAS; the
// minimizer is bit for bit the one of the matrix-level sums they replace
// (mat's SymRankOne and AddScaledVec), for dense and sparse sets, weights
// of every kind (1 and −1 included, where AddScaledVec takes other paths)
// and labels that are 0.
func TestLeastSquaresSumsAsTheMatrixCallsDo(t *testing.T) {
	for dim := 1; dim <= 6; dim++ {
		c := data.RegressionConfig{Agents: 4, SamplesMin: 1, SamplesMax: 9, Dim: dim, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}
		sets, _ := data.Regression(c, uint64(dim))
		sets[0].Y[0] = 0
		sets = append(sets, sparseCopy(sets[1]))
		for _, weights := range [][]float64{Uniform(5), {1, -1, 0.3, 2, 0.5}} {
			got, err := LeastSquares(sets, weights, 0.01)
			want, werr := matLeastSquares(sets, weights, 0.01)
			if (err == nil) != (werr == nil) {
				t.Fatalf("dim %d: errors %v and %v", dim, err, werr)
			}
			for j := range want {
				if math.Float64bits(got[j]) != math.Float64bits(want[j]) {
					t.Fatalf("dim %d, weights %v: coordinate %d is %v, the matrix calls give %v", dim, weights, j, got[j], want[j])
				}
			}
		}
	}
}

// matLeastSquares is LeastSquares with the matrix-level sums.
func matLeastSquares(sets []*data.Set, weights []float64, rho float64) ([]float64, error) {
	dim := sets[0].Dim
	r, b := mat.NewSymDense(dim, nil), mat.NewVecDense(dim, nil)
	row := make([]float64, dim)
	x := mat.NewVecDense(dim, row)
	for k, s := range sets {
		scale := weights[k] / float64(s.Len())
		for n := 0; n < s.Len(); n++ {
			clear(row)
			s.AddScaledRow(row, n, 1)
			r.SymRankOne(r, scale, x)
			b.AddScaledVec(b, scale*s.Y[n], x)
		}
	}
	for j := 0; j < dim; j++ {
		r.SetSym(j, j, r.At(j, j)+rho)
	}
	var chol mat.Cholesky
	if !chol.Factorize(r) {
		return nil, ErrSingular
	}
	var w mat.VecDense
	if err := chol.SolveVecTo(&w, b); err != nil {
		return nil, err
	}
	return w.RawVector().Data, nil
}

// sparseCopy returns s in compressed sparse rows, zeros left out.
func sparseCopy(s *data.Set) *data.Set {
	sp := &data.Set{Dim: s.Dim, Y: s.Y, RowPtr: []int{0}}
	for n := 0; n < s.Len(); n++ {
		for j, v := range s.Row(n) {
			if v != 0 && j%2 == 0 {
				sp.Col, sp.Val = append(sp.Col, int32(j)), append(sp.Val, v)
			}
		}
		sp.RowPtr = append(sp.RowPtr, len(sp.Col))
	}
	return sp
}
