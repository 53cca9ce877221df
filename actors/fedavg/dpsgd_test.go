package fedavg

import (
	"math"
	"math/rand/v2"
	"testing"

	"maple/algorithms/canary"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/privacy/accountant/pld"
	"maple/privacy/ledger"
)

// trainOnce runs one local training of client c from w0 on set.
func trainOnce(c fedavg.Client, cfg fedavg.Config, set *data.Set, l loss.Loss, w0 []float64) []float64 {
	cfg.Client = c
	a := fedavg.NewAgent(&cfg, set, l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(3, "agent/0", p) }))
	w := make([]float64, len(w0))
	a.Respond(w, w0)
	return w
}

// With fixed-size batches, a clip no gradient reaches and noise of
// standard deviation 10⁻³⁰⁰·C, DP-SGD is local SGD: the same batches
// (drawn from the same stream by Local.Batch), the mean gradient plus the
// regularizer's. The per-example sum and the batch mean add the same
// numbers in another order, hence 1e-12 rather than bit for bit.
func TestDPSGDWithoutNoiseOrClippingIsSGD(t *testing.T) {
	sets, l := regression(t, 1)
	cfg := fedavg.Config{Agents: 1, Participation: fedavg.Full, StepSize: 0.05,
		Epochs: fedavg.Range{Min: 20, Max: 20}, Batch: fedavg.Range{Min: 5, Max: 5}}
	w0 := []float64{1, -2, 0.5}
	dp := trainOnce(dpSGD{Clip: 1e9, NoiseMultiplier: 1e-300, Sampling: "fixed", Delta: 1e-5}, cfg, sets[0], l, w0)
	sgd := trainOnce(fedavg.SGD{}, cfg, sets[0], l, w0)
	for j := range dp {
		if math.Abs(dp[j]-sgd[j]) > 1e-12 {
			t.Fatalf("DP-SGD %v, SGD %v", dp, sgd)
		}
	}
}

// On data whose every gradient is zero (x = 0, y = 0, ρ = 0), one step of
// DP-SGD moves the model by the noise alone: −(μ/B)·N(0, (zC)²) per
// coordinate. Over 4000 coordinates the sample variance of w/(μzC/B) is
// χ²₄₀₀₀/4000, whose standard deviation is √(2/4000) ≈ 0.022: it must lie
// within 5 of them of 1. Large per-example gradients are clipped: with
// x = 100·e₁, y = 0, w = e₁ every example's gradient is 10⁴·e₁, clipped to
// C·e₁, so the step is −μ·(|batch|·C + noise)/B exactly along e₁.
func TestDPSGDNoiseScaleAndClipping(t *testing.T) {
	const dim, n, batch = 4000, 40, 8
	zero := &data.Set{Dim: dim, X: make([]float64, n*dim), Y: make([]float64, n)}
	l := loss.Loss{Kind: loss.LeastSquares}
	cfg := fedavg.Config{Agents: 1, Participation: fedavg.Full, StepSize: 0.5,
		Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: batch, Max: batch}}
	c := dpSGD{Clip: 3, NoiseMultiplier: 1.3, Sampling: "fixed", Delta: 1e-5}
	w := trainOnce(c, cfg, zero, l, make([]float64, dim))
	scale := cfg.StepSize * c.NoiseMultiplier * c.Clip / batch
	var ss float64
	for _, v := range w {
		ss += (v / scale) * (v / scale)
	}
	if v := ss / dim; math.Abs(v-1) > 5*math.Sqrt(2.0/dim) {
		t.Errorf("noise variance ratio %v, want 1 within %v", v, 5*math.Sqrt(2.0/dim))
	}
	big := &data.Set{Dim: 2, X: make([]float64, 2*n), Y: make([]float64, n)}
	for i := range n {
		big.X[2*i] = 100
	}
	cfg.Epochs = fedavg.Range{Min: 1, Max: 1}
	tiny := dpSGD{Clip: 3, NoiseMultiplier: 1e-300, Sampling: "fixed", Delta: 1e-5}
	got := trainOnce(tiny, cfg, big, l, []float64{1, 0})
	want := 1 - cfg.StepSize*batch*tiny.Clip/batch
	// Each of the 8 clipped gradients is 10⁴·(3/10⁴) with one rounding,
	// and the noise 10⁻³⁰⁰·C: 1e-14 and 1e-290 cover both.
	if math.Abs(got[0]-want) > 1e-14 || math.Abs(got[1]) > 1e-290 {
		t.Errorf("clipped step: %v, want [%v 0]", got, want)
	}
}

// Poisson batches have B_k/N_k of the examples on average: over 200 steps
// of a client with N = 50, B = 10 the examples charged are Binomial(200·50,
// 0.2), mean 2000 and standard deviation 40; the count must lie within 5
// of them.
func TestDPSGDPoissonBatchSizes(t *testing.T) {
	sets, _ := data.Regression(data.RegressionConfig{Agents: 1, SamplesMin: 50, SamplesMax: 50, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 5)
	set, l := sets[0], loss.Loss{Kind: loss.LeastSquares}
	cfg := fedavg.Config{Agents: 1, Participation: fedavg.Full, StepSize: 0.01,
		Epochs: fedavg.Range{Min: 200, Max: 200}, Batch: fedavg.Range{Min: 10, Max: 10}}
	cfg.Client = dpSGD{Clip: 1, NoiseMultiplier: 1, Sampling: "poisson", Delta: 1e-5}
	a := fedavg.NewAgent(&cfg, set, l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(4, "agent/0", p) }))
	out, err := a.Train(make([]float64, 3), make([]float64, 3), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(float64(out.Gradients)-2000) > 5*40 {
		t.Errorf("%d examples in 200 Poisson batches of rate 0.2, want 2000 ± 200", out.Gradients)
	}
}

// The ledger's sample-level guarantee after T rounds of E_max local steps at
// rate B_max/N_min is the accountant's of E_max·T steps, computed
// independently: under the Rényi DP accountant SubsampledGaussian's (one
// composition of T·E steps rather than T of E: both sum the same RDP terms,
// to rounding, 1e-12 relative) — Poisson batches under add/remove, fixed
// ones under replace-one —, under the PLD accountant (the default) the
// PLD of E_max·T steps of the same mechanism exactly.
func TestDPSGDLedgerIsTheAccountants(t *testing.T) {
	sets, _ := regression(t, 6)
	for _, sampling := range []string{"poisson", "fixed"} {
		rel := "add-remove"
		if sampling == "fixed" {
			rel = "replace-one"
		}
		c := dpSGD{Clip: 1, NoiseMultiplier: 1.2, Sampling: sampling, Delta: 1e-5, Relation: rel, Accountant: "rdp"}
		cfg := fedavg.Config{Agents: 6, Participants: 3, StepSize: 0.05, Client: c,
			Epochs: fedavg.Range{Min: 2, Max: 4}, Batch: fedavg.Range{Min: 3, Max: 5}}
		led := fedavg.NewLedger(&cfg, 3, fedavg.MinSamples(data.Sets(sets)))
		var last fedavg.Guarantee
		for range 10 {
			_, last = led.Round(true, 3)
		}
		s := accountant.SubsampledGaussian{Rate: 5 / float64(fedavg.MinSamples(data.Sets(sets))), NoiseMultiplier: 1.2, Steps: 4 * 10, Sampling: accountant.Poisson}
		if sampling == "fixed" {
			s.Sampling = accountant.FixedSize
		}
		want, _ := s.Epsilon(1e-5, accountant.Balle2020)
		if math.Abs(last.Epsilon-want) > 1e-12*want || !led.Samples() || led.Clients() {
			t.Errorf("%s: ledger ε %v, accountant %v", sampling, last.Epsilon, want)
		}
		c.Accountant = "pld"
		cfg.Client = c
		led = fedavg.NewLedger(&cfg, 3, fedavg.MinSamples(data.Sets(sets)))
		for range 10 {
			_, last = led.Round(true, 3)
		}
		d, err := pld.Compose(c.Step(fedavg.MinSamples(data.Sets(sets)), 5).Mechanism, 4*10, ledger.RunOptions)
		if err != nil {
			t.Fatal(err)
		}
		if pw := d.Epsilon(1e-5); last.Epsilon != pw || pw > want {
			t.Errorf("%s: PLD ledger ε %v, pld.Compose %v (the RDP one %v)", sampling, last.Epsilon, pw, want)
		}
	}
}

// DP-SGD trains every model maple has — least squares, logistic
// regression, softmax regression and the MLP — with Poisson and fixed-size
// batches, alike on both engines (bit for bit: the same per-example
// gradients summed in the same order), and it learns: the softmax model's
// training risk falls.
func TestDPSGDOnEveryModel(t *testing.T) {
	reg, _ := regression(t, 8)
	class := classData(t, 8)
	mlp := loss.Loss{Kind: loss.MLP, Rho: 0.001, Classes: 3, Hidden: 5, Activation: loss.Tanh}
	mlp.Origin = mlp.Init(4, rng.New(1, "model", "init"))
	for name, c := range map[string]struct {
		sets []*data.Set
		l    loss.Loss
	}{
		"least-squares": {reg, loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}},
		"logistic":      {signs(reg), loss.Loss{Kind: loss.Logistic, Rho: 0.001}},
		"softmax":       {class, loss.Loss{Kind: loss.Softmax, Rho: 0.001, Classes: 3}},
		"mlp":           {class, mlp},
	} {
		for _, sampling := range []string{"poisson", "fixed"} {
			cfg := fedavg.Config{Agents: 8, Participants: 4, StepSize: 0.2, Normalized: true,
				Epochs: fedavg.Range{Min: 2, Max: 4}, Batch: fedavg.Range{Min: 4, Max: 8},
				Client: dpSGD{Clip: 1, NoiseMultiplier: 0.3, Sampling: sampling, Delta: 1e-5, Relation: "add-remove", Accountant: "pld"}}
			w0 := make([]float64, c.l.Dim(c.sets[0].Dim))
			got := runActors(t, Setup{Config: &cfg, Data: data.Sets(c.sets), Loss: c.l, W0: w0, Rounds: 25, Server: "mean"}, 6)
			var want [][]float64
			if err := reference.Reference(cfg, data.Sets(c.sets), c.l, w0, 6, 25, func(_ int, w []float64) { want = append(want, append([]float64(nil), w...)) }); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				for j := range want[i] {
					if got[i][j] != want[i][j] {
						t.Fatalf("%s/%s: round %d: actors %v, reference %v", name, sampling, i+1, got[i], want[i])
					}
				}
			}
			if name == "softmax" {
				if before, after := risk(c.l, w0, c.sets), risk(c.l, want[len(want)-1], c.sets); !(after < before) {
					t.Errorf("%s/%s: training risk %v → %v", name, sampling, before, after)
				}
			}
		}
	}
}

// signs relabels regression data with the signs of its targets, ±1.
func signs(sets []*data.Set) []*data.Set {
	out := make([]*data.Set, len(sets))
	for k, s := range sets {
		c := *s
		c.Y = make([]float64, len(s.Y))
		for i, y := range s.Y {
			c.Y[i] = math.Copysign(1, y)
		}
		out[k] = &c
	}
	return out
}

// risk is the mean regularized risk over the sets.
func risk(l loss.Loss, w []float64, sets []*data.Set) float64 {
	var r float64
	for _, s := range sets {
		r += l.Risk(w, s)
	}
	return r / float64(len(sets))
}

// A Dirac canary adds exactly C to the noisy sum on its coordinate in the
// steps whose batch draws it, and changes nothing else: on logistic data
// whose feature 3 is zero in every example (and ρ > 0, whose gradient DP-SGD
// adds after the noise, outside the sum), the steps of agent 0's training
// with the canary in and out — the same stream, so the same batches and
// noise — record bit for bit the same models and sums on every other
// coordinate, and on coordinate 3 either the same sum (the canary not
// drawn) or fl(C + the sum without it) (drawn). The batches are drawn over
// the N + 1 examples, the canary's slot included in both runs (q = 5/21).
func TestDPSGDDiracCanaryAddsExactlyC(t *testing.T) {
	const n, dim, steps = 20, 4, 40
	r := rng.New(8, "test", "data")
	set := &data.Set{Dim: dim, X: make([]float64, n*dim), Y: make([]float64, n)}
	for i := range n {
		for j := range dim - 1 {
			set.X[i*dim+j] = r.NormFloat64()
		}
		set.Y[i] = math.Copysign(1, r.NormFloat64())
	}
	l := loss.Loss{Kind: loss.Logistic, Rho: 0.05}
	if free := canary.UntouchedFeatures(set); len(free) != 1 || free[0] != dim-1 {
		t.Fatalf("untouched features %v", free)
	}
	const C = 0.7
	record := func(in bool) []float64 {
		cfg := fedavg.Config{Agents: 1, Participation: fedavg.Full, StepSize: 0.3,
			Epochs: fedavg.Range{Min: steps, Max: steps}, Batch: fedavg.Range{Min: 5, Max: 5},
			Client: dpSGD{Clip: C, NoiseMultiplier: 1.3, Sampling: "poisson", Delta: 1e-5, Relation: "add-remove", Accountant: "pld"},
			SampleCanaries: &canary.Examples{Kind: canary.Gradient, Included: []bool{in}, Observe: true,
				Directions: []canary.Direction{{Index: []int{dim - 1}, Value: []float64{1}}}}}
		a := fedavg.NewAgent(&cfg, set, l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(5, "agent/0", p) }))
		out, err := a.Train(make([]float64, dim), []float64{0.1, -0.2, 0.3, 0.4}, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.AuditSteps) != steps*2*dim {
			t.Fatalf("recorded %d numbers, want %d", len(out.AuditSteps), steps*2*dim)
		}
		return out.AuditSteps
	}
	in, out := record(true), record(false)
	drawn := 0
	for s := range steps {
		for j := range 2 * dim {
			i := s*2*dim + j
			switch {
			case j == 2*dim-1 && in[i] == C+out[i] && in[i] != out[i]:
				drawn++
			case j == 2*dim-1 && in[i] == out[i], j == dim-1, math.Float64bits(in[i]) == math.Float64bits(out[i]):
				// the sum without the canary's draw; the model's own
				// coordinate moves with the canary
			default:
				t.Fatalf("step %d, number %d: %v with the canary, %v without", s, j, in[i], out[i])
			}
		}
	}
	// Binomial(40, 5/21) is 0 with probability 2·10⁻⁵: a test that saw
	// no draw would prove nothing.
	if drawn == 0 {
		t.Errorf("the canary was drawn in none of %d steps", steps)
	}
}
