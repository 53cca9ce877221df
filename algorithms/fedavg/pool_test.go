package fedavg

import (
	"reflect"
	"slices"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/algorithms/systems"
)

// jolted is a client that draws from a stream of its own (Local.Rand), so
// that the pool must carry a client's stream across its tasks.
type jolted struct{}

func (jolted) Train(t *Local) error {
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
func holdings[T any](t *testing.T, name string, cfg Config, run func(cfg Config) T) {
	t.Helper()
	var want T
	for i, hold := range []Holding{HoldKeep, HoldPark, HoldAuto} {
		cfg.Hold = hold
		got := run(cfg)
		if i == 0 {
			want = got
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: holding %d differs from keeping every agent", name, hold)
		}
	}
}

// The flat reference holds its agents through a Pool: parking every agent
// after each task and rebuilding it from the run seed gives the iterates of
// keeping them all, bit for bit, whatever an agent carries between its
// tasks — its mini-batch and noise streams, a per-round schedule, a
// client's own stream, the partial data policy's probabilities, the probes
// of the adaptive agent policy — and whether its data are held or drawn
// anew on every wake.
func TestParkedAgentsDrawTheSameNumbers(t *testing.T) {
	const K = 40
	src, _ := data.RegressionSource(data.RegressionConfig{Agents: K, SamplesMin: 5, SamplesMax: 12, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 3)
	held := data.Collect(src)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	wOpt, _, err := optimum.Solve(l, held, optimum.Uniform(K))
	if err != nil {
		t.Fatal(err)
	}
	base := Config{Agents: K, Participants: 6, StepSize: 0.05, Normalized: true, Epochs: Range{1, 3}, Batch: Range{1, 5}}
	cases := map[string]func(c *Config){
		"plain":                    func(*Config) {},
		"noise, per-round":         func(c *Config) { c.NoiseStd, c.Schedule, c.Share = 0.1, PerRound, Updates },
		"with replacement, jolted": func(c *Config) { c.Participation, c.Client = WithReplacement, jolted{} },
		"partial importance":       func(c *Config) { c.Importance = Importance{Agents: Partial, Data: Partial} },
		"adaptive importance":      func(c *Config) { c.Importance = Importance{Agents: Adaptive, Data: Optimal, Optimum: wOpt} },
	}
	for name, set := range cases {
		cfg := base
		set(&cfg)
		for _, s := range []data.Source{held, src} {
			holdings(t, name, cfg, func(cfg Config) [][]float64 {
				var ws [][]float64
				if err := Reference(cfg, s, l, []float64{0, 0}, 9, 25, func(_ int, w []float64) { ws = append(ws, slices.Clone(w)) }); err != nil {
					t.Fatal(name, err)
				}
				return ws
			})
		}
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
	base := Config{Agents: K, Participants: 8, StepSize: 0.05, Normalized: true, Epochs: Range{1, 3}, Batch: Range{1, 5},
		Client: jolted{}, NoiseStd: 0.01}
	cases := map[string]func(c *Config){
		"deadline, gaussian adversaries": func(c *Config) {
			c.Collect = Deadline{Seconds: 1.5, Reweighted: true}
			c.Adversary = GaussianNoise{Population: Population{Fraction: 0.2}, Std: 0.5}
		},
		"fedasync with timeout": func(c *Config) {
			c.Async = Async{Mode: FedAsync, Alpha: 0.6, Staleness: Staleness{Kind: Polynomial, A: 0.5}, Timeout: 2}
		},
		"fedbuff with timeout": func(c *Config) {
			c.Async = Async{Mode: FedBuff, Buffer: 4, ServerRate: 1, Timeout: 2}
		},
	}
	for name, set := range cases {
		cfg := base
		set(&cfg)
		holdings(t, name, cfg, func(cfg Config) []simEvent {
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

// An agent the pool parks keeps about two hundred bytes: the parked record
// of an agent that trained, without noise or systems model, holds one
// stream position (its mini-batches).
func TestParkedAgentIsSmall(t *testing.T) {
	src, _ := data.RegressionSource(data.RegressionConfig{Agents: 1000, SamplesMin: 10, SamplesMax: 10, Dim: 2, CovScale: 1, NoiseVarMax: 1}, 1)
	cfg := Config{Agents: 1000, Participants: 10, StepSize: 0.1, Epochs: Range{1, 2}, Batch: Range{1, 3}, Hold: HoldPark}
	p := NewPool(&cfg, src, loss.Loss{Kind: loss.LeastSquares}, 1, nil)
	reply := make([]float64, 2)
	for k := range 100 {
		m := p.Wake(k)
		if _, err := m.Core.Train(reply, []float64{0, 0}, 0); err != nil {
			t.Fatal(err)
		}
		p.Park(m)
	}
	if p.Parked() != 100 || len(p.kept) != 0 {
		t.Fatalf("%d parked, %d kept; want 100 and 0", p.Parked(), len(p.kept))
	}
	if pk := p.parked[7]; len(pk.pos) != 1 || pk.named != nil || pk.probs != nil {
		t.Errorf("parked record %+v: want one stream position", pk)
	}
}

// A pool holding its agents automatically keeps them when they all fit in
// KeepBytes and parks them otherwise.
func TestAutoHolding(t *testing.T) {
	for _, c := range []struct {
		agents int
		keep   bool
	}{{1000, true}, {1_000_000, false}} {
		src, _ := data.MixtureSource(data.MixtureConfig{Agents: c.agents, SamplesMin: 10, SamplesMax: 10, Dim: 2, Mean: 1, Variance: 1, Positive: 0.5}, 1)
		cfg := Config{Agents: c.agents, Participants: 1}
		if p := NewPool(&cfg, src, loss.Loss{Kind: loss.Logistic}, 1, nil); p.keep != c.keep {
			t.Errorf("%d agents: keep = %v, want %v (%.0f bytes each)", c.agents, p.keep, c.keep, AgentBytes(src.Set(0)))
		}
	}
	if b := AgentBytes(&data.Set{X: make([]float64, 20), Y: make([]float64, 10)}); b != memberBytes+240 {
		t.Errorf("AgentBytes = %v", b)
	}
}
