package fedavg

import (
	"fmt"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/privacy/noise"
)

// TestMain fails the package if any test leaves a goroutine behind: every run
// must stop all of its actors.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// collector is an observer keeping a copy of every reported model.
type collector struct{ models [][]float64 }

func (c *collector) Observe(_ actors.ID, round int, key string, v []float64) {
	if key != "model" {
		return
	}
	if round != len(c.models)+1 {
		panic(fmt.Sprintf("round %d reported after %d rounds", round, len(c.models)))
	}
	c.models = append(c.models, append([]float64(nil), v...))
}

func regression(t *testing.T, agents int) ([]*data.Set, loss.Loss) {
	t.Helper()
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: agents, SamplesMin: 20, SamplesMax: 30, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, 99)
	return sets, loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
}

func runActors(t *testing.T, setup Setup, seed uint64) [][]float64 {
	t.Helper()
	obs := &collector{}
	r := actors.NewRun(actors.Options{RunSeed: seed, Observer: obs})
	defer r.Close()
	sched, err := Spawn(r, setup)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	return obs.models
}

// The actor engine must not change the mathematics: for the same seed the
// actor run and the actor-free reference produce the same iterates. Both sum
// in the same order, so they agree exactly; the 1e-12 tolerance of the issue
// is asserted, and exact equality is reported separately if it is lost. The
// importance-sampling variants cover every agent and data policy, with and
// without replacement, Hartley–Rao's random order and privacy noise. The
// actor run parks its agents after every task (fedavg.HoldPark) and the
// reference keeps them, so that what an agent carries between its tasks —
// the partial policy's probabilities, its streams — is carried exactly.
func TestActorRunMatchesReference(t *testing.T) {
	sets, l := regression(t, 12)
	wOpt, err := optimum.LeastSquares(sets, optimum.Uniform(12), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	base := fedavg.Config{
		Agents: 12, Participants: 4, StepSize: 0.05, Normalized: true,
		Epochs: fedavg.Range{Min: 1, Max: 5}, Batch: fedavg.Range{Min: 1, Max: 10},
	}
	importance := func(agents, data fedavg.Policy) func(c *fedavg.Config) {
		return func(c *fedavg.Config) {
			c.Importance = fedavg.Importance{Agents: agents, Data: data, Optimum: wOpt}
		}
	}
	fixed := make([]float64, 12)
	for k := range fixed {
		fixed[k] = float64(k+1) / 78
	}
	variants := map[string]func(c *fedavg.Config){
		"thesis":            func(*fedavg.Config) {},
		"original-step":     func(c *fedavg.Config) { c.Normalized = false },
		"with-replacement":  func(c *fedavg.Config) { c.Participation = fedavg.WithReplacement; c.Participants = 8 },
		"full":              func(c *fedavg.Config) { c.Participation = fedavg.Full },
		"per-round":         func(c *fedavg.Config) { c.Schedule = fedavg.PerRound },
		"batch-replacement": func(c *fedavg.Config) { c.BatchWithReplacement = true },
		"noisy-models":      func(c *fedavg.Config) { c.NoiseStd = 0.1 },
		"noisy-updates":     func(c *fedavg.Config) { c.Share = fedavg.Updates; c.NoiseStd = 0.1; c.Noise = noise.Gaussian },
		"is-optimal":        importance(fedavg.Optimal, fedavg.Optimal),
		"is-adaptive":       importance(fedavg.Adaptive, fedavg.Adaptive),
		"is-partial":        importance(fedavg.Partial, fedavg.Partial),
		"is-mixed":          importance(fedavg.Partial, fedavg.Adaptive),
		"is-optimal-agents": importance(fedavg.Optimal, fedavg.Partial),
		"is-data-only":      importance(fedavg.Uniform, fedavg.Optimal),
		"is-fixed": func(c *fedavg.Config) {
			c.Importance = fedavg.Importance{Agents: fedavg.Fixed, Probabilities: fixed, Data: fedavg.Adaptive}
		},
		"is-random-order": func(c *fedavg.Config) {
			importance(fedavg.Adaptive, fedavg.Partial)(c)
			c.Importance.RandomOrder = true
		},
		"is-with-replacement": func(c *fedavg.Config) {
			importance(fedavg.Partial, fedavg.Partial)(c)
			c.Participation, c.Participants, c.BatchWithReplacement = fedavg.WithReplacement, 8, true
		},
		"is-noisy-updates": func(c *fedavg.Config) {
			importance(fedavg.Partial, fedavg.Partial)(c)
			c.Share, c.NoiseStd = fedavg.Updates, 0.1
		},
		"is-per-round-data": func(c *fedavg.Config) {
			importance(fedavg.Uniform, fedavg.Partial)(c)
			c.Schedule = fedavg.PerRound
		},
	}
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			cfg := base
			change(&cfg)
			cfg.Hold = fedavg.HoldKeep
			parked := cfg
			parked.Hold = fedavg.HoldPark
			w0 := make([]float64, 3)
			got := runActors(t, Setup{Config: &parked, Data: data.Sets(sets), Loss: l, W0: w0, Rounds: 30, Server: "mean"}, 7)
			var want [][]float64
			err := reference.Reference(cfg, data.Sets(sets), l, w0, 7, 30, func(_ int, w []float64) {
				want = append(want, append([]float64(nil), w...))
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("actor run reported %d rounds, reference %d", len(got), len(want))
			}
			exact := true
			for i := range want {
				for j := range want[i] {
					if d := got[i][j] - want[i][j]; d > 1e-12 || d < -1e-12 {
						t.Fatalf("round %d coordinate %d: actors %v, reference %v", i+1, j, got[i][j], want[i][j])
					}
					exact = exact && got[i][j] == want[i][j]
				}
			}
			if !exact {
				t.Log("iterates agree to 1e-12 but not bit for bit")
			}
		})
	}
}

// byzantine is an agent that answers every round with a huge model.
type byzantine struct{ server actors.ID }

func (b *byzantine) Receive(ctx *actors.Context, m proto.Message) error {
	gm := m.(*msg.GlobalModel)
	reply := make([]float64, len(gm.Weights))
	for j := range reply {
		reply[j] = 1e6
	}
	ctx.Send(b.server, &msg.LocalModel{Slot: gm.Slot, Weights: reply})
	return nil
}

// With one of seven agents sending 1e6 in every coordinate every round, the
// mean server is dragged to about 1e6/7 per coordinate while the coordinate-wise
// median stays among the honest models, which full-batch gradient descent
// brings to w^o: after 200 rounds at μ = 0.05 their distance to w^o is far below
// the 1e-2 bound asserted (the contraction factor per round is ≤ 1 − 2μν ≈ 0.9).
func TestMedianServerResistsAnOutlier(t *testing.T) {
	sets, l := regression(t, 7)
	wOpt, err := optimum.LeastSquares(sets, optimum.Uniform(7), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fedavg.Config{Agents: 7, Participation: fedavg.Full, StepSize: 0.05, Normalized: true,
		Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: 20, Max: 20}}
	msd := map[string]float64{}
	for _, server := range []string{"mean", "median"} {
		obs := &collector{}
		r := actors.NewRun(actors.Options{RunSeed: 3, Observer: obs})
		sched, err := Spawn(r, Setup{
			Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: 200, Server: server,
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
		err = r.Execute(sched, &msg.Start{})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		last := obs.models[len(obs.models)-1]
		for j := range last {
			msd[server] += (last[j] - wOpt[j]) * (last[j] - wOpt[j])
		}
	}
	if msd["mean"] < 1e9 {
		t.Errorf("mean server MSD %v: the outlier should dominate it (≈ 3·(1e6/7)² ≈ 6e10)", msd["mean"])
	}
	if msd["median"] > 1e-2 {
		t.Errorf("median server MSD %v, want below 1e-2", msd["median"])
	}
}

func TestUnknownServerIsAnError(t *testing.T) {
	r := actors.NewRun(actors.Options{})
	defer r.Close()
	sets, l := regression(t, 2)
	cfg := fedavg.Config{Agents: 2, Participants: 1, StepSize: 0.1, Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: 1, Max: 1}}
	if _, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: 1, Server: "trimmed"}); err == nil {
		t.Error("an unknown server behaviour was accepted")
	}
}
