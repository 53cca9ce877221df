package fedavg

import (
	"context"
	"errors"
	"maple/privacy/accountant"
	"maple/privacy/ledger"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/rng"
	"maple/algorithms/systems"
	"maple/privacy/clip"
	"maple/privacy/secagg"
)

// secAggConfig is a small FedAvg run with secure aggregation: 12 agents,
// 6 per round, SecAgg (k = 5) with threshold 4 unless changed.
func secAggConfig() fedavg.Config {
	cfg := baseConfig()
	cfg.SecAgg = &fedavg.SecureAggregation{Neighbours: 5, Threshold: 4, Bits: 32, Clip: 4}
	return cfg
}

// eventsRun runs cfg on the actor engine (under model m, nil for none)
// and returns every observation and the run's error.
func eventsRun(t *testing.T, cfg fedavg.Config, m *systems.Model, rounds int, seed uint64, agent func(k int, a *Agent) actors.Behaviour) (*events, error) {
	t.Helper()
	sets, l := regression(t, cfg.Agents)
	ev := &events{}
	opts := actors.Options{RunSeed: seed, Observer: ev}
	setup := Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: rounds, Server: "mean", Agent: agent}
	if m != nil {
		opts.Timing = actors.Timing{Latency: m.Latency, Jitter: m.Jitter, Bandwidth: m.Bandwidth, Loss: m.Loss, Duplicate: m.Duplicate}
		setup.Fleet = m.Fleet(seed, cfg.Agents, fedavg.AgentName)
	}
	r := actors.NewRun(opts)
	defer r.Close()
	sched, err := Spawn(r, setup)
	if err != nil {
		t.Fatal(err)
	}
	return ev, r.Execute(sched, &msg.Start{})
}

// referenceEvents runs the flat reference on the same inputs.
func referenceEvents(t *testing.T, cfg fedavg.Config, rounds int, seed uint64) *events {
	t.Helper()
	sets, l := regression(t, cfg.Agents)
	ev := &events{}
	err := reference.ReferenceEvents(context.Background(), cfg, data.Sets(sets), l, make([]float64, 3), seed, rounds, func(round int, key string, v []float64) {
		ev.Observe(0, round, key, v)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// events keeps every observation but the time, by key, in order.
type events struct {
	byKey map[string][][]float64
	round map[string][]int
}

func (e *events) Observe(_ actors.ID, round int, key string, v []float64) {
	if e.byKey == nil {
		e.byKey, e.round = map[string][][]float64{}, map[string][]int{}
	}
	if key == fedavg.ObsTime {
		return
	}
	e.byKey[key] = append(e.byKey[key], slices.Clone(v))
	e.round[key] = append(e.round[key], round)
}

// Without faults the actor run of secure aggregation — the protocol's four
// phases as messages — gives the flat reference's iterates bit for bit,
// with the same traffic, encodings (range errors, rounding error, update
// norms, client by client) and privacy ledger: SecAgg and
// SecAgg+, model and update sharing, central and distributed DP.
func TestSecAggActorRunMatchesReference(t *testing.T) {
	variants := map[string]func(c *fedavg.Config){
		"secagg":       func(*fedavg.Config) {},
		"secagg+":      func(c *fedavg.Config) { c.SecAgg.Neighbours, c.SecAgg.Threshold = 2, 2 },
		"updates":      func(c *fedavg.Config) { c.Share = fedavg.Updates },
		"narrow-clip":  func(c *fedavg.Config) { c.SecAgg.Clip = 0.05 },
		"full":         func(c *fedavg.Config) { c.Participation, c.SecAgg.Neighbours = fedavg.Full, 11 },
		"central-dp":   func(c *fedavg.Config) { c.Share, c.DP = fedavg.Updates, dp(fedavg.CentralDP) },
		"distributed":  func(c *fedavg.Config) { c.Share, c.DP = fedavg.Updates, dp(fedavg.DistributedDP) },
		"ddg-unbiased": func(c *fedavg.Config) { c.Share, c.DP = fedavg.Updates, dp(fedavg.DistributedDP); c.DP.Beta = 0 },
	}
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			cfg := secAggConfig()
			change(&cfg)
			got, err := eventsRun(t, cfg, nil, 6, 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := referenceEvents(t, cfg, 6, 5)
			for _, key := range []string{fedavg.ObsModel, fedavg.ObsSecAggCosts, fedavg.ObsSecAggIncluded, fedavg.ObsPrivacy, fedavg.ObsSecAggEncoding} {
				if !slices.EqualFunc(got.byKey[key], want.byKey[key], slices.Equal) {
					t.Errorf("%s: actors %v, reference %v", key, got.byKey[key], want.byKey[key])
				}
			}
			if len(got.byKey[fedavg.ObsModel]) != 6 {
				t.Errorf("%d rounds", len(got.byKey[fedavg.ObsModel]))
			}
		})
	}
}

// dp is DP-FedAvg with z = 1, C = 0.5, δ = 1e-5 (β = e^{−1/2} for
// distributed DP, as Kairouz et al. use).
func dp(mode fedavg.DPMode) fedavg.DP {
	d := fedavg.DP{Mode: mode, Clip: 0.5, NoiseMultiplier: 1, Delta: 1e-5, Beta: 0.6065306597126334}
	if mode == fedavg.DistributedDP {
		// Rényi DP of replace-one neighbours is what bounds the distributed
		// discrete Gaussian (the scenario's defaults for it).
		d.Relation, d.Accountant = accountant.ReplaceOne, ledger.RDP
	}
	return d
}

// Central DP without secure aggregation runs through the ordinary server on
// both engines, adaptive clipping included.
func TestCentralDPActorRunMatchesReference(t *testing.T) {
	cfg := baseConfig()
	cfg.Share, cfg.DP = fedavg.Updates, dp(fedavg.CentralDP)
	cfg.DP.Adaptive = &clip.Adaptive{Quantile: 0.5, LearningRate: 0.2, CountNoise: 3}
	got, err := eventsRun(t, cfg, nil, 8, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := referenceEvents(t, cfg, 8, 3)
	for _, key := range []string{fedavg.ObsModel, fedavg.ObsPrivacy} {
		if !slices.EqualFunc(got.byKey[key], want.byKey[key], slices.Equal) || len(want.byKey[key]) != 8 {
			t.Errorf("%s: actors %v, reference %v", key, got.byKey[key], want.byKey[key])
		}
	}
}

// phaseDropper is a secure-aggregation client that vanishes before its
// message of one phase in every round: the injected dropout.
type phaseDropper struct {
	secAggClient
	phase secagg.Phase
}

func (d *phaseDropper) Receive(ctx *actors.Context, m proto.Message) error {
	if d.phase == secagg.AdvertiseKeys {
		if _, ok := m.(*msg.GlobalModel); ok {
			return nil
		}
	}
	phaseOf := map[string]secagg.Phase{"SecAggKeyList": secagg.ShareKeys, "SecAggForwardedKeys": secagg.MaskedInputCollection, "SecAggSurvivors": secagg.Unmasking}
	if p, ok := phaseOf[string(proto.MessageName(m).Name())]; ok && p == d.phase {
		return nil
	}
	return d.secAggClient.Receive(ctx, m)
}

// dropping returns the agent hook that makes agents drop before their
// message of phase p.
func dropping(cfg *fedavg.Config, p secagg.Phase, agents ...int) func(k int, a *Agent) actors.Behaviour {
	return func(k int, a *Agent) actors.Behaviour {
		c := secAggClient{Agent: a, Config: cfg, Slot: -1}
		if slices.Contains(agents, k) {
			return &phaseDropper{secAggClient: c, phase: p}
		}
		return &c
	}
}

// roundOne returns the model after one round in which exactly the clients
// included (agents) have their replies in the sum: each agent's reply is
// recomputed from its own streams as the first round's training, rounded
// onto the grid and encoded as the clients do it, and the decoded sum combined as the server
// does. It is the reference for a round with dropouts.
func roundOne(t *testing.T, cfg fedavg.Config, seed uint64, included []int) []float64 {
	t.Helper()
	sets, l := regression(t, cfg.Agents)
	w0 := make([]float64, 3)
	server := fedavg.NewServer(&cfg, w0, rng.New(seed, fedavg.ServerName, "participation"))
	draws := slices.Clone(server.Begin())
	scfg, err := cfg.SecAggRound(1, cfg.Draws(), 3)
	if err != nil {
		t.Fatal(err)
	}
	sum := make([]uint64, 3)
	for _, k := range draws {
		name := fedavg.AgentName(k)
		a := fedavg.NewAgent(&cfg, sets[k], l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(seed, name, p) }))
		reply := make([]float64, 3)
		a.Respond(reply, w0)
		if !slices.Contains(included, k) {
			continue
		}
		input := make([]float64, 3)
		if _, err := cfg.SecAggInput(input, reply, w0, scfg.Encoder, a.Rand); err != nil {
			t.Fatal(err)
		}
		enc := make([]uint64, 3)
		if _, err := scfg.Encoder.Encode(enc, input); err != nil {
			t.Fatal(err)
		}
		for j := range sum {
			sum[j] += enc[j]
		}
	}
	for j := range sum {
		sum[j] &= scfg.Encoder.Mask()
	}
	decoded := make([]float64, 3)
	scfg.Encoder.Decode(decoded, sum)
	server.CombineSum(decoded, len(included))
	return server.Model()
}

// Two clients vanish before their message of each phase in turn: the
// protocol recovers (t = 4 of 6 survive), and the first round's model is
// the mean of the rounded replies of exactly the clients whose masked
// inputs the server summed — all but the two when they vanish before
// sending it, all six when they vanish while unmasking — bit for bit.
func TestSecAggRecoversFromDropoutsInEveryPhase(t *testing.T) {
	for _, p := range secagg.Phases() {
		t.Run(p.String(), func(t *testing.T) {
			cfg := secAggConfig()
			cfg.Collect = fedavg.Deadline{Seconds: 5, Reweighted: true}
			cfg.SecAgg.Timeout = 1
			server := fedavg.NewServer(&cfg, make([]float64, 3), rng.New(9, fedavg.ServerName, "participation"))
			draws := slices.Clone(server.Begin())
			dropped := draws[1:3]
			ev, err := eventsRun(t, cfg, &systems.Model{Latency: 0.01}, 1, 9, dropping(&cfg, p, dropped...))
			if err != nil {
				t.Fatal(err)
			}
			included := slices.DeleteFunc(slices.Clone(draws), func(k int) bool { return slices.Contains(dropped, k) })
			if p == secagg.Unmasking {
				included = draws
			}
			want := roundOne(t, cfg, 9, included)
			if got := ev.byKey[fedavg.ObsModel]; len(got) != 1 || !slices.Equal(got[0], want) {
				t.Errorf("model %v, want %v", got, want)
			}
			if n := ev.byKey[fedavg.ObsSecAggIncluded]; len(n) != 1 || n[0][0] != float64(len(included)) {
				t.Errorf("included %v, want %d", n, len(included))
			}
		})
	}
}

// Three of six clients vanishing leaves 3 < t = 4: the round fails with the
// phase and the count. Under a deadline the round is skipped (the model
// stays w0) and the failure observed; waiting for every reply, the run
// stops with the protocol's error.
func TestSecAggBelowThresholdFailsClearly(t *testing.T) {
	for _, p := range secagg.Phases() {
		t.Run(p.String(), func(t *testing.T) {
			cfg := secAggConfig()
			cfg.SecAgg.Timeout = 1
			server := fedavg.NewServer(&cfg, make([]float64, 3), rng.New(9, fedavg.ServerName, "participation"))
			dropped := slices.Clone(server.Begin())[:3]
			cfg.Collect = fedavg.Deadline{Seconds: 5, Reweighted: true}
			ev, err := eventsRun(t, cfg, &systems.Model{Latency: 0.01}, 1, 9, dropping(&cfg, p, dropped...))
			if err != nil {
				t.Fatal(err)
			}
			if got := ev.byKey[fedavg.ObsModel]; len(got) != 1 || !slices.Equal(got[0], []float64{0, 0, 0}) {
				t.Errorf("model %v after a failed round, want w0", got)
			}
			failed := ev.byKey[fedavg.ObsSecAggFailed]
			if len(failed) != 1 || failed[0][0] != float64(p) || failed[0][2] != 3 || failed[0][3] != 4 {
				t.Errorf("failure %v, want phase %d, 3 survivors, threshold 4", failed, p)
			}
			if p == secagg.AdvertiseKeys {
				return // waiting for every reply, a client that never advertises stalls the round instead
			}
			cfg.Collect = nil
			_, err = eventsRun(t, cfg, &systems.Model{Latency: 0.01}, 1, 9, dropping(&cfg, p, dropped...))
			var te *secagg.ThresholdError
			if !errors.As(err, &te) || te.Phase != p || te.Survivors != 3 || !strings.Contains(err.Error(), "collection policy all") {
				t.Errorf("error %v, want the threshold error of phase %v", err, p)
			}
		})
	}
}

// Central DP under the systems model — bandwidth (which charges the privacy
// ledger carried by Done), dropouts, a deadline — gives the event-driven
// reference's iterates and ledger bit for bit.
func TestCentralDPUnderFaultsMatchesSimulation(t *testing.T) {
	cfg := baseConfig()
	cfg.Share, cfg.DP = fedavg.Updates, dp(fedavg.CentralDP)
	cfg.Collect = fedavg.Deadline{Seconds: 3, Reweighted: true}
	m := hostile()
	m.Availability = nil
	rec, err := systemsRun(t, cfg, m, "mean", 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	want, err := simulate(t, cfg, m, "mean", nil, 10, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(rec.models, want.models, slices.Equal) || !slices.Equal(rec.times, want.times) || len(rec.models) != 10 {
		t.Errorf("actors %v at %v, simulation %v at %v", rec.models, rec.times, want.models, want.times)
	}
	if rec.events[fedavg.ObsPrivacy] != 10 || want.events[fedavg.ObsPrivacy] != 10 {
		t.Errorf("ledger entries: actors %d, simulation %d", rec.events[fedavg.ObsPrivacy], want.events[fedavg.ObsPrivacy])
	}
}

// A secure-aggregation client keeps its keys and shares between the
// protocol's phases while its actor is parked (agentRange holds it), and
// an agent rebuilt by the pool draws the same numbers as one kept whole —
// its protocol, noise and dropout-phase streams resumed, its canary drawn
// afresh: every observation of a run with its agents parked after each
// task is the same as with them kept, on both engines, with faults that
// make clients vanish in every phase and the rounds fail or end without
// them, and with canaries.
func TestSecAggParkedClientsKeepTheirNumbers(t *testing.T) {
	faulty := &systems.Model{Latency: 0.01, Jitter: 0.005, Dropout: 0.25, CrashRate: 0.02}
	variants := []struct {
		name   string
		change func(c *fedavg.Config)
		model  *systems.Model
		agent  func(c *fedavg.Config) func(k int, a *Agent) actors.Behaviour
	}{
		{name: "secagg", change: func(*fedavg.Config) {}},
		{name: "secagg+-distributed-dp", change: func(c *fedavg.Config) {
			c.SecAgg.Neighbours, c.SecAgg.Threshold = 2, 2
			c.Share, c.DP = fedavg.Updates, dp(fedavg.DistributedDP)
		}},
		{name: "central-dp-canaries", change: func(c *fedavg.Config) {
			c.SecAgg = nil
			c.Share, c.DP = fedavg.Updates, dp(fedavg.CentralDP)
			c.DP.Audit.Canaries = 4
		}},
		{name: "faults", model: faulty, change: func(c *fedavg.Config) {
			c.Collect = fedavg.Deadline{Seconds: 5, Reweighted: true}
			c.SecAgg.Timeout = 1
		}},
		{name: "injected-dropouts", model: &systems.Model{Latency: 0.01}, change: func(c *fedavg.Config) {
			c.Collect = fedavg.Deadline{Seconds: 5, Reweighted: true}
			c.SecAgg.Timeout = 1
		}, agent: func(c *fedavg.Config) func(k int, a *Agent) actors.Behaviour {
			return dropping(c, secagg.MaskedInputCollection, 0, 1, 2, 3, 4, 5)
		}},
	}
	const rounds, seed = 8, 11
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			runs := map[fedavg.Holding]*events{}
			for _, hold := range []fedavg.Holding{fedavg.HoldKeep, fedavg.HoldPark} {
				cfg := secAggConfig()
				v.change(&cfg)
				cfg.Hold = hold
				var agent func(k int, a *Agent) actors.Behaviour
				if v.agent != nil {
					agent = v.agent(&cfg)
				}
				ev, err := eventsRun(t, cfg, v.model, rounds, seed, agent)
				if err != nil {
					t.Fatal(err)
				}
				runs[hold] = ev
				if v.model == nil && v.agent == nil {
					ref := referenceEvents(t, cfg, rounds, seed)
					for key := range ev.byKey {
						if !reflect.DeepEqual(ref.byKey[key], ev.byKey[key]) {
							t.Errorf("hold %d: %s: reference %v, actors %v", hold, key, ref.byKey[key], ev.byKey[key])
						}
					}
					if len(ref.byKey) != len(ev.byKey) {
						t.Errorf("hold %d: keys: actors %d, reference %d", hold, len(ev.byKey), len(ref.byKey))
					}
				}
			}
			kept, parked := runs[fedavg.HoldKeep], runs[fedavg.HoldPark]
			if len(kept.byKey[fedavg.ObsModel]) != rounds {
				t.Fatalf("%d rounds", len(kept.byKey[fedavg.ObsModel]))
			}
			if !reflect.DeepEqual(kept.byKey, parked.byKey) || !reflect.DeepEqual(kept.round, parked.round) {
				for key := range kept.byKey {
					if !reflect.DeepEqual(kept.byKey[key], parked.byKey[key]) {
						t.Errorf("%s: kept %v, parked %v", key, kept.byKey[key], parked.byKey[key])
					}
				}
				t.Errorf("observations differ: kept %d keys, parked %d", len(kept.byKey), len(parked.byKey))
			}
			t.Logf("observed: %d secagg/failed, %d dropped, %d late, %v included", len(kept.byKey[fedavg.ObsSecAggFailed]),
				len(kept.byKey[KeyDropped]), len(kept.byKey[KeyLate]), kept.byKey[fedavg.ObsSecAggIncluded])
		})
	}
}
