package fedavg

import (
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors/msg"
	"maple/algorithms/fedavg"
	"maple/algorithms/rng"
	"maple/privacy/noise"
)

// poissonBase is baseConfig under Poisson participation with L expected
// of its 12 agents per round.
func poissonBase(expected int) fedavg.Config {
	cfg := baseConfig()
	cfg.Participation, cfg.Participants = fedavg.Poisson, expected
	return cfg
}

// Under Poisson participation the actor run equals the flat reference
// round for round: the models (≤ 1e-12, and in fact bit for bit), each
// round's size, the ledger of central DP (including the rounds without
// any agent, which release the noise alone), and under secure aggregation
// without DP the traffic, the clients included and the rounds of fewer
// than 2 clients skipped. The sparse variants (L = 1 or 2 of 12) make
// rounds of 0 and 1 agents, which the test requires to occur.
func TestPoissonActorRunMatchesReference(t *testing.T) {
	secure := func(c *fedavg.Config) { c.SecAgg = &fedavg.SecureAggregation{Bits: 32, Clip: 4} }
	variants := map[string]func(c *fedavg.Config){
		"poisson":       func(*fedavg.Config) {},
		"sparse":        func(c *fedavg.Config) { c.Participants = 1 },
		"noisy-updates": func(c *fedavg.Config) { c.Share, c.NoiseStd, c.Noise = fedavg.Updates, 0.1, noise.Gaussian },
		"per-round":     func(c *fedavg.Config) { c.Schedule = fedavg.PerRound },
		"data-is":       func(c *fedavg.Config) { c.Importance = fedavg.Importance{Data: fedavg.Adaptive} },
		"central-dp":    func(c *fedavg.Config) { c.Share, c.DP = fedavg.Updates, dp(fedavg.CentralDP) },
		"central-dp-sparse": func(c *fedavg.Config) {
			c.Participants, c.Share, c.DP = 1, fedavg.Updates, dp(fedavg.CentralDP)
		},
		"secagg":         func(c *fedavg.Config) { secure(c); c.Participants = 2 },
		"secagg+":        func(c *fedavg.Config) { secure(c); c.SecAgg.Sparse = true; c.Participants = 8 },
		"secagg-updates": func(c *fedavg.Config) { secure(c); c.Share = fedavg.Updates; c.Participants = 3 },
	}
	small := map[string]bool{"sparse": true, "central-dp-sparse": true, "secagg": true}
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			cfg := poissonBase(4)
			change(&cfg)
			const rounds = 20
			got, err := eventsRun(t, cfg, nil, rounds, 5, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := referenceEvents(t, cfg, rounds, 5)
			for _, key := range []string{fedavg.ObsModel, fedavg.ObsDraws, fedavg.ObsPrivacy, fedavg.ObsSecAggCosts, fedavg.ObsSecAggIncluded, fedavg.ObsSecAggSkipped} {
				g, w := got.byKey[key], want.byKey[key]
				if !slices.EqualFunc(g, w, within) || !slices.Equal(got.round[key], want.round[key]) {
					t.Errorf("%s: actors %v, reference %v", key, g, w)
				}
				if !slices.EqualFunc(g, w, slices.Equal) {
					t.Logf("%s agrees to 1e-12 but not bit for bit", key)
				}
			}
			sizes := want.byKey[fedavg.ObsDraws]
			if len(sizes) != rounds || len(want.byKey[fedavg.ObsModel]) != rounds {
				t.Fatalf("%d round sizes and %d models for %d rounds", len(sizes), len(want.byKey[fedavg.ObsModel]), rounds)
			}
			if small[name] && !slices.ContainsFunc(sizes, func(v []float64) bool { return v[0] < 2 }) {
				t.Errorf("round sizes %v: the sparse variant should make a round of fewer than 2 agents", sizes)
			}
			if cfg.DP.Mode != fedavg.NoDP && len(want.byKey[fedavg.ObsPrivacy]) != rounds {
				t.Errorf("%d ledger entries for %d rounds: every round releases its noisy sum", len(want.byKey[fedavg.ObsPrivacy]), rounds)
			}
			if cfg.SecAgg != nil {
				skipped := 0
				for _, v := range sizes {
					if v[0] < 2 {
						skipped++
					}
				}
				if len(want.byKey[fedavg.ObsSecAggSkipped]) != skipped || len(want.byKey[fedavg.ObsSecAggIncluded]) != rounds-skipped {
					t.Errorf("%d rounds of fewer than 2 clients, %d skipped and %d aggregated", skipped, len(want.byKey[fedavg.ObsSecAggSkipped]), len(want.byKey[fedavg.ObsSecAggIncluded]))
				}
			}
		})
	}
}

// within reports whether a and b agree to 1e-12 in every coordinate.
func within(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if d := a[i] - b[i]; d > 1e-12 || d < -1e-12 {
			return false
		}
	}
	return true
}

// Under the systems model — every fault, a deadline, lost and duplicated
// messages — the actor run of Poisson participation equals the
// event-driven reference exactly, with rounds that draw no agent ending at
// once, whether the agents are kept or parked; central DP too.
func TestPoissonUnderFaultsMatchesSimulation(t *testing.T) {
	for name, edit := range map[string]func(*fedavg.Config){
		"deadline": func(c *fedavg.Config) { c.Collect = fedavg.Deadline{Seconds: 0.8, Reweighted: true} },
		"central-dp": func(c *fedavg.Config) {
			c.Share, c.DP = fedavg.Updates, dp(fedavg.CentralDP)
			c.Collect = fedavg.Deadline{Seconds: 0.8}
		},
	} {
		t.Run(name, func(t *testing.T) {
			var kept *record
			for _, hold := range []fedavg.Holding{fedavg.HoldKeep, fedavg.HoldPark} {
				cfg := poissonBase(2)
				cfg.Hold = hold
				edit(&cfg)
				got := compareWithSimulation(t, cfg, "mean", nil)
				if kept == nil {
					kept = got
				} else if len(got.models) != len(kept.models) || !slices.EqualFunc(got.models, kept.models, slices.Equal) {
					t.Errorf("parked agents: %v\nkept agents: %v", got.models, kept.models)
				}
			}
			if kept.events[fedavg.ObsDraws] != 25 {
				t.Errorf("%d round sizes reported for 25 rounds", kept.events[fedavg.ObsDraws])
			}
		})
	}
}

// Secure aggregation of a round of random size decodes exactly the
// quantized sum: the first round's clients, drawn by Poisson sampling,
// each encode their reply on the grid of that round's n (fixedpoint built
// for n summands); their sum modulo 2^bits, decoded and combined as the
// server combines it, is the actor run's first model bit for bit — for
// several seeds, so that rounds of several sizes are checked.
func TestPoissonSecAggDecodesTheQuantizedSum(t *testing.T) {
	cfg := poissonBase(6)
	cfg.SecAgg = &fedavg.SecureAggregation{Bits: 20, Clip: 4, Sparse: true}
	sizes := map[int]bool{}
	for seed := uint64(1); seed <= 6; seed++ {
		sets, l := regression(t, cfg.Agents)
		w0 := make([]float64, 3)
		server := fedavg.NewServer(&cfg, w0, rng.New(seed, fedavg.ServerName, "participation"))
		draws := slices.Clone(server.Begin())
		if len(draws) < 2 {
			continue
		}
		sizes[len(draws)] = true
		scfg, err := cfg.SecAggRound(1, len(draws), 3)
		if err != nil {
			t.Fatal(err)
		}
		sum := make([]uint64, 3)
		for _, k := range draws {
			name := fedavg.AgentName(k)
			a := fedavg.NewAgent(&cfg, sets[k], l, fedavg.AgentStreams(&cfg, func(p string) *rand.Rand { return rng.New(seed, name, p) }))
			reply := make([]float64, 3)
			a.Respond(reply, w0)
			// The client's input: its reply rounded onto the grid without
			// bias, from its own rounding stream (SecAggInput).
			input := make([]float64, 3)
			if _, err := cfg.SecAggInput(input, reply, w0, scfg.Encoder, func(p string) *rand.Rand { return rng.New(seed, name, p) }); err != nil {
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
		server.CombineSum(decoded, len(draws))
		ev, err := eventsRun(t, cfg, nil, 1, seed, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.byKey[fedavg.ObsModel][0]; !slices.Equal(got, server.Model()) {
			t.Errorf("seed %d, round of %d clients: actor run %v, decoded quantized sum %v", seed, len(draws), got, server.Model())
		}
		if inc := ev.byKey[fedavg.ObsSecAggIncluded]; len(inc) != 1 || int(inc[0][0]) != len(draws) {
			t.Errorf("seed %d: included %v, want the %d clients", seed, inc, len(draws))
		}
	}
	if len(sizes) < 2 {
		t.Errorf("round sizes %v: the seeds should give rounds of several sizes", sizes)
	}
}

// The bytes the server reports for a round's models under Poisson
// participation with secure aggregation (fedavg.Config.ModelBytes, which
// counts the announced number of clients) are the protobuf sizes of the
// GlobalModels it sends.
func TestPoissonModelBytesMatchProtobuf(t *testing.T) {
	cfg := poissonBase(4)
	cfg.SecAgg = &fedavg.SecureAggregation{Bits: 32, Clip: 4}
	for _, n := range []int{2, 3, 12, 200} {
		want := 0
		for slot := range n {
			want += proto.Size(&msg.GlobalModel{Slot: int32(slot), Weights: make([]float64, 7), Clients: int32(n)})
		}
		if got := cfg.ModelBytes(n, 7); got != want {
			t.Errorf("%d clients: ModelBytes %d, protobuf %d", n, got, want)
		}
	}
}
