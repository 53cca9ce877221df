package data

import (
	"math"
	"slices"
	"testing"

	"maple/algorithms/rng"
)

func TestRegressionIsReproducibleAndAgentLocal(t *testing.T) {
	c := RegressionConfig{Agents: 4, SamplesMin: 5, SamplesMax: 9, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 0.2}
	a, wa := Regression(c, 11)
	b, wb := Regression(c, 11)
	if !slices.Equal(wa, wb) {
		t.Fatal("w⋆ differs between identical calls")
	}
	for k := range a {
		if !slices.Equal(a[k].X, b[k].X) || !slices.Equal(a[k].Y, b[k].Y) {
			t.Fatalf("agent %d data differ between identical calls", k)
		}
		if n := a[k].Len(); n < 5 || n > 9 {
			t.Errorf("agent %d has %d samples, outside [5, 9]", k, n)
		}
	}
	// Adding agents must not change the data of the existing ones.
	c.Agents = 6
	more, _ := Regression(c, 11)
	for k := range a {
		if !slices.Equal(a[k].X, more[k].X) {
			t.Errorf("agent %d data changed when more agents were added", k)
		}
	}
	other, _ := Regression(RegressionConfig{Agents: 4, SamplesMin: 5, SamplesMax: 9, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 0.2}, 12)
	if slices.Equal(a[0].X, other[0].X) {
		t.Error("a different run seed produced the same data")
	}
}

// The sample covariance of the features must approach R_u = L Lᵀ and the
// residual variance must lie in the noise range. With N = 100000 samples the
// standard error of a covariance entry is about √(2/N)·σ² ≈ 0.0045·σ², so a
// tolerance of 0.03 (σ² ≤ 2.5 here) is more than five standard errors.
func TestRegressionMoments(t *testing.T) {
	c := RegressionConfig{Agents: 1, SamplesMin: 100000, SamplesMax: 100000, Dim: 2, CovScale: 1, SharedCovariance: true, NoiseVarMin: 0.5, NoiseVarMax: 0.5}
	sets, wStar := Regression(c, 3)
	s := sets[0]
	// Redraw L from the global stream exactly as the generator did (w⋆ first).
	global := rng.New(3, "data", "global")
	global.NormFloat64()
	global.NormFloat64()
	l := covarianceFactor(2, 1, global)
	want := [2][2]float64{
		{l[0] * l[0], l[0] * l[2]},
		{l[2] * l[0], l[2]*l[2] + l[3]*l[3]},
	}
	var cov [2][2]float64
	var resid float64
	for n := 0; n < s.Len(); n++ {
		row := s.Row(n)
		for a := 0; a < 2; a++ {
			for b := 0; b < 2; b++ {
				cov[a][b] += row[a] * row[b] / float64(s.Len())
			}
		}
		r := s.Y[n] - (row[0]*wStar[0] + row[1]*wStar[1])
		resid += r * r / float64(s.Len())
	}
	for a := 0; a < 2; a++ {
		for b := 0; b < 2; b++ {
			if math.Abs(cov[a][b]-want[a][b]) > 0.03 {
				t.Errorf("sample covariance[%d][%d] = %v, want R_u = %v ± 0.03", a, b, cov[a][b], want[a][b])
			}
		}
	}
	if math.Abs(resid-0.5) > 0.02 {
		t.Errorf("residual variance %v, want 0.5 ± 0.02 (standard error ≈ 0.0022)", resid)
	}
}

func TestRegressionConfigValidate(t *testing.T) {
	good := RegressionConfig{Agents: 1, SamplesMin: 1, SamplesMax: 1, Dim: 1, CovScale: 1}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	bad := []RegressionConfig{
		{Agents: 0, SamplesMin: 1, SamplesMax: 1, Dim: 1, CovScale: 1},
		{Agents: 1, SamplesMin: 2, SamplesMax: 1, Dim: 1, CovScale: 1},
		{Agents: 1, SamplesMin: 1, SamplesMax: 1, Dim: 0, CovScale: 1},
		{Agents: 1, SamplesMin: 1, SamplesMax: 1, Dim: 1, CovScale: 0},
		{Agents: 1, SamplesMin: 1, SamplesMax: 1, Dim: 1, CovScale: 1, NoiseVarMin: -1},
	}
	for i, c := range bad {
		if c.Validate() == nil {
			t.Errorf("case %d: invalid config accepted", i)
		}
	}
}
