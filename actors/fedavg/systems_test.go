package fedavg

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/algorithms/systems"
	"maple/internal/params"
)

// record is everything an observer sees of a run, in the order it arrives:
// models and times per round, and the systems events.
type record struct {
	models [][]float64
	times  []float64
	events map[string]int
}

func (r *record) observe(round int, key string, v []float64) {
	if r.events == nil {
		r.events = map[string]int{}
	}
	switch key {
	case fedavg.ObsModel:
		r.models = append(r.models, slices.Clone(v))
	case fedavg.ObsTime:
		r.times = append(r.times, v[0])
	default:
		r.events[key]++
	}
}

type recorder struct{ r *record }

func (o recorder) Observe(_ actors.ID, round int, key string, v []float64) {
	o.r.observe(round, key, v)
}

// systemsRun runs FedAvg on the actor engine under model m and returns what
// it observed and its error.
func systemsRun(t *testing.T, cfg fedavg.Config, m *systems.Model, server string, rounds int, seed uint64) (*record, error) {
	t.Helper()
	return systemsRunWith(t, cfg, m, server, nil, rounds, seed)
}

// systemsRunWith is systemsRun with the server's parameters p (nil: its
// defaults).
func systemsRunWith(t *testing.T, cfg fedavg.Config, m *systems.Model, server string, p params.Values, rounds int, seed uint64) (*record, error) {
	t.Helper()
	sets, l := regression(t, cfg.Agents)
	rec := &record{}
	r := actors.NewRun(actors.Options{RunSeed: seed, Observer: recorder{rec},
		Timing: actors.Timing{Latency: m.Latency, Jitter: m.Jitter, Bandwidth: m.Bandwidth, Loss: m.Loss, Duplicate: m.Duplicate}})
	defer r.Close()
	sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: rounds,
		Server: server, ServerParams: p, Fleet: m.Fleet(seed, cfg.Agents, fedavg.AgentName)})
	if err != nil {
		t.Fatal(err)
	}
	return rec, r.Execute(sched, &msg.Start{})
}

// simulate runs the event-driven reference on the same inputs, with the
// server's parameters p (nil: its defaults).
func simulate(t *testing.T, cfg fedavg.Config, m *systems.Model, server string, p params.Values, rounds int, seed uint64) (*record, error) {
	t.Helper()
	sets, l := regression(t, cfg.Agents)
	rec := &record{}
	if _, err := ConfigureServer(&cfg, server, p); err != nil {
		t.Fatal(err)
	}
	return rec, reference.Simulate(cfg, data.Sets(sets), l, make([]float64, 3), seed, rounds, reference.SimOptions{Model: m, Observe: rec.observe})
}

func baseConfig() fedavg.Config {
	return fedavg.Config{Agents: 12, Participants: 6, StepSize: 0.05, Normalized: true,
		Epochs: fedavg.Range{Min: 1, Max: 4}, Batch: fedavg.Range{Min: 1, Max: 8}}
}

// hostile is a systems model with every fault and time feature on.
func hostile() *systems.Model {
	return &systems.Model{
		Latency: 0.05, Jitter: 0.02, Bandwidth: 2000, GradientTime: 0.001,
		Compute: systems.Compute{Kind: systems.LogNormal, Median: 0.1, Sigma: 0.5, PerStep: true},
		Classes: []systems.Class{{Name: "slow", Fraction: 0.25, Slowdown: 10, Latency: 0.1, Bandwidth: 500, Dropout: 0.3}},
		Loss:    0.05, Duplicate: 0.05, Dropout: 0.1, CrashRate: 0.01,
		Availability: map[int][]systems.Window{3: {{From: 0, To: 2}, {From: 5, To: 1e9}}},
	}
}

// With every systems rate at zero (and only the gradient time the engine had
// before), the actor run, the event-driven reference and the flat reference
// give the same iterates, bit for bit: the systems model changes nothing it
// is not asked to.
func TestZeroFaultsChangeNothing(t *testing.T) {
	cfg := baseConfig()
	m := &systems.Model{Latency: 0.1, GradientTime: 0.001}
	got, err := systemsRun(t, cfg, m, "mean", 15, 3)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := simulate(t, cfg, m, "mean", nil, 15, 3)
	if err != nil {
		t.Fatal(err)
	}
	sets, l := regression(t, cfg.Agents)
	var want [][]float64
	if err := reference.Reference(cfg, data.Sets(sets), l, make([]float64, 3), 3, 15, func(_ int, w []float64) { want = append(want, slices.Clone(w)) }); err != nil {
		t.Fatal(err)
	}
	plain := runActors(t, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: 15, Server: "mean", GradientTime: 0.001}, 3)
	for i := range want {
		if !slices.Equal(got.models[i], want[i]) || !slices.Equal(sim.models[i], want[i]) || !slices.Equal(plain[i], want[i]) {
			t.Fatalf("round %d: actors with devices %v, simulation %v, plain actors %v, reference %v", i+1, got.models[i], sim.models[i], plain[i], want[i])
		}
	}
	if !slices.Equal(got.times, sim.times) {
		t.Errorf("times differ: actors %v, simulation %v", got.times, sim.times)
	}
}

// Under every fault and time feature at once, for each collection policy and
// asynchronous server, the actor run and the event-driven reference agree
// exactly: the same models, the same virtual times, the same counts of
// dropped, late, lost and duplicated messages — whether the agents are kept
// in memory between their tasks or parked and rebuilt (fedavg.Pool).
func TestActorRunMatchesSimulationUnderFaults(t *testing.T) {
	type variant struct {
		name   string
		server string
		params params.Values
		edit   func(*fedavg.Config)
	}
	for _, v := range []variant{
		{"deadline", "mean", nil, func(c *fedavg.Config) {
			c.Collect = fedavg.Deadline{Seconds: 0.8, Reweighted: true}
		}},
		{"deadline-no-reweight-updates", "median", nil, func(c *fedavg.Config) {
			c.Share = fedavg.Updates
			c.Collect = fedavg.Deadline{Seconds: 0.6}
		}},
		{"first-k", "mean", nil, func(c *fedavg.Config) {
			c.Participants = 9
			c.Collect = fedavg.FirstK{K: 4, Seconds: 2, Reweighted: true}
			c.Adversary = fedavg.SignFlip{Population: fedavg.Population{Fraction: 0.2}, Scale: 2}
		}},
		{"fedasync", "fedasync", params.Values{"alpha": 0.6, "staleness": "polynomial", "a": 0.5, "timeout": 3.0}, func(c *fedavg.Config) {
			c.Adversary = fedavg.GaussianNoise{Population: fedavg.Population{Fraction: 0.2}, Std: 0.5}
		}},
		{"fedbuff", "fedbuff", params.Values{"buffer": 3, "lr": 1.0, "staleness": "hinge", "a": 1.0, "b": 2.0, "timeout": 3.0}, func(c *fedavg.Config) {
			c.Adversary = fedavg.LabelFlip{Population: fedavg.Population{Fraction: 0.2}}
		}},
	} {
		t.Run(v.name, func(t *testing.T) {
			var kept *record
			for _, hold := range []fedavg.Holding{fedavg.HoldKeep, fedavg.HoldPark} {
				cfg := baseConfig()
				cfg.Hold = hold
				v.edit(&cfg)
				got := compareWithSimulation(t, cfg, v.server, v.params)
				if kept == nil {
					kept = got
				} else if fmt.Sprint(got) != fmt.Sprint(kept) {
					t.Errorf("parked agents: %v\nkept agents: %v", got, kept)
				}
			}
		})
	}
}

// compareWithSimulation runs cfg for 25 rounds under the hostile model on
// the actor engine and on the event-driven reference, fails unless they
// agree exactly, and returns what they observed.
func compareWithSimulation(t *testing.T, cfg fedavg.Config, server string, p params.Values) *record {
	t.Helper()
	got, err := systemsRunWith(t, cfg, hostile(), server, p, 25, 11)
	var f *actors.Failure
	if errors.As(err, &f) {
		t.Log(f.Stack)
	}
	if err != nil {
		t.Fatal(err)
	}
	want, err := simulate(t, cfg, hostile(), server, p, 25, 11)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.models) != 25 || len(want.models) != 25 {
		t.Fatalf("%d and %d models, want 25", len(got.models), len(want.models))
	}
	for i := range want.models {
		if !slices.Equal(got.models[i], want.models[i]) || got.times[i] != want.times[i] {
			t.Fatalf("update %d: actors %v at %v, simulation %v at %v", i+1, got.models[i], got.times[i], want.models[i], want.times[i])
		}
	}
	if fmt.Sprint(got.events) != fmt.Sprint(want.events) {
		t.Errorf("events: actors %v, simulation %v", got.events, want.events)
	}
	if got.events[fedavg.ObsDropped] == 0 || got.events[fedavg.ObsLost] == 0 {
		t.Errorf("events %v: the hostile model should drop agents and lose messages", got.events)
	}
	return got
}

// Under wait-all, an agent that drops out stalls the round: the run fails
// with one error naming the round and the agent, and the reference fails with
// the same words.
func TestWaitAllDropoutNamesAgentAndRound(t *testing.T) {
	cfg := baseConfig()
	m := &systems.Model{Dropout: 0.3}
	_, err := systemsRun(t, cfg, m, "mean", 50, 5)
	if !errors.Is(err, actors.ErrStalled) {
		t.Fatalf("actor run returned %v, want a stall", err)
	}
	_, serr := simulate(t, cfg, m, "mean", nil, 50, 5)
	if serr == nil || serr.Error() != err.Error() {
		t.Errorf("reference error\n%v\nactor error\n%v", serr, err)
	}
	if !strings.Contains(err.Error(), "server: round ") || !strings.Contains(err.Error(), "dropped out in round ") {
		t.Errorf("error %q does not name the round and the agent that dropped out", err)
	}
}

// A deadline shorter than every client's compute time leaves every round
// empty: the model never changes, and every round is reported empty (with a
// warning), never silently aggregated from nothing.
func TestDeadlineShorterThanComputeIsReported(t *testing.T) {
	cfg := baseConfig()
	cfg.Collect = fedavg.Deadline{Seconds: 0.5, Reweighted: true}
	m := &systems.Model{Compute: systems.Compute{Kind: systems.Fixed, Value: 1}}
	sets, l := regression(t, cfg.Agents)
	rec := &record{}
	r := actors.NewRun(actors.Options{RunSeed: 1, Observer: recorder{rec}})
	defer r.Close()
	sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: 6, Server: "mean", Fleet: m.Fleet(1, cfg.Agents, fedavg.AgentName)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if rec.events[fedavg.ObsEmpty] != 6 {
		t.Errorf("%d empty rounds reported, want all 6", rec.events[fedavg.ObsEmpty])
	}
	for i, w := range rec.models {
		if !slices.Equal(w, make([]float64, 3)) {
			t.Errorf("round %d: model %v changed without any reply", i+1, w)
		}
	}
	if len(r.Warnings()) != 1 || !strings.Contains(r.Warnings()[0], "closed before any reply arrived") {
		t.Errorf("warnings %q, want one about empty rounds", r.Warnings())
	}
	// Replies that arrive after their round closed are counted late.
	if rec.events[fedavg.ObsLate] == 0 {
		t.Error("no late replies counted")
	}
}

// With equal compute times and no jitter, every update of FedBuff with a
// buffer of L is fresh (τ = 0) and the L updates of a "round" are those of
// the synchronous round: the iterates are synchronous FedAvg's. Update
// sharing with η = 1 gives w − (1/L)Σ(w − w_k), the mean of the w_k up to
// rounding: two operations per coordinate, ≤ 1e-12 over 30 rounds of a
// contraction.
func TestFedBuffWithEqualComputeTimesIsSynchronous(t *testing.T) {
	cfg := baseConfig()
	cfg.Epochs, cfg.Schedule = fedavg.Range{Min: 3, Max: 3}, fedavg.PerAgent
	m := &systems.Model{Latency: 0.1, Compute: systems.Compute{Kind: systems.Fixed, Value: 0.5}}
	sets, l := regression(t, cfg.Agents)
	var want [][]float64
	if err := reference.Reference(cfg, data.Sets(sets), l, make([]float64, 3), 9, 30, func(_ int, w []float64) { want = append(want, slices.Clone(w)) }); err != nil {
		t.Fatal(err)
	}
	for _, server := range []string{"fedbuff", "fedasync"} {
		async := cfg
		p := params.Values{"buffer": cfg.Participants, "lr": 1.0, "staleness": "polynomial", "a": 0.5}
		if server == "fedasync" {
			// FedAsync with α = 1 and one client at a time is sequential
			// FedAvg with L = 1: compare with the synchronous run with one
			// participant.
			async.Participants = 1
			p = params.Values{"alpha": 1.0}
		}
		got, err := systemsRunWith(t, async, m, server, p, 30, 9)
		if err != nil {
			t.Fatal(err)
		}
		ref := want
		if server == "fedasync" {
			one := cfg
			one.Participants = 1
			ref = nil
			if err := reference.Reference(one, data.Sets(sets), l, make([]float64, 3), 9, 30, func(_ int, w []float64) { ref = append(ref, slices.Clone(w)) }); err != nil {
				t.Fatal(err)
			}
		}
		for i := range ref {
			for j := range ref[i] {
				if math.Abs(got.models[i][j]-ref[i][j]) > 1e-12 {
					t.Fatalf("%s, update %d: %v, synchronous %v", server, i+1, got.models[i], ref[i])
				}
			}
		}
		if got.events[fedavg.ObsStaleness] == 0 {
			t.Errorf("%s: no update reported its staleness", server)
		}
	}
}

// The sizes the reference charges to bandwidth are the protobuf library's.
func TestWireSizesMatchProtobuf(t *testing.T) {
	for _, c := range []struct {
		slot int32
		n    int
	}{{0, 0}, {0, 3}, {1, 3}, {300, 7850}, {5, 1}} {
		model, reply := fedavg.WireSizes(c.slot, c.n)
		w := make([]float64, c.n)
		if got := proto.Size(&msg.GlobalModel{Slot: c.slot, Weights: w}); got != model {
			t.Errorf("GlobalModel slot %d, %d weights: proto %d, reference %d", c.slot, c.n, got, model)
		}
		if got := proto.Size(&msg.LocalUpdate{Slot: c.slot, Update: w}); got != reply {
			t.Errorf("LocalUpdate slot %d, %d values: proto %d, reference %d", c.slot, c.n, got, reply)
		}
	}
	for _, e := range [][]float64{nil, {1, 2, 3, 4, 5, 6}, {7.5, 1e-5, 0, 0, 1.1, 0.3}, {0, 0, 2, 1e-6, 0, 0}} {
		want := 0
		if e != nil {
			want = proto.Size(&msg.Done{Privacy: &msg.PrivacyLedger{ClientEpsilon: e[0], ClientDelta: e[1], SampleEpsilon: e[2], SampleDelta: e[3], NoiseMultiplier: e[4], Clip: e[5]}})
		}
		if got := fedavg.DoneWireSize(e); got != want {
			t.Errorf("Done with ledger %v: proto %d, reference %d", e, want, got)
		}
	}
	if fedavg.ObsLost != actors.KeyLost || fedavg.ObsDuplicate != actors.KeyDuplicate || fedavg.ObsDropped != KeyDropped || fedavg.ObsLate != KeyLate {
		t.Error("the reference's observation keys differ from the actor run's")
	}
}

// Sign-flip adversaries drag the mean server away from w^o; the median
// server of the same run stays close.
func TestSignFlipAdversariesAgainstMeanAndMedian(t *testing.T) {
	cfg := baseConfig()
	cfg.Participation = fedavg.Full
	cfg.Adversary = fedavg.SignFlip{Population: fedavg.Population{Fraction: 0.25}, Scale: 4}
	m := &systems.Model{}
	final := map[string]float64{}
	for _, server := range []string{"mean", "median"} {
		rec, err := systemsRun(t, cfg, m, server, 300, 2)
		if err != nil {
			t.Fatal(err)
		}
		w := rec.models[len(rec.models)-1]
		final[server] = w[0]*w[0] + w[1]*w[1] + w[2]*w[2]
	}
	// With 3 of 12 agents flipping their update ×4, the mean moves by
	// (9 − 12)/12 of the honest step: it climbs the loss and diverges, while
	// the median of 12 replies ignores 3 outliers.
	if !(final["mean"] > 100*final["median"]) {
		t.Errorf("‖w‖² after 300 rounds: mean %v, median %v; the mean should be dragged far away", final["mean"], final["median"])
	}
}

// An asynchronous server whose timeout is shorter than every client's round
// trip (here the link latency alone, 0.05 s each way, against a timeout of
// 0.02 s) gives up on every task and hands out another, forever: both
// engines stop after DryLimit tasks in a row without an update, with the
// same error naming the timeout, rather than never ending.
func TestAsyncTimeoutShorterThanTheRoundTripStops(t *testing.T) {
	m := &systems.Model{Latency: 0.05, Compute: systems.Compute{Kind: systems.LogNormal, Median: 0.3, Sigma: 0.8}}
	for _, server := range []string{"fedasync", "fedbuff"} {
		p := params.Values{"timeout": 0.02}
		if server == "fedbuff" {
			p["buffer"] = 3
		}
		_, aerr := systemsRunWith(t, baseConfig(), m, server, p, 5, 3)
		_, rerr := simulate(t, baseConfig(), m, server, p, 5, 3)
		switch {
		case aerr == nil || rerr == nil:
			t.Errorf("%s: actors %v, reference %v: want both to stop with an error", server, aerr, rerr)
		case !strings.Contains(aerr.Error(), "timed out with no update arriving") || !strings.Contains(rerr.Error(), "the timeout of 0.02 s is shorter than the clients' round trips"):
			t.Errorf("%s: actors %v, reference %v", server, aerr, rerr)
		}
	}
}
