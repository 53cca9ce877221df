package graphfl

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/fedavg/reference"
	"maple/privacy/homomorphic"
	"maple/privacy/noise"
	"maple/privacy/pairmask"
	"maple/topology"
)

// The state machines, driven message by message in shuffled orders (some
// shares reaching servers that have not begun the round), give the
// reference's iterates for every privacy combination. Both sum the same terms
// in the same order (ascending sender), so they agree exactly; the 1e-12 of
// the issue is what is asserted.
func TestExchangeMatchesReference(t *testing.T) {
	const P, rounds = 6, 8
	sets, l := testSets(P, 4)
	for name, change := range variants {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig(P, None)
			change(&cfg)
			prob := Problem{A: metropolis(t), Sets: sets, Loss: l, W0: make([]float64, 3)}
			want := referenceModels(t, cfg, prob, 5, rounds)
			for trial := range 3 {
				got := pumpModels(t, cfg, prob, 5, rounds, rand.New(rand.NewPCG(uint64(trial), 1)))
				for i := range want {
					for p := range want[i] {
						for j := range want[i][p] {
							if d := math.Abs(got[i][p][j] - want[i][p][j]); !(d <= 1e-12) {
								t.Fatalf("trial %d round %d server %d coordinate %d: state machines %v, reference %v", trial, i+1, p, j, got[i][p][j], want[i][p][j])
							}
						}
					}
				}
			}
		})
	}
}

// Graph-homomorphic noise cancels in the network average: the noise the
// exchange injects, n_p = w_p − Σ_m a_mp ψ_m, sums to zero over the servers
// (Perron-weighted; uniform for this symmetric A) in every round, so the
// centroid of the models is the centroid of the noise-free aggregates. With
// random noise the same sum is of the order of σ_g.
//
// Tolerance: every coordinate of ψ and of the draws is O(1) here (|ψ| < 3,
// |g| ≤ 36.7·σ_g/√2 < 3 for Laplace), and w_p and Σ_m a_mp ψ_m are each sums
// of at most 5 terms of magnitude ≤ 6, so each n_p carries a rounding error of
// at most about 20u·6 ≈ 3e-14 and their weighted sum less than that: 1e-12
// leaves a margin of 30. The random scheme's sum has standard deviation
// ≈ σ_g·√(Σ_p Σ_{m≠p} a_mp²)/P ≈ 0.03 per coordinate; requiring its largest
// coordinate over the run to exceed 1e-3 fails with negligible probability.
func TestGraphHomomorphicNoiseCancelsInTheNetworkAverage(t *testing.T) {
	const P, rounds = 6, 20
	sets, l := testSets(P, 4)
	A := metropolis(t)
	for _, tc := range []struct {
		scheme  Scheme
		form    homomorphic.Form
		cancels bool
	}{{GraphHomomorphic, homomorphic.RatioFree, true}, {GraphHomomorphic, homomorphic.Ratio, true}, {LocalGraphHomomorphic, 0, true}, {Random, 0, false}, {RandomBroadcast, 0, false}} {
		cfg := testConfig(P, tc.scheme)
		cfg.Privacy.Form = tc.form
		cfg.Privacy.Std = 0.3
		net, err := NewNetwork(A, cfg)
		if err != nil {
			t.Fatal(err)
		}
		q := net.Perron()
		var psi [][]float64
		var largest, largestDraw float64
		residual, combo := make([]float64, 3), make([]float64, 3)
		hooks := Hooks{
			Aggregates: func(_ int, Psi [][]float64) { psi = clone2(Psi) },
			Draws: func(_ int, G [][]float64) {
				if tc.scheme != GraphHomomorphic {
					return
				}
				homomorphic.Residual(A, q, G, tc.form, residual)
				largestDraw = math.Max(largestDraw, floats.Norm(residual, math.Inf(1)))
			},
			Models: func(_ int, W [][]float64) {
				clear(residual)
				for p := range W {
					clear(combo)
					for m := range psi {
						floats.AddScaled(combo, A.At(m, p), psi[m])
					}
					floats.SubTo(combo, W[p], combo)
					floats.AddScaled(residual, q[p], combo)
				}
				largest = math.Max(largest, floats.Norm(residual, math.Inf(1)))
			},
		}
		prob := Problem{A: A, Sets: sets, Loss: l, W0: make([]float64, 3)}
		if err := Reference(cfg, prob, 11, rounds, hooks); err != nil {
			t.Fatal(err)
		}
		switch {
		case tc.cancels && !(largest <= 1e-12):
			t.Errorf("%v/%v: injected noise sums to %g in the network average", tc.scheme, tc.form, largest)
		case !tc.cancels && largest < 1e-3:
			t.Errorf("%v: injected noise sums to only %g: it should not cancel", tc.scheme, largest)
		case tc.scheme == GraphHomomorphic && !(largestDraw <= 1e-12):
			t.Errorf("%v/%v: homomorphic.Residual of the draws is %g", tc.scheme, tc.form, largestDraw)
		}
	}
}

// With one server, graph federated learning is federated averaging: the
// reference gives reference.Reference's iterates bit for bit, for every
// client-level option, because it uses FedAvg's streams and state machines
// and the combination of a lone server is 1·ψ.
func TestOneServerIsFedAvg(t *testing.T) {
	sets, l := testSets(1, 12)
	for name, change := range map[string]func(c *fedavg.Config){
		"plain":            func(*fedavg.Config) {},
		"noisy-models":     func(c *fedavg.Config) { c.NoiseStd = 0.2 },
		"noisy-updates":    func(c *fedavg.Config) { c.Share, c.NoiseStd, c.Noise = fedavg.Updates, 0.2, noise.Gaussian },
		"with-replacement": func(c *fedavg.Config) { c.Participation, c.Participants = fedavg.WithReplacement, 7 },
		"per-round":        func(c *fedavg.Config) { c.Schedule, c.BatchWithReplacement = fedavg.PerRound, true },
	} {
		cfg := Config{Servers: 1, Clients: fedavg.Config{Agents: 12, Participants: 4, StepSize: 0.05, Normalized: true,
			Epochs: fedavg.Range{Min: 1, Max: 4}, Batch: fedavg.Range{Min: 1, Max: 6}}}
		change(&cfg.Clients)
		w0 := make([]float64, 3)
		got := referenceModels(t, cfg, Problem{A: mat.NewDense(1, 1, []float64{1}), Sets: sets, Loss: l, W0: w0}, 9, 25)
		i := 0
		reference.Reference(cfg.Clients, data.Sets(sets), l, w0, 9, 25, func(_ int, w []float64) {
			if !floats.Equal(got[i][0], w) {
				t.Errorf("%s: round %d: graph FL %v, FedAvg %v", name, i+1, got[i][0], w)
			}
			i++
		})
	}
}

// Protocol violations are errors naming the servers.
func TestExchangeRejectsProtocolErrors(t *testing.T) {
	cfg := testConfig(6, None)
	net, err := NewNetwork(metropolis(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	newX := func() *Exchange {
		x, err := NewExchange(net, 0, 3, func(string, string) *rand.Rand { return rand.New(rand.NewPCG(1, 1)) })
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	var queue []message
	var warns []string
	box := pumpBox{0, &queue, &warns}
	psi := []float64{1, 2, 3}
	for _, tc := range []struct {
		name string
		do   func(x *Exchange) error
		want string
	}{
		{"share from a non-neighbour", func(x *Exchange) error { _, err := x.Share(1, 2, psi, box); return err }, "does not listen to"},
		{"share of another round", func(x *Exchange) error { _, err := x.Share(2, 1, psi, box); return err }, "while round 1"},
		{"second share", func(x *Exchange) error {
			x.Share(1, 1, psi, box)
			_, err := x.Share(1, 1, psi, box)
			return err
		}, "second share"},
		{"wrong dimension", func(x *Exchange) error { _, err := x.Share(1, 1, psi[:2], box); return err }, "dimension 2"},
		{"aggregate before begin", func(x *Exchange) error { _, err := x.Aggregate(psi, box); return err }, "before round 1 began"},
		{"begin twice", func(x *Exchange) error { x.Begin(1, box); return x.Begin(1, box) }, "round 1 begun"},
		{"setup without LGH", func(x *Exchange) error {
			_, err := x.Setup(&pairmask.SetupMessage{Kind: pairmask.PublicKey, Peer: 1}, box)
			return err
		}, "unexpected public-key"},
	} {
		if err := tc.do(newX()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// Impossible configurations and matrices are refused with a reason.
func TestConfigAndNetworkRefuseBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(c *Config)
		want   string
	}{
		{"L > K", func(c *Config) { c.Clients.Participants = 5 }, "cannot be sampled without replacement"},
		{"no servers", func(c *Config) { c.Servers = 0 }, "0 servers"},
		{"negative client noise", func(c *Config) { c.Clients.NoiseStd = -1 }, "client noise"},
		{"zero σ", func(c *Config) { c.Privacy.Scheme = Random }, "σ_g = 0"},
		{"σ without scheme", func(c *Config) { c.Privacy.Std = 0.1 }, "without a server privacy scheme"},
		{"self noise", func(c *Config) { c.Privacy = Privacy{Scheme: GraphHomomorphic, Std: 1, SelfNoise: true} }, "self noise"},
		{"paper keys", func(c *Config) { c.Privacy = Privacy{Scheme: LocalGraphHomomorphic, Std: 1, Keys: pairmask.Paper} }, "secure or oracle"},
		{"gaussian LGH", func(c *Config) {
			c.Privacy = Privacy{Scheme: LocalGraphHomomorphic, Std: 1, Mechanism: noise.Gaussian}
		}, "Laplace by construction"},
		{"one server with noise", func(c *Config) { c.Servers, c.Privacy = 1, Privacy{Scheme: Random, Std: 1} }, "at least two servers"},
	} {
		cfg := testConfig(6, None)
		tc.change(&cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	disconnected, _ := topology.NewGraph(6, [][2]int{{0, 1}, {1, 2}, {3, 4}, {4, 5}})
	noSelf := mat.NewDense(2, 2, []float64{0, 1, 1, 0})
	for _, tc := range []struct {
		name   string
		A      mat.Matrix
		scheme Scheme
		want   string
	}{
		{"disconnected", topology.Metropolis(disconnected), None, "not strongly connected"},
		{"not stochastic", mat.NewDense(2, 2, []float64{0.5, 0.5, 0.4, 0.5}), None, "sums to"},
		{"GH with a_pp = 0", noSelf, GraphHomomorphic, "self-weight"},
		{"wrong size", mat.NewDense(2, 2, []float64{0.5, 0.5, 0.5, 0.5}), None, "2×2 for 6 servers"},
	} {
		cfg := testConfig(6, tc.scheme)
		if r, _ := tc.A.Dims(); tc.name != "wrong size" {
			cfg.Servers = r
		}
		if _, err := NewNetwork(tc.A, cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestSchemeNames(t *testing.T) {
	for _, s := range []Scheme{None, Random, RandomBroadcast, GraphHomomorphic, LocalGraphHomomorphic} {
		if got, err := ParseScheme(s.String()); err != nil || got != s {
			t.Errorf("ParseScheme(%q) = %v, %v", s, got, err)
		}
	}
	if names := SchemeNames(); names[0] != "none" || len(names) != 5 {
		t.Errorf("SchemeNames() = %v", names)
	}
	if ServerName(0, 1) != "server" || ServerName(3, 10) != "server/3" || ClientName(2, 5, 100) != "agent/205" {
		t.Error("actor names changed")
	}
}
