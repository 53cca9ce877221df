package randomwalk

import (
	"math"
	"testing"

	"math/rand/v2"

	"maple/algorithms/rng"
	"maple/privacy/gamma"
)

// The log-likelihood ratio of an announcement is a true likelihood ratio
// for every mechanism, atoms included: under the input l0, e^{LogRatio(·, l1,
// l0)} has mean 1 (a change of measure), and under l1 LogRatio has mean
// KL(P_l1 ‖ P_l0), closed-form for the Gamma mechanism (gamma.Divergence)
// and for the Laplace baseline floored at l0 (the floor only merges outputs
// of equal ratio): D − 1 + e^{−D} with D = (l1 − l0)/b. The truncated Gamma
// is checked by the change of measure alone, whose mass at the two atoms
// is what it tests. Five standard errors of the sample means.
func TestLogRatioIsALikelihoodRatio(t *testing.T) {
	const n = 100000
	const l0, l1 = 4.0, 6.0
	for k, p := range []Privacy{
		{Mechanism: GammaMechanism, Theta: 0.5},
		{Mechanism: TruncatedGamma, Theta: 0.5, Low: 4.5, High: 5.5},
		{Mechanism: LaplaceMechanism, Scale: 1.3, Low: l0},
	} {
		r := rng.New(uint64(k), "test", "ratio")
		var ratio, ratioSq, loss, lossSq float64
		for range n {
			e := math.Exp(p.LogRatio(privatize(&p, l0, r), l1, l0))
			ratio += e
			ratioSq += e * e
			x := p.LogRatio(privatize(&p, l1, r), l1, l0)
			loss += x
			lossSq += x * x
		}
		ratio, loss = ratio/n, loss/n
		seRatio := math.Sqrt((ratioSq/n - ratio*ratio) / n)
		if math.Abs(ratio-1) > 5*seRatio {
			t.Errorf("%v: E_l0[e^ratio] = %.5f ± %.4f, want 1", p.Mechanism, ratio, 5*seRatio)
		}
		var kl float64
		switch p.Mechanism {
		case GammaMechanism:
			kl, _ = gamma.Divergence(p.Theta, gamma.Bounds{Inf: l0, Sup: l1})
		case LaplaceMechanism:
			d := (l1 - l0) / p.Scale
			kl = d - 1 + math.Exp(-d)
		default:
			continue
		}
		if se := math.Sqrt((lossSq/n - loss*loss) / n); math.Abs(loss-kl) > 5*se {
			t.Errorf("%v: E_l1[ratio] = %.5f, KL %.5f ± %.4f", p.Mechanism, loss, kl, 5*se)
		}
	}
	// Swapping the inputs negates the ratio.
	p := Privacy{Mechanism: TruncatedGamma, Theta: 0.5, Low: 4.5, High: 5.5}
	for _, y := range []float64{math.Log(4.5), 1.6, math.Log(5.5)} {
		if a, b := p.LogRatio(y, l1, l0), p.LogRatio(y, l0, l1); a != -b {
			t.Errorf("ln R = %v: ratios %v and %v", y, a, b)
		}
	}
}

// A node privatizes its entry of Privacy.Inputs when they are set, and its
// L_i otherwise; the gradient weights keep the true L_i either way.
func TestInputsReplaceWhatANodePrivatizes(t *testing.T) {
	p, _, _ := pathProblem(t)
	cfg := Config{Protocol: Walk, Target: Importance, Walks: 1, StepSize: 0.1, Exponent: 0.75, Radius: 10,
		Privacy: Privacy{Mechanism: GammaMechanism, Theta: 0.5}}
	streams := func(owner, purpose string) *rand.Rand { return rng.New(9, owner, purpose) }
	_, plain, err := NewNodes(&cfg, p, streams)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Privacy.Inputs = []float64{100, plain.L[1], plain.L[2]}
	_, canary, err := NewNodes(&cfg, p, streams)
	if err != nil {
		t.Fatal(err)
	}
	if want := gamma.LogSample(rng.New(9, NodeName(0), PrivacyPurpose), 100, 0.5); canary.LogW[0] != want {
		t.Errorf("node 0 announced %v, want the draw for input 100, %v", canary.LogW[0], want)
	}
	if canary.LogW[1] != plain.LogW[1] || canary.LogW[2] != plain.LogW[2] || canary.Gradient[0] != plain.Gradient[0] {
		t.Errorf("the other nodes or the gradient weights changed: %+v vs %+v", canary, plain)
	}
	cfg.Privacy.Inputs = []float64{1, 2}
	if _, _, err := NewNodes(&cfg, p, streams); err == nil {
		t.Error("two inputs for three nodes accepted")
	}
	cfg.Privacy.Inputs = []float64{1, 0, 2}
	if _, _, err := NewNodes(&cfg, p, streams); err == nil {
		t.Error("an input of 0 accepted")
	}
}
