package fedavg

import (
	"math"
	"testing"

	"maple/algorithms/fedavg"
)

// FedAdagrad, FedAdam and FedYogi by hand, on one coordinate from w = 1 with
// η = 0.5, β₁ = 0.5, β₂ = 0.75 and τ = 0.75 (v starts at τ² = 0.5625).
// Round 1 moves the mean by Δ = 1: m = 0.5 and
//
//	Adagrad v = 0.5625 + 1 = 1.5625 (√v = 1.25, so w = 1 + 0.25/2 = 1.125)
//	Adam    v = 0.75·0.5625 + 0.25·1 = 0.671875
//	Yogi    v = 0.5625 + 0.25·1 = 0.8125        (v < Δ²: v grows)
//
// and round 2 by Δ = −0.25: m = 0.25 − 0.125 = 0.125 and
//
//	Adagrad v = 1.5625 + 0.0625 = 1.625
//	Adam    v = 0.75·0.671875 + 0.25·0.0625 = 0.51953125
//	Yogi    v = 0.8125 − 0.25·0.0625 = 0.796875  (v > Δ²: v shrinks)
//
// each round adding η·m/(√v + τ). The same under update sharing, whose
// replies ψ = −Δ/μ. Every m and v is exact in binary, and the steps are
// the rule's own operations on them (the square root is correctly
// rounded), so the models agree exactly. A second rule made by NewRule
// starts from m = 0 and v = τ² again.
func TestFedOptByHand(t *testing.T) {
	a := adaptivity{Eta: 0.5, Beta1: 0.5, Tau: 0.75}
	for _, c := range []struct {
		name   string
		params fedavg.StatefulRule
		v1, v2 float64
	}{
		{"fedadagrad", fedAdagrad{a}, 1.5625, 1.625},
		{"fedadam", fedAdam{a, 0.75}, 0.671875, 0.51953125},
		{"fedyogi", fedYogi{a, 0.75}, 0.8125, 0.796875},
	} {
		w1 := 1 + 0.25/(math.Sqrt(c.v1)+0.75)
		w2 := w1 + 0.0625/(math.Sqrt(c.v2)+0.75)
		for _, share := range []fedavg.Share{fedavg.Models, fedavg.Updates} {
			round1, round2 := [][]float64{{1.5}, {2.5}}, [][]float64{{w1 - 0.25}, {w1 - 0.25}}
			if share == fedavg.Updates { // ψ = −Δ/μ with μ = 0.5
				round1, round2 = [][]float64{{-2}, {-2}}, [][]float64{{0.5}, {0.5}}
			}
			r := c.params.NewRule(&fedavg.Config{}, 1)
			w := []float64{1}
			r.Combine(w, round1, share, 0.5)
			if w[0] != w1 {
				t.Fatalf("%s, %v, round 1: w = %v, want %v", c.name, share, w[0], w1)
			}
			r.Combine(w, round2, share, 0.5)
			if w[0] != w2 {
				t.Errorf("%s, %v, round 2: w = %v, want %v", c.name, share, w[0], w2)
			}
			r.Combine(w, nil, share, 0.5)
			if w[0] != w2 {
				t.Errorf("%s, %v: a round without replies moved w to %v", c.name, share, w[0])
			}
			fresh := []float64{1}
			c.params.NewRule(&fedavg.Config{}, 1).Combine(fresh, round1, share, 0.5)
			if fresh[0] != w1 {
				t.Errorf("%s, %v: a new server's first round gives %v, want %v: its moments are not fresh", c.name, share, fresh[0], w1)
			}
		}
	}
	if w := 1 + 0.25/(math.Sqrt(1.5625)+0.75); w != 1.125 {
		t.Errorf("FedAdagrad's first step by hand is 1.125, the formula gives %v", w)
	}
}

// FedAdagrad without momentum (β₁ = 0) along a constant pseudo-gradient
// Δ = 1 (update sharing, every reply ψ = −1 with μ = 1) has v_t = τ² + t
// after t rounds, so it steps by f(t) = η/(√(τ² + t) + τ), which decreases
// in t: the sum of T steps lies between the integrals of f over [1, T + 1]
// and over [0, T], whose antiderivative is 2η(u − τ·ln(u + τ)) with
// u = √(τ² + s). A rule that forgot its v — whose steps did not shrink —
// would end far outside them: at T = 10⁴ they are 95.82 and 96.10, where
// steps that stayed at the first, η/(1.25 + 0.75) = 0.25, would sum to 2500.
func TestFedAdagradStepsShrinkAsOneOverRootT(t *testing.T) {
	const eta, tau, T = 0.5, 0.75, 10000
	r := fedAdagrad{adaptivity{Eta: eta, Beta1: 0, Tau: tau}}.NewRule(&fedavg.Config{}, 1)
	w := []float64{0}
	for range T {
		r.Combine(w, [][]float64{{-1}}, fedavg.Updates, 1)
	}
	integral := func(s float64) float64 {
		root := math.Sqrt(tau*tau + s)
		return 2 * eta * (root - tau*math.Log(root+tau))
	}
	lo, hi := integral(T+1)-integral(1), integral(T)-integral(0)
	if !(w[0] > lo && w[0] < hi) {
		t.Errorf("after %d rounds w = %v, want within the integrals' bounds (%v, %v)", T, w[0], lo, hi)
	}
}
