package diffusion

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"maple/algorithms/diffusion"
)

// ClippedGossip by hand: the receiver holds 0, its neighbour (0, 4), both
// weighted ½; the difference of norm 4 is clipped to τ = 1, so the receiver
// moves by ½·(1/4)·(0, 4) = (0, 0.5); unclipped (τ = 5) by ½·(0, 4). Every
// number is exact in binary.
func TestClippedGossipByHand(t *testing.T) {
	self, other := []float64{0, 0}, []float64{0, 4}
	terms := []diffusion.Term{{Weight: 0.5, X: self, Self: true}, {Weight: 0.5, X: other}}
	for _, c := range []struct {
		tau  float64
		want []float64
	}{{1, []float64{0, 0.5}}, {5, []float64{0, 2}}} {
		z := make([]float64, 2)
		clippedGossip{Tau: c.tau}.Combine(z, terms)
		if !slices.Equal(z, c.want) {
			t.Errorf("τ = %v: %v, want %v", c.tau, z, c.want)
		}
	}
}

// With τ beyond every difference, ClippedGossip is the linear combination:
// x_p + Σ_m a_mp (x_m − x_p) against Σ_m a_mp x_m, equal up to the rounding
// of a few operations on values of order 1, far below the 1e-12 asserted. A
// Byzantine neighbour sending 10⁶ moves the receiver by at most a_mp·τ.
func TestClippedGossipIsLinearWithoutClippingAndBoundsAnOutlier(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	weights := []float64{0.2, 0.3, 0.1, 0.4}
	terms := make([]diffusion.Term, len(weights))
	for i, w := range weights {
		x := make([]float64, 3)
		for j := range x {
			x[j] = r.NormFloat64()
		}
		terms[i] = diffusion.Term{Weight: w, X: x, Self: i == 1}
	}
	lin, clip := make([]float64, 3), make([]float64, 3)
	diffusion.Linear{}.Combine(lin, terms)
	clippedGossip{Tau: 1e9}.Combine(clip, terms)
	for j := range lin {
		if math.Abs(lin[j]-clip[j]) > 1e-12 {
			t.Errorf("coordinate %d: linear %v, unclipped ClippedGossip %v", j, lin[j], clip[j])
		}
	}
	terms[3].X = []float64{1e6, 1e6, 1e6}
	clippedGossip{Tau: 0.5}.Combine(clip, terms)
	honest := slices.Clone(terms[:3])
	want := make([]float64, 3)
	clippedGossip{Tau: 0.5}.Combine(want, honest) // the same without the outlier's term…
	for j := range want {
		want[j] += 0.4 * terms[1].X[j] // …whose weight then stays on the receiver's own value
	}
	var sq float64
	for j := range clip {
		sq += (clip[j] - want[j]) * (clip[j] - want[j])
	}
	if d := math.Sqrt(sq); d > 0.4*0.5+1e-12 {
		t.Errorf("the outlier moved the receiver by %v, more than a_mp·τ = 0.2", d)
	}
}
