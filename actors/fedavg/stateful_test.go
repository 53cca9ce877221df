package fedavg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/algorithms/rng"
)

// FedAvgM by hand, on one coordinate with β = 0.5 and η = 1: round 1 from
// w = 5 with replies 1 and 3 (mean 2) gives v = 3 and w = 2; round 2 with
// replies 0 and 2 (mean 1) gives v = 0.5·3 + 1 = 2.5 and w = −0.5. A second
// server made by NewRule starts from v = 0 again. Every number is exact in
// binary.
func TestFedAvgMByHand(t *testing.T) {
	p := fedAvgM{Beta: 0.5, ServerStep: 1}
	r := p.NewRule(&fedavg.Config{}, 1)
	w := []float64{5}
	r.Combine(w, [][]float64{{1}, {3}}, fedavg.Models, 0.1)
	if w[0] != 2 {
		t.Fatalf("round 1: w = %v, want 2", w[0])
	}
	r.Combine(w, [][]float64{{0}, {2}}, fedavg.Models, 0.1)
	if w[0] != -0.5 {
		t.Errorf("round 2: w = %v, want −0.5", w[0])
	}
	fresh := []float64{5}
	p.NewRule(&fedavg.Config{}, 1).Combine(fresh, [][]float64{{1}, {3}}, fedavg.Models, 0.1)
	if fresh[0] != 2 {
		t.Errorf("a new server's first round gives %v, want 2: its velocity is not fresh", fresh[0])
	}
}

// With β = 0 and η = 1, FedAvgM under update sharing is the mean rule bit
// for bit: w − (w − (w − μ·mean)) computes the same w − μ·mean when the
// subtraction is exact, which Sterbenz's lemma does not promise in general —
// so the replies are small integers and μ a power of two, where every step
// is exact.
func TestFedAvgMWithoutMomentumIsTheMean(t *testing.T) {
	replies := [][]float64{{1, -2}, {3, 4}, {-5, 6}}
	want := []float64{7, -1}
	fedavg.Mean(want, replies, fedavg.Updates, 0.25)
	got := []float64{7, -1}
	fedAvgM{Beta: 0, ServerStep: 1}.NewRule(&fedavg.Config{}, 2).Combine(got, replies, fedavg.Updates, 0.25)
	if !slices.Equal(got, want) {
		t.Errorf("FedAvgM(β = 0, η = 1) gives %v, the mean %v", got, want)
	}
}

// FedNova by hand, on one coordinate from x = 0: reply −2 after τ = 1 step
// and reply −4 after τ = 4 steps have normalized changes 2 and 1, mean 1.5,
// which τ_eff = 2.5 rescales to a step of 3.75: x = −3.75, where the mean of
// the models is −3. Under update sharing with μ = 0.5 the replies are the
// changes over μ (4 and 8) and the result is the same. A reply without a
// step count counts one step.
func TestFedNovaByHand(t *testing.T) {
	rule := fedNova{ServerStep: 1}
	for _, c := range []struct {
		share   fedavg.Share
		replies [][]float64
	}{
		{fedavg.Models, [][]float64{{-2}, {-4}}},
		{fedavg.Updates, [][]float64{{4}, {8}}},
	} {
		w := []float64{0}
		rule.CombineSides(w, c.replies, [][]float64{{1}, {4}}, c.share, 0.5)
		if w[0] != -3.75 {
			t.Errorf("%v: x = %v, want −3.75", c.share, w[0])
		}
	}
	w := []float64{0}
	rule.CombineSides(w, [][]float64{{-2}, {-4}}, [][]float64{{1}, nil}, fedavg.Models, 0.5)
	if w[0] != -3 { // both count one step: the mean
		t.Errorf("without the second step count x = %v, want −3", w[0])
	}
}

// A SCAFFOLD client that takes one local step from x with step η learns its
// gradient: y = x − η(g(x) − c_i + c), so c_i⁺ = c_i − c + (x − y)/η = g(x),
// and it sends Δc_i = g(x) − c_i. The 1e-12 bound leaves room for the
// rounding of (x − y)/η (a few ulps of g, whose entries are below 10).
func TestScaffoldClientLearnsItsGradientInOneStep(t *testing.T) {
	sets, l := regression(t, 1)
	set := sets[0]
	n := set.Len()
	cfg := fedavg.Config{Agents: 1, Participation: fedavg.Full, StepSize: 0.01,
		Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: n, Max: n}, StatefulClient: scaffoldClient{}}
	a := fedavg.NewAgent(&cfg, set, l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(1, "agent/0", p) }))
	x := []float64{0.3, -0.2, 0.1}
	c := []float64{0.5, 0.25, -1}
	g := make([]float64, 3)
	l.FullGrad(g, x, set)
	for round := range 2 {
		prior := slices.Clone(g) // c_i before this round: 0, then g(x)
		if round == 0 {
			clear(prior)
		}
		out, err := a.Train(make([]float64, 3), x, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		for j := range g {
			if d := out.ToServer[j] - (g[j] - prior[j]); math.Abs(d) > 1e-12 {
				t.Errorf("round %d: Δc_%d = %v, want g − c_i = %v", round, j, out.ToServer[j], g[j]-prior[j])
			}
		}
	}
}

// Client drift under heterogeneous local steps (fedavg/fedprox-drift.yaml
// in small): K = 8 least-squares agents of different data, each running its
// own fixed number of full-batch local steps τ_k ∈ [1, 30] of the
// unnormalized step μ, full participation. w° minimizes the mean of the
// local objectives.
//
// SCAFFOLD's control variates cancel the drift exactly — at its fixed point
// c_k = ∇J_k(w°) and the corrected local steps stand still — so after 400
// rounds of μ = 0.004 its mean gradient is rounding (the run contracts by a
// constant factor per round; 1e-9 is far above the rounding of a
// 3-dimensional sum and far below FedAvg's gradient).
//
// FedAvg's and FedNova's rounds are affine maps x ↦ Mx + b (quadratic
// objectives, full batches, fixed τ_k), so their fixed points are solved
// from four one-round runs of the engine (from 0 and from each e_j) rather
// than run to: FedAvg's weights agent k by about τ_k and lands away from w°
// whatever the step, while FedNova's normalized average removes the τ_k
// weighting to first order in μτ_kλ(H_k), so its distance to w° shrinks in
// proportion to μ. In the regime μτ_maxλ_max ≤ 0.1, the slope of
// log-distance against log μ over a factor 4 of μ is 1 for FedNova and 0 for
// FedAvg; the bounds, [0.75, 1.25] and [−0.25, 0.25], leave a quarter for the
// next order in μτλ, whose relative size is at most 0.1. Every run is the
// reference engine, whose actor twin the registry test pins bit for bit.
func TestScaffoldAndFedNovaRemoveTheDriftOfHeterogeneousSteps(t *testing.T) {
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: 8, SamplesMin: 25, SamplesMax: 25, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 20,
	}, 7)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
	wOpt, err := optimum.LeastSquares(sets, optimum.Uniform(8), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	run := func(server, client string, step float64, w0 []float64, rounds int) []float64 {
		cfg := fedavg.Config{Agents: 8, Participation: fedavg.Full, StepSize: step,
			Epochs: fedavg.Range{Min: 1, Max: 30}, Batch: fedavg.Range{Min: 25, Max: 25}}
		if _, err := ConfigureServer(&cfg, server, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := ConfigureClient(&cfg, client, nil); err != nil {
			t.Fatal(err)
		}
		var last []float64
		if err := reference.Reference(cfg, data.Sets(sets), l, w0, 3, rounds, func(_ int, w []float64) { last = slices.Clone(w) }); err != nil {
			t.Fatal(err)
		}
		return last
	}
	scaffold := run("scaffold", "scaffold", 0.004, make([]float64, 3), 400)
	g, gk := make([]float64, 3), make([]float64, 3)
	for _, set := range sets {
		l.FullGrad(gk, scaffold, set)
		floats.AddScaled(g, 1.0/8, gk)
	}
	if n := floats.Norm(g, 2); !(n <= 1e-9) {
		t.Errorf("SCAFFOLD: ‖∇J(w)‖ = %v after 400 rounds, want ≤ 1e-9", n)
	}
	// fixedPoint solves x = Mx + b for the round map of server and client.
	fixedPoint := func(server, client string, step float64) []float64 {
		b := run(server, client, step, make([]float64, 3), 1)
		a := mat.NewDense(3, 3, nil) // I − M
		for j := range 3 {
			e := make([]float64, 3)
			e[j] = 1
			col := run(server, client, step, e, 1)
			for i := range 3 {
				a.Set(i, j, e[i]-(col[i]-b[i]))
			}
		}
		var x mat.VecDense
		if err := x.SolveVec(a, mat.NewVecDense(3, b)); err != nil {
			t.Fatal(err)
		}
		return x.RawVector().Data
	}
	// The first-order regime: μ·τ_max·λ_max = 0.1 at the larger step, with
	// λ_max the largest curvature of any local objective (a least-squares
	// J_k is quadratic, so column j of its Hessian is ∇J_k(e_j) − ∇J_k(0)).
	var lambda float64
	for _, set := range sets {
		h := mat.NewSymDense(3, nil)
		g0, gj := make([]float64, 3), make([]float64, 3)
		l.FullGrad(g0, make([]float64, 3), set)
		for j := range 3 {
			e := make([]float64, 3)
			e[j] = 1
			l.FullGrad(gj, e, set)
			for i := j; i < 3; i++ {
				h.SetSym(i, j, gj[i]-g0[i])
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(h, false) {
			t.Fatal("no eigenvalues")
		}
		lambda = max(lambda, slices.Max(eig.Values(nil)))
	}
	big := 0.1 / (30 * lambda)
	small := big / 4
	slope := func(server, client string) float64 {
		dBig := floats.Distance(fixedPoint(server, client, big), wOpt, 2)
		dSmall := floats.Distance(fixedPoint(server, client, small), wOpt, 2)
		return math.Log(dBig/dSmall) / math.Log(big/small)
	}
	nova, avg := slope("fednova", "fednova"), slope("mean", "sgd")
	if !(nova >= 0.75 && nova <= 1.25) {
		t.Errorf("FedNova's distance to w° scales as μ^%.3f, want μ^1 (bounds [0.75, 1.25])", nova)
	}
	if !(math.Abs(avg) <= 0.25) {
		t.Errorf("FedAvg's distance to w° scales as μ^%.3f, want μ^0: its fixed point does not depend on the step (bounds ±0.25)", avg)
	}
	t.Logf("λ_max %.3g, steps %.3g and %.3g; slopes: FedNova %.3f, FedAvg %.3f; SCAFFOLD's distance to w° %.3g",
		lambda, big, small, nova, avg, floats.Distance(scaffold, wOpt, 2))
}

// A SCAFFOLD client's control variate c_i survives its agent being parked
// between its rounds: the actor run parks every agent after every task
// (fedavg.HoldPark) and the reference keeps them all in memory, and with 4
// of 12 agents drawn per round every agent is parked and woken many times
// in 30 rounds, so a c_i lost (or shared) at a park would change the models.
// Both engines run the same arithmetic in the same order: they agree bit
// for bit, under model and update sharing.
func TestScaffoldClientsKeepTheirStateWhenParked(t *testing.T) {
	sets, l := regression(t, 12)
	w0 := make([]float64, 3)
	for _, share := range []fedavg.Share{fedavg.Models, fedavg.Updates} {
		cfg := fedavg.Config{Agents: 12, Participants: 4, StepSize: 0.05, Share: share,
			Epochs: fedavg.Range{Min: 1, Max: 5}, Batch: fedavg.Range{Min: 1, Max: 10}}
		if _, err := ConfigureClient(&cfg, "scaffold", nil); err != nil {
			t.Fatal(err)
		}
		parked := cfg
		parked.Hold = fedavg.HoldPark
		got := runActors(t, Setup{Config: &parked, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: 30, Server: "scaffold"}, 7)
		kept := cfg
		kept.Hold = fedavg.HoldKeep
		if _, err := ConfigureServer(&kept, "scaffold", nil); err != nil {
			t.Fatal(err)
		}
		var want [][]float64
		if err := reference.Reference(kept, data.Sets(sets), l, w0, 7, 30, func(_ int, w []float64) { want = append(want, slices.Clone(w)) }); err != nil {
			t.Fatal(err)
		}
		if len(got) != 30 || len(want) != 30 {
			t.Fatalf("%v: %d and %d models for 30 rounds", share, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("%v, round %d: parked %v, kept %v", share, i+1, got[i], want[i])
			}
		}
	}
}
