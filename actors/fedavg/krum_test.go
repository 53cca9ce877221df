package fedavg

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/optimum"
	"maple/internal/params"
)

// Krum by hand: replies 0, 1, 2 and 100 in one coordinate with f = 1, so
// each scores its n − f − 2 = 1 nearest neighbour: 1, 1, 1 and 98² = 9604.
// Krum keeps the first best (slot 0, the model becomes 0); multi-Krum with
// m = 3 averages 0, 1 and 2; with update sharing the model moves by −μ times
// the same. Every number is exact in binary.
func TestKrumByHand(t *testing.T) {
	replies := [][]float64{{0}, {1}, {2}, {100}}
	for _, c := range []struct {
		k     krum
		share fedavg.Share
		want  float64
	}{
		{krum{F: 1, M: 1}, fedavg.Models, 0},
		{krum{F: 1, M: 3}, fedavg.Models, 1},
		{krum{F: 1, M: 3}, fedavg.Updates, 5 - 0.5*1},
		{krum{F: 0, M: 4}, fedavg.Models, 103.0 / 4}, // every reply: the mean
	} {
		model := []float64{5}
		c.k.Combine(model, replies, c.share, 0.5)
		if model[0] != c.want {
			t.Errorf("%+v, %v: model %v, want %v", c.k, c.share, model[0], c.want)
		}
	}
}

// With one agent of seven sending 10⁶ in every coordinate every round, the
// mean is dragged to about 10⁶/7 per coordinate; Krum with f = 1 (7 > 2·1 +
// 2) scores the outlier ≈ 3·10¹² against the honest replies' ≤ 1 and never
// keeps it, so full-batch gradient descent brings the model to w^o as
// without it: after 200 rounds at μ = 0.05 (contraction ≤ 1 − 2μν ≈ 0.9 per
// round) the distance is far below the 10⁻² asserted.
func TestKrumServerResistsAnOutlier(t *testing.T) {
	if msd := outlierMSD(t, "krum", params.Values{"f": 1, "m": 2}); msd > 1e-2 {
		t.Errorf("Krum server MSD %v, want below 1e-2", msd)
	}
}

// outlierMSD runs 200 rounds of full-batch gradient descent on seven
// agents with the server behaviour server, agent 0 sending 10⁶ in every
// coordinate every round, and returns the MSD of the last model.
func outlierMSD(t *testing.T, server string, p params.Values) float64 {
	t.Helper()
	sets, l := regression(t, 7)
	wOpt, err := optimum.LeastSquares(sets, optimum.Uniform(7), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fedavg.Config{Agents: 7, Participation: fedavg.Full, StepSize: 0.05, Normalized: true,
		Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: 20, Max: 20}}
	obs := &collector{}
	r := actors.NewRun(actors.Options{RunSeed: 3, Observer: obs})
	defer r.Close()
	sched, err := Spawn(r, Setup{
		Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: 200,
		Server: server, ServerParams: p,
		Agent: func(k int, a *Agent) actors.Behaviour {
			if k == 0 {
				return &byzantine{server: a.Server}
			}
			return a
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	last := obs.models[len(obs.models)-1]
	var msd float64
	for j := range last {
		msd += (last[j] - wOpt[j]) * (last[j] - wOpt[j])
	}
	return msd
}

// The paper's condition n > 2f + 2, and multi-Krum's m ≤ n − f, are checked
// against the replies of a round, naming the parameter.
func TestKrumRefusesTooManyByzantineReplies(t *testing.T) {
	cfg := fedavg.Config{Agents: 12, Participants: 6, StepSize: 0.05, Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: 1, Max: 1}}
	for _, c := range []struct {
		k    krum
		want string // "" when valid
	}{
		{krum{F: 1, M: 1}, ""}, {krum{F: 1, M: 5}, ""},
		{krum{F: 2, M: 1}, "f: Krum tolerates f Byzantine replies among n > 2f + 2, and a round has n = 6 replies: f must be at most 1"},
		{krum{F: 1, M: 6}, "m: multi-Krum averages at most n − f = 5"},
	} {
		err := c.k.Validate(&cfg)
		var pe *params.Error
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.HasPrefix(err.Error(), c.want) || !errors.As(err, &pe)) {
			t.Errorf("%+v: %v, want %q", c.k, err, c.want)
		}
	}
	if !slices.Contains(ReferenceServers(), "krum") {
		t.Error("krum is not run by the reference engine")
	}
}
