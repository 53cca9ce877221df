package fedavg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/privacy/clip"
	"maple/privacy/ledger"
)

// privateConfig is K = 10 agents, L = 5 per round, μ = 0.5, update sharing.
func privateConfig(mode DPMode) Config {
	c := Config{Agents: 10, Participants: 5, StepSize: 0.5, Share: Updates,
		Epochs: Range{Min: 1, Max: 1}, Batch: Range{Min: 1, Max: 1},
		DP: DP{Mode: mode, Clip: 2, NoiseMultiplier: 1.5, Delta: 1e-5}}
	if mode == DistributedDP {
		c.DP.Relation, c.DP.Accountant = accountant.ReplaceOne, ledger.RDP
	}
	return c
}

// chi2Variance checks that the n values x/scale have unit variance: the
// sample variance of n standard normals is χ²_n/n, of standard deviation
// √(2/n); five of them bound it.
func chi2Variance(t *testing.T, what string, x []float64, scale float64) {
	t.Helper()
	var ss float64
	for _, v := range x {
		ss += (v / scale) * (v / scale)
	}
	n := float64(len(x))
	if v := ss / n; math.Abs(v-1) > 5*math.Sqrt(2/n) {
		t.Errorf("%s: variance ratio %v, want 1 within %v", what, v, 5*math.Sqrt(2/n))
	}
}

// Central DP by closed form. With every reply zero, one round moves the
// model by the server's noise alone: −μ·N(0, (zC/μ)²)/L = N(0, (zC/L)²)
// per coordinate. A reply far beyond the clip is scaled to C/μ exactly
// (its step is then −μ·(C/μ)·u/L plus the noise) and counted as clipped by
// adaptive clipping, which moves C by exp(−η(b̃ − γ)).
func TestCentralDPNoiseAndClipping(t *testing.T) {
	const dim = 4000
	cfg := privateConfig(CentralDP)
	s := NewServer(&cfg, make([]float64, dim), rng.New(1, ServerName, "participation"))
	s.UseStreams(func(p string) *rand.Rand { return rng.New(1, ServerName, p) })
	draws := s.Begin()
	for slot, k := range draws {
		if _, err := s.Accept(slot, k, make([]float64, dim)); err != nil {
			t.Fatal(err)
		}
	}
	s.Combine()
	chi2Variance(t, "server noise", s.Model(), cfg.DP.NoiseMultiplier*cfg.DP.Clip/float64(cfg.Participants))

	// Clipping, without noise to speak of: z = 10⁻³⁰⁰.
	cfg.DP.NoiseMultiplier = 1e-300
	cfg.DP.Adaptive = &clip.Adaptive{Quantile: 0.5, LearningRate: 0.2, CountNoise: 1e-300}
	s = NewServer(&cfg, make([]float64, 2), rng.New(1, ServerName, "participation"))
	s.UseStreams(func(p string) *rand.Rand { return rng.New(1, ServerName, p) })
	draws = s.Begin()
	for slot, k := range draws {
		reply := []float64{0, 0.1} // norm 0.1 < C/μ = 4: unclipped
		if slot == 0 {
			reply = []float64{300, 400} // norm 500: clipped to 4, (2.4, 3.2)
		}
		if _, err := s.Accept(slot, k, reply); err != nil {
			t.Fatal(err)
		}
	}
	s.Combine()
	// w = −μ·Σ clipped/L = −0.5·(2.4, 3.2 + 4·0.1)/5; noise below 1e-299.
	if w := s.Model(); math.Abs(w[0]+0.24) > 1e-15 || math.Abs(w[1]+0.36) > 1e-15 {
		t.Errorf("clipped step %v, want (−0.24, −0.36)", w)
	}
	// 4 of 5 unclipped: C ← 2·exp(−0.2·(0.8 − 0.5)).
	if c, want := s.Clip(), 2*math.Exp(-0.2*0.3); math.Abs(c-want) > 1e-15 {
		t.Errorf("adaptive clip %v, want %v", c, want)
	}
}

// Distributed DP by closed form: a client's input is its update clipped to
// C/μ, rounded to the grid γ of the encoding and noised with the discrete
// Gaussian of variance (σ_c/γ)², σ_c = zC/(μ√n) — so that n clients' noise
// sums to the central zC/μ. Every coordinate is an integer multiple of γ
// (up to the one rounding of q·γ, which the encoder undoes exactly),
// and for a zero update the multiples have variance (σ_c/γ)² (the discrete
// Gaussian's variance is within 10⁻⁸ of σ² at σ ≫ 1).
func TestDistributedDPInput(t *testing.T) {
	const dim = 4000
	cfg := privateConfig(DistributedDP)
	cfg.SecAgg = &SecureAggregation{Neighbours: 4, Threshold: 3, Bits: 24, Clip: 40}
	scfg, err := cfg.SecAggRound(1, cfg.Draws(), dim)
	if err != nil {
		t.Fatal(err)
	}
	gamma := scfg.Encoder.Step()
	x := make([]float64, dim)
	r := rng.New(2, "agent/0", StreamDP)
	streams := func(purpose string) *rand.Rand {
		if purpose != StreamDP {
			t.Fatalf("distributed DP draws from %s", purpose)
		}
		return r
	}
	zero := make([]float64, dim)
	if _, err := cfg.SecAggInput(x, zero, nil, scfg.Encoder, streams); err != nil {
		t.Fatal(err)
	}
	sigma := cfg.DP.NoiseMultiplier * cfg.DP.Clip / cfg.StepSize / math.Sqrt(5)
	for _, v := range x {
		// v = q·γ rounded once; the encoder must find q again exactly.
		if q, _ := scfg.Encoder.Quantize(v); math.Abs(v/gamma-float64(q)) > 1e-9 {
			t.Fatalf("%v is not a multiple of γ = %v", v, gamma)
		}
	}
	chi2Variance(t, "client noise", x, sigma)
	// Clipping: with little noise (z = 10⁻³, σ_c ≈ 0.0027), an update of
	// norm 500 along (3, 4) is clipped to C/μ = 4 before rounding: the input
	// starts (2.4, 3.2), within the rounding and noise of both coordinates,
	// 2(γ + 5σ_c).
	cfg.DP.NoiseMultiplier = 1e-3
	sigma = cfg.DP.NoiseMultiplier * cfg.DP.Clip / cfg.StepSize / math.Sqrt(5)
	big := make([]float64, dim)
	big[0], big[1] = 300, 400
	e, err := cfg.SecAggInput(x, big, nil, scfg.Encoder, streams)
	if err != nil {
		t.Fatal(err)
	}
	if d := math.Abs(x[0]-2.4) + math.Abs(x[1]-3.2); d > 2*(gamma+5*sigma) {
		t.Errorf("clipped input starts (%v, %v), want (2.4, 3.2) within %v", x[0], x[1], 2*(gamma+5*sigma))
	}
	// The encoding's report: the update is the clipped one, ‖(2.4, 3.2)‖² =
	// 16 up to the rounding of the clip's scaling; the rounding error, the
	// noise left out, is below γ per coordinate; nothing reached the clip.
	if math.Abs(e.Update2-16) > 1e-12 || !(e.Error2 < dim*gamma*gamma) || e.Clipped != 0 {
		t.Errorf("encoding %+v, want update² 16, error² below %v, none clipped", e, dim*gamma*gamma)
	}
}

// Decoded, a round of secure aggregation is the plain sum of the clients'
// replies rounded onto the grid — without bias, from each agent's
// StreamSecAggRounding stream, one draw per coordinate — bit for bit:
// SecAgg and SecAgg+. Each client's Encoding gives its clipped
// coordinates, its rounding error and its update (the reply less the
// round's model, under model sharing).
func TestSecureRoundIsTheRoundedSum(t *testing.T) {
	for _, k := range []int{4, 2} {
		cfg := Config{Agents: 5, Participation: Full, StepSize: 0.1, Epochs: Range{1, 1}, Batch: Range{1, 1},
			SecAgg: &SecureAggregation{Neighbours: k, Threshold: 2, Bits: 20, Clip: 1.5}}
		r := rand.New(rand.NewPCG(3, 4))
		replies := make([][]float64, 5)
		for u := range replies {
			replies[u] = []float64{4*r.Float64() - 2, r.NormFloat64(), 1e-9} // some beyond the clip
		}
		model := []float64{0.5, -0.25, 0}
		named := func(slot int, purpose string) *rand.Rand {
			if purpose != StreamSecAggRounding {
				t.Fatalf("no DP, yet a draw from %s", purpose)
			}
			return rng.New(5, AgentName(slot), purpose)
		}
		res, err := cfg.SecureRound(1, model, replies, SecAggStreams{
			Client: func(slot int) *rand.Rand { return rng.New(5, AgentName(slot), StreamSecAgg) },
			Named:  named,
			Server: rng.New(5, ServerName, StreamSecAgg),
		})
		if err != nil {
			t.Fatal(err)
		}
		enc := res.Config.Encoder
		want := make([]float64, 3)
		clipped := 0
		for u, x := range replies {
			stream := rng.New(5, AgentName(u), StreamSecAggRounding)
			var e Encoding
			for j := range x {
				v, c := enc.RoundUnbiased(x[j], stream.Float64())
				q, _ := enc.Quantize(v)
				want[j] += float64(q)
				if c {
					e.Clipped++
				}
				e.Error2 += (v - x[j]) * (v - x[j])
				e.Update2 += (x[j] - model[j]) * (x[j] - model[j])
			}
			clipped += e.Clipped
			if res.Encodings[u] != e {
				t.Errorf("k = %d, client %d: %+v, want %+v", k, u, res.Encodings[u], e)
			}
		}
		for j := range want {
			if want[j] *= enc.Step(); res.Sum[j] != want[j] {
				t.Errorf("k = %d, coordinate %d: %v, want %v", k, j, res.Sum[j], want[j])
			}
		}
		if res.Included != 5 || clipped == 0 {
			t.Errorf("k = %d: %d included, %d clipped, want 5 and some", k, res.Included, clipped)
		}
	}
}

// A canary's reply is drawn afresh from its StreamCanary stream at every
// task, as the auditor draws it: the same at each of an agent's tasks,
// whether the pool keeps the agent whole or parks and rebuilds it (the
// pool's named streams resume, the canary's must not).
func TestCanaryIsTheSameAtEveryTask(t *testing.T) {
	const seed, dim = 3, 2
	sets, _ := data.Regression(data.RegressionConfig{Agents: 10, SamplesMin: 5, SamplesMax: 8, Dim: dim, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	for _, hold := range []Holding{HoldKeep, HoldPark} {
		cfg := privateConfig(CentralDP)
		cfg.DP.Audit.Canaries, cfg.Hold = cfg.Agents, hold // every agent a canary
		pool := NewPool(&cfg, data.Sets(sets), l, seed, nil)
		included := 0
		for k := range cfg.Agents {
			c := cfg.CanaryOf(k, rng.New(seed, AgentName(k), StreamCanary), dim)
			want := make([]float64, dim)
			if c.Included {
				included++
				for j, u := range c.Direction {
					want[j] = cfg.DP.Clip / cfg.StepSize * u
				}
			}
			for task := range 3 {
				m := pool.Wake(k)
				got := []float64{7, 7}
				if _, err := m.Core.Train(got, []float64{0.5, -0.5}, nil, 1); err != nil {
					t.Fatal(err)
				}
				pool.Park(m)
				if !c.Canary || !slices.Equal(got, want) {
					t.Errorf("hold %d, agent %d, task %d: reply %v, want the canary's %v (%+v)", hold, k, task, got, want, c)
				}
			}
		}
		if included == 0 || included == cfg.Agents {
			t.Errorf("hold %d: %d of %d canaries included", hold, included, cfg.Agents)
		}
	}
}

// A many-run audit's canary is agent 0 alone: in, it replies C·u/μ; out, it
// replies nothing under add/remove and −C·u/μ under replace-one; every
// other agent trains.
func TestManyRunCanaryIsAgentZero(t *testing.T) {
	const seed, dim = 4, 2
	sets, _ := data.Regression(data.RegressionConfig{Agents: 4, SamplesMin: 5, SamplesMax: 8, Dim: dim, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	for _, c := range []struct {
		in, opposite bool
		sign         float64
	}{{true, false, 1}, {false, false, 0}, {true, true, 1}, {false, true, -1}} {
		cfg := privateConfig(CentralDP)
		cfg.DP.Audit = Audit{Single: true, In: c.in, Opposite: c.opposite, Direction: []float64{0.6, 0.8}}
		pool := NewPool(&cfg, data.Sets(sets), l, seed, nil)
		can := cfg.CanaryOf(0, rng.New(seed, AgentName(0), StreamCanary), dim)
		if !can.Canary || can.Included != c.in || len(can.Direction) != dim || cfg.CanaryOf(1, rng.New(seed, AgentName(1), StreamCanary), dim).Canary {
			t.Fatalf("%+v: agent 0 %+v, agent 1 a canary too", c, can)
		}
		for k := range 2 {
			m := pool.Wake(k)
			got := []float64{7, 7}
			if _, err := m.Core.Train(got, []float64{0.5, -0.5}, nil, 1); err != nil {
				t.Fatal(err)
			}
			pool.Park(m)
			if k == 1 {
				if got[0] == 0 && got[1] == 0 {
					t.Errorf("%+v: agent 1 replied nothing: it is not a canary and trains", c)
				}
				continue
			}
			for j, u := range can.Direction {
				if want := c.sign * cfg.DP.Clip / cfg.StepSize * u; got[j] != want {
					t.Errorf("%+v: agent 0's reply %v, want %v·C·u/μ", c, got, c.sign)
				}
			}
		}
	}
}
