package clip

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// (3, 4) has norm 5: clipped to 1 it is (0.6, 0.8) (rounding: one division
// and two products, ≤ 2u relative, under 2e-16 here); a vector already
// inside is untouched.
func TestL2ByHand(t *testing.T) {
	x := []float64{3, 4}
	norm, clipped := L2(x, 1)
	if norm != 5 || !clipped || math.Abs(x[0]-0.6) > 2e-16 || math.Abs(x[1]-0.8) > 2e-16 {
		t.Errorf("clip (3,4) to 1: %v, norm %v, %v", x, norm, clipped)
	}
	y := []float64{0.1, -0.2}
	if _, clipped := L2(y, 1); clipped || y[0] != 0.1 || y[1] != -0.2 {
		t.Errorf("inside vector changed: %v", y)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for range 100 {
		v := make([]float64, 7)
		for i := range v {
			v[i] = 10 * r.NormFloat64()
		}
		L2(v, 2.5)
		if n := floats.Norm(v, 2); n > 2.5*(1+1e-15) {
			t.Fatalf("norm %v after clipping to 2.5", n)
		}
	}
}

// The noise has standard deviation z·c: the sample variance of 200000
// coordinates is within 5 standard errors (σ²√(2/N) for a Gaussian) of
// (zc)², and the mean within 5·zc/√N of 0.
func TestAddGaussianScale(t *testing.T) {
	const n = 200000
	z, c := 1.1, 0.7
	x := make([]float64, n)
	AddGaussian(x, z, c, rand.New(rand.NewPCG(2, 2)))
	mean := floats.Sum(x) / n
	var v float64
	for _, e := range x {
		v += (e - mean) * (e - mean)
	}
	v /= n - 1
	want := z * c * z * c
	if math.Abs(v-want) > 5*want*math.Sqrt(2.0/n) || math.Abs(mean) > 5*z*c/math.Sqrt(n) {
		t.Errorf("variance %v (want %v), mean %v", v, want, mean)
	}
}

// Without count noise the update is the closed form C·exp(−η(b/m − γ)),
// and iterating it on a fixed set of norms converges to the γ-quantile:
// with 100 norms 1, 2, …, 100 and γ = 0.3 the norm settles between the
// 30th and 31st values.
func TestAdaptiveClippingFindsTheQuantile(t *testing.T) {
	a := Adaptive{Quantile: 0.3, LearningRate: 0.2}
	if got, want := a.Update(2, 10, 7, nil), 2*math.Exp(-0.2*(0.7-0.3)); got != want {
		t.Errorf("update %v, want %v", got, want)
	}
	c := 1.0
	for range 2000 {
		unclipped := 0
		for k := 1; k <= 100; k++ {
			if float64(k) <= c {
				unclipped++
			}
		}
		c = a.Update(c, 100, unclipped, nil)
	}
	// At the fixed band the fraction is 0.30 or 0.31; each step multiplies
	// C by exp(∓0.2·0.01) at most, so C stays within [30, 31·e^{0.002}].
	if c < 30 || c > 31*math.Exp(0.002) {
		t.Errorf("clipping norm settled at %v, want the 30th–31st of 1…100", c)
	}
}

// Theorem 1's noise split by hand: z = 1, σ_b = 1 gives
// z_Δ = (1 − 1/4)^{−1/2} = 2/√3.
func TestUpdateNoiseMultiplier(t *testing.T) {
	a := Adaptive{Quantile: 0.5, LearningRate: 0.2, CountNoise: 1}
	if got, err := a.UpdateNoiseMultiplier(1); err != nil || math.Abs(got-2/math.Sqrt(3)) > 1e-15 {
		t.Errorf("z_Δ = %v, %v", got, err)
	}
	if _, err := a.UpdateNoiseMultiplier(2); err == nil {
		t.Error("σ_b = z/2 accepted")
	}
	for field, b := range map[string]Adaptive{
		"target_quantile:":    {Quantile: 1, LearningRate: 1},
		"clip_learning_rate:": {Quantile: 0.5, LearningRate: 0},
		"count_noise:":        {Quantile: 0.5, LearningRate: 1, CountNoise: -1},
	} {
		if err := b.Validate(); err == nil || !strings.HasPrefix(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
}
