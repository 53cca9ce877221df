package reference

import (
	"context"
	"errors"
	"maple/internal/ctxtest"
	"reflect"
	"slices"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/algorithms/systems"
)

// regression is agents datasets of samples samples each, in two dimensions.
func regression(agents, samples int, seed uint64) []*data.Set {
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: agents, SamplesMin: samples, SamplesMax: samples, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, seed)
	return sets
}

// jolted is a client that draws from a stream of its own (Local.Rand), so
// that the pool must carry a client's stream across its tasks.
type jolted struct{}

func (jolted) Train(t *fedavg.Local) error {
	r := t.Rand("jolt")
	for range t.Epochs {
		idx, weights, err := t.Batch()
		if err != nil {
			return err
		}
		g := t.Gradient(idx, weights)
		g[0] += 0.01 * r.NormFloat64()
		t.Descend(g)
	}
	return nil
}

// holdings runs run once per way of holding the agents — every agent built
// before the first round and kept (the engines' old way), kept once built,
// and parked after every task — and fails unless the three give the same
// result.
func holdings[T any](t *testing.T, name string, cfg fedavg.Config, run func(cfg fedavg.Config) T) {
	t.Helper()
	var want T
	for i, hold := range []fedavg.Holding{fedavg.HoldKeep, fedavg.HoldPark, fedavg.HoldAuto} {
		cfg.Hold = hold
		got := run(cfg)
		if i == 0 {
			want = got
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: holding %d differs from keeping every agent", name, hold)
		}
	}
}

// SimulateContext checks its context before every event: done after 7
// checks, it handles 7 events — the scheduler's Start and Tick, the server's
// broadcast, … — and stops with the context's error, short of the rounds
// asked for. Not interrupted it is Simulate, which the engine-parity tests
// run.
func TestSimulateObservesInterruption(t *testing.T) {
	sets := regression(4, 10, 3)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	cfg := fedavg.Config{Agents: 4, Participants: 2, StepSize: 0.02, Epochs: fedavg.Range{Min: 1, Max: 1}, Batch: fedavg.Range{Min: 1, Max: 1}}
	models := 0
	err := SimulateContext(ctxtest.Countdown(7), cfg, data.Sets(sets), l, make([]float64, 2), 1, 50,
		SimOptions{Observe: func(_ int, key string, _ []float64) {
			if key == fedavg.ObsModel {
				models++
			}
		}})
	if !errors.Is(err, context.Canceled) || models >= 50 {
		t.Errorf("done after 7 events: %d models, %v; want fewer than 50 and context.Canceled", models, err)
	}
}

// simEvent is one observation of Simulate.
type simEvent struct {
	round int
	key   string
	v     []float64
}

// The event-driven reference holds its agents through a Pool too, and parks
// with each agent its link streams and clock: under a systems model that
// draws from every stream an agent owns — per-step compute times,
// dropouts, crashes, device classes, jitter, losses and duplicates — with
// adversaries that draw, a deadline, or an asynchronous server with a
// timeout, parking every agent after each task gives every event and
// iterate of keeping them all.
func TestParkedAgentsSimulateTheSameRun(t *testing.T) {
	const K = 30
	src, _ := data.RegressionSource(data.RegressionConfig{Agents: K, SamplesMin: 5, SamplesMax: 12, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 4)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	model := &systems.Model{Latency: 0.05, Jitter: 0.02, Loss: 0.05, Duplicate: 0.05, Dropout: 0.1, CrashRate: 0.01,
		Compute:      systems.Compute{Kind: systems.LogNormal, Median: 0.1, Sigma: 0.5, PerStep: true},
		Classes:      []systems.Class{{Name: "slow", Fraction: 0.3, Slowdown: 5, Latency: 0.1, Dropout: -1}},
		Availability: map[int][]systems.Window{3: {{From: 0, To: 2}}}}
	base := fedavg.Config{Agents: K, Participants: 8, StepSize: 0.05, Normalized: true, Epochs: fedavg.Range{Min: 1, Max: 3}, Batch: fedavg.Range{Min: 1, Max: 5},
		Client: jolted{}, NoiseStd: 0.01}
	cases := map[string]func(c *fedavg.Config){
		"deadline, gaussian adversaries": func(c *fedavg.Config) {
			c.Collect = fedavg.Deadline{Seconds: 1.5, Reweighted: true}
			c.Adversary = fedavg.GaussianNoise{Population: fedavg.Population{Fraction: 0.2}, Std: 0.5}
		},
		"fedasync with timeout": func(c *fedavg.Config) {
			c.Async = fedavg.Async{Mode: fedavg.FedAsync, Alpha: 0.6, Staleness: fedavg.Staleness{Kind: fedavg.Polynomial, A: 0.5}, Timeout: 2}
		},
		"fedbuff with timeout": func(c *fedavg.Config) {
			c.Async = fedavg.Async{Mode: fedavg.FedBuff, Buffer: 4, ServerRate: 1, Timeout: 2}
		},
	}
	for name, set := range cases {
		cfg := base
		set(&cfg)
		holdings(t, name, cfg, func(cfg fedavg.Config) []simEvent {
			var events []simEvent
			err := Simulate(cfg, src, l, []float64{0, 0}, 5, 40, SimOptions{Model: model, Observe: func(round int, key string, v []float64) {
				events = append(events, simEvent{round, key, slices.Clone(v)})
			}})
			if err != nil {
				t.Fatal(name, err)
			}
			return events
		})
	}
}
