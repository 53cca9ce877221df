package fedavg

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/optimum"
	"maple/algorithms/rng"
	"maple/internal/params"
)

// FedDyn's server by hand, on one coordinate with K = 4 agents and α = 0.5:
// round 1 from θ = 1 with replies 2 and 4 (mean displacement 2) gives
// h = −0.5·(2/4)·2 = −0.5 and θ = 3 + 0.5/0.5 = 4; round 2 with both replies
// at 4 (no displacement) keeps h and gives θ = 4 + 1 = 5. Update sharing
// with μ = 0.5 sends ψ = (θ − θ_k)/μ and gives the same. Every number is
// exact in binary. A second server made by NewRule starts from h = 0.
func TestFedDynServerByHand(t *testing.T) {
	cfg := fedavg.Config{Agents: 4, StatefulClient: fedDyn{Alpha: 0.5}}
	for _, c := range []struct {
		share          fedavg.Share
		round1, round2 [][]float64
	}{
		{fedavg.Models, [][]float64{{2}, {4}}, [][]float64{{4}, {4}}},
		{fedavg.Updates, [][]float64{{-2}, {-6}}, [][]float64{{0}, {0}}},
	} {
		r := fedDynServer{}.NewRule(&cfg, 1)
		w := []float64{1}
		r.Combine(w, c.round1, c.share, 0.5)
		if w[0] != 4 {
			t.Fatalf("%v, round 1: θ = %v, want 4", c.share, w[0])
		}
		r.Combine(w, c.round2, c.share, 0.5)
		if w[0] != 5 {
			t.Errorf("%v, round 2: θ = %v, want 5", c.share, w[0])
		}
		fresh := []float64{1}
		fedDynServer{}.NewRule(&cfg, 1).Combine(fresh, c.round1, c.share, 0.5)
		if fresh[0] != 4 {
			t.Errorf("%v: a new server's first round gives %v, want 4: its h is not fresh", c.share, fresh[0])
		}
	}
}

// The server takes α from the feddyn client, and refuses to run without it.
func TestFedDynServerNeedsItsClient(t *testing.T) {
	cfg := fedavg.Config{Agents: 4, Participation: fedavg.Full, StepSize: 0.1, Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: 1, Max: 1}}
	if _, err := ConfigureServer(&cfg, "feddyn", nil); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "the feddyn server needs the feddyn client") {
		t.Errorf("feddyn with local SGD: %v", err)
	}
	if _, err := ConfigureClient(&cfg, "feddyn", nil); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("feddyn with its client: %v", err)
	}
}

// givenClient is a stateful client whose every agent gets the one client it
// holds, so that a test can read that client's state.
type givenClient struct{ c fedavg.Client }

func (g givenClient) NewClient(*fedavg.Config, int) fedavg.Client { return g.c }

// A FedDyn client's long local run converges to the minimizer θ_k of its
// problem L_k(θ) − ⟨g, θ⟩ + (α/2)‖θ − θ0‖², where ∇L_k(θ_k) − g + α(θ_k − θ0)
// = 0, so the gradient it keeps, g − α(θ_k − θ0), is ∇L_k(θ_k): the paper's
// first-order condition. 3000 full-batch steps of 0.05 with α = 1 contract
// the error by at most 1 − 0.05 per step (the least-squares L_k is convex),
// to 10⁻⁶⁷ of its start, so what is left is rounding: 1e-10 leaves room
// for the sums of 3000 steps. The second round starts from another θ0 with
// the g of the first, which the problem's linear term then uses.
func TestFedDynClientKeepsItsGradient(t *testing.T) {
	sets, l := regression(t, 1)
	set := sets[0]
	n := set.Len()
	client := fedDyn{Alpha: 1}.NewClient(nil, 3).(*fedDynClient)
	cfg := fedavg.Config{Agents: 1, Participation: fedavg.Full, StepSize: 0.05,
		Epochs: fedavg.Range{Min: 3000, Max: 3000}, Batch: fedavg.Range{Min: n, Max: n}, StatefulClient: givenClient{client}}
	a := fedavg.NewAgent(&cfg, set, l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(1, "agent/0", p) }))
	for round, w0 := range [][]float64{{1, -2, 0.5}, {-3, 0, 2}} {
		w := make([]float64, 3)
		if _, err := a.Train(w, w0, nil, 0); err != nil {
			t.Fatal(err)
		}
		g := make([]float64, 3)
		l.FullGrad(g, w, set)
		if d := floats.Distance(g, client.grad, 2); !(d <= 1e-10) {
			t.Errorf("round %d: the client keeps %v, ∇L_k(θ_k) = %v", round+1, client.grad, g)
		}
	}
}

// FedDyn removes the drift of long local runs on heterogeneous data: K = 8
// least-squares agents of different data, each running 40 full-batch local
// steps of 0.01 from the model, full participation. FedAvg's rounds
// converge to a point away from w°, the minimizer of the mean loss, where
// each agent's run pulls toward its own minimizer. FedDyn's only fixed
// point is w°, even though 40 steps do not solve the local problems
// exactly: a client's g_k stands still only if its run returns θ_k = θ, so
// g_k = ∇L_k(θ), and the server's model only if h = 0, and h is the mean of
// the g_k. With α = 1 the run contracts fast: after 300 rounds FedDyn is
// within 1e-12 of w° (rounding is about 2·10⁻¹⁵ here; α = 0.01, the
// default, takes thousands of rounds), and FedAvg at least 10⁻³ away. Every
// run is the reference engine, whose actor twin the registry test pins bit
// for bit.
func TestFedDynRemovesTheDriftOfLocalRuns(t *testing.T) {
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: 8, SamplesMin: 25, SamplesMax: 25, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 20,
	}, 7)
	_, l := regression(t, 1)
	wOpt, err := optimum.LeastSquares(sets, optimum.Uniform(8), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	run := func(server, client string, v params.Values) []float64 {
		cfg := fedavg.Config{Agents: 8, Participation: fedavg.Full, StepSize: 0.01,
			Epochs: fedavg.Range{Min: 40, Max: 40}, Batch: fedavg.Range{Min: 25, Max: 25}}
		if _, err := ConfigureClient(&cfg, client, v); err != nil {
			t.Fatal(err)
		}
		if _, err := ConfigureServer(&cfg, server, nil); err != nil {
			t.Fatal(err)
		}
		var last []float64
		if err := reference.Reference(cfg, data.Sets(sets), l, make([]float64, 3), 3, 300, func(_ int, w []float64) { last = slices.Clone(w) }); err != nil {
			t.Fatal(err)
		}
		return last
	}
	dyn := floats.Distance(run("feddyn", "feddyn", params.Values{"alpha": 1}), wOpt, 2)
	avg := floats.Distance(run("mean", "sgd", nil), wOpt, 2)
	if !(dyn <= 1e-12) {
		t.Errorf("FedDyn ends %v from w°, want ≤ 1e-12", dyn)
	}
	if !(avg >= 1e-3) {
		t.Errorf("FedAvg ends %v from w°: the set-up has no drift to remove", avg)
	}
	t.Logf("distance to w° after 300 rounds: FedDyn %.3g, FedAvg %.3g", dyn, avg)
}
