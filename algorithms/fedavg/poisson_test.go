package fedavg

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/privacy/accountant/pld"
	"maple/privacy/ledger"
)

// poissonConfig is a server of Poisson participation: K agents, L expected
// per round.
func poissonConfig(agents, expected int) *Config {
	return &Config{Agents: agents, Participants: expected, Participation: Poisson, StepSize: 0.1,
		Epochs: Range{Min: 1, Max: 1}, Batch: Range{Min: 1, Max: 1}}
}

// Under Poisson participation each agent takes part in each round with
// probability q = L/K, independently: over R = 20 000 rounds of K = 50
// agents at q = 0.2, every agent's count of rounds is Binomial(R, q), mean
// 4000 and standard deviation √(R q (1 − q)) ≈ 56.6; each must lie within
// 5 standard deviations, which a true Binomial leaves with probability
// 5.7·10⁻⁷, so all 50 do but with probability 3·10⁻⁵ (union bound). Every
// round is sorted and without repeats, as the server's slots need.
func TestPoissonInclusionFrequencyIsTheRate(t *testing.T) {
	const K, L, R = 50, 10, 20000
	cfg := poissonConfig(K, L)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	s := NewServer(cfg, []float64{0}, rng.New(1, ServerName, "participation"))
	count := make([]int, K)
	for range R {
		draws := s.Begin()
		if !slices.IsSorted(draws) || len(slices.Compact(slices.Clone(draws))) != len(draws) {
			t.Fatalf("round %v is not ascending and distinct", draws)
		}
		for _, k := range draws {
			count[k]++
		}
	}
	q := cfg.Rate()
	mean, sd := R*q, math.Sqrt(R*q*(1-q))
	for k, c := range count {
		if math.Abs(float64(c)-mean) > 5*sd {
			t.Errorf("agent %d took part in %d of %d rounds, want %v ± %.1f (5 sd)", k, c, R, mean, 5*sd)
		}
	}
}

// A round's number of agents is Binomial(K, q): the histogram of 20 000
// rounds' sizes (K = 40, q = 0.25), its cells pooled until each expects at
// least 5, passes Pearson's χ² test at level 10⁻⁶ — a true Binomial fails
// with that probability, a sampler off by a fraction of a per cent in q or
// in the spread fails it.
func TestPoissonRoundSizesAreBinomial(t *testing.T) {
	const K, L, R = 40, 10, 20000
	cfg := poissonConfig(K, L)
	s := NewServer(cfg, []float64{0}, rng.New(2, ServerName, "participation"))
	hist := make([]float64, K+1)
	for range R {
		hist[len(s.Begin())]++
	}
	b := distuv.Binomial{N: K, P: cfg.Rate()}
	var chi2 float64
	cells := 0
	var obs, exp float64
	for n := 0; n <= K; n++ {
		obs += hist[n]
		exp += R * b.Prob(float64(n))
		if exp >= 5 && (n == K || R*(1-b.CDF(float64(n))) >= 5) {
			chi2 += (obs - exp) * (obs - exp) / exp
			obs, exp = 0, 0
			cells++
		}
	}
	if exp > 0 { // the tail left over joins the last cell counted
		chi2 += (obs - exp) * (obs - exp) / exp
		cells++
	}
	crit := distuv.ChiSquared{K: float64(cells - 1)}.Quantile(1 - 1e-6)
	if chi2 > crit {
		t.Errorf("χ² = %.1f over %d cells exceeds the 10⁻⁶ critical value %.1f", chi2, cells, crit)
	}
	t.Logf("χ² = %.1f over %d cells (critical %.1f)", chi2, cells, crit)
}

// counting is a random source that counts the numbers drawn from it.
type counting struct {
	src   rand.Source
	calls int
}

func (c *counting) Uint64() uint64 { c.calls++; return c.src.Uint64() }

// Sampling a round of ten million agents costs one draw per agent taken
// plus one (the geometric gaps), not one per agent: over 50 rounds at
// q = 10⁻⁵ the server draws exactly Σ (n_r + 1) numbers from its
// participation stream — about 5 050, where a coin per agent would take
// 5·10⁸. q = 1 takes every agent without drawing.
func TestPoissonSamplingCostsOneDrawPerAgentTaken(t *testing.T) {
	cfg := poissonConfig(10_000_000, 100)
	src := &counting{src: rng.Source(3, ServerName, "participation")}
	s := NewServer(cfg, []float64{0}, rand.New(src))
	want, taken := 0, 0
	for range 50 {
		n := len(s.Begin())
		want += n + 1
		taken += n
	}
	if src.calls != want {
		t.Errorf("%d numbers drawn for %d agents taken in 50 rounds, want %d", src.calls, taken, want)
	}
	if taken < 4000 || taken > 6000 { // 5000 expected, sd 71
		t.Errorf("%d agents taken in 50 rounds of q = 10⁻⁵ among 10⁷, want about 5000", taken)
	}
	all := &counting{src: rng.Source(3, ServerName, "participation")}
	if got := PoissonSample(nil, 7, 1, rand.New(all)); len(got) != 7 || all.calls != 0 {
		t.Errorf("q = 1: %v with %d draws, want every agent and no draw", got, all.calls)
	}
}

// The ledger composes each round's mechanism — its sampling, the declared
// relation — with the chosen accountant. Under the RDP accountant its ε
// after T rounds is accountant.DPFedAvg's, to 1e-12 relative (the ledger
// adds T per-round RDP vectors, the accountant multiplies one by T: they
// differ by T roundings at most): Poisson sampling under add/remove
// (Mironov, Talwar & Zhang 2019), fixed-size under replace-one (Wang,
// Balle & Kasiviswanathan 2019). Under the PLD accountant it is
// pld.Compose's of the same mechanism exactly (the same computation), and
// Poisson add/remove at q = 0.05, z = 1, 100 rounds is the 3.50 of the
// literature's accounting of DP-FedAvg (issue 29; dp_accounting).
func TestLedgerComposesTheDeclaredRounds(t *testing.T) {
	// The literature's figure is after 100 rounds; the other cases check
	// the same composition on 20, since every round asks the accountant
	// for ε and the fixed-size and replace-one distributions are wide.
	for _, c := range []struct {
		part     Participation
		relation accountant.Relation
		kind     ledger.Kind
		rounds   int
	}{
		{Poisson, accountant.AddRemove, ledger.RDP, 20}, {WithoutReplacement, accountant.ReplaceOne, ledger.RDP, 20},
		{Poisson, accountant.AddRemove, ledger.PLD, 100}, {Poisson, accountant.ReplaceOne, ledger.PLD, 20}, {WithoutReplacement, accountant.AddRemove, ledger.PLD, 20},
	} {
		cfg := poissonConfig(1000, 50)
		cfg.Participation, cfg.Share = c.part, Updates
		cfg.DP = DP{Mode: CentralDP, Clip: 0.5, NoiseMultiplier: 1, Delta: 1e-5, Relation: c.relation, Accountant: c.kind}
		if err := cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		r := cfg.Round(3, cfg.Draws())
		sampling := accountant.FixedSize
		if c.part == Poisson {
			sampling = accountant.Poisson
		}
		if m := r.Mechanism; m.Sampling != sampling || m.Relation != c.relation || m.Rate != 0.05 || m.NoiseMultiplier != 1 {
			t.Errorf("%v: round %+v", c.part, r)
		}
		l := NewLedger(cfg, 3, 0)
		var g Guarantee
		for range c.rounds {
			g, _ = l.Round(true, cfg.Draws())
		}
		var want float64
		if c.kind == ledger.RDP {
			want, _ = accountant.DPFedAvg(1000, 50, c.rounds, 1, sampling).Epsilon(1e-5, accountant.Balle2020)
			if math.Abs(g.Epsilon-want) > 1e-12*want {
				t.Errorf("%v %v RDP: ledger ε = %.15g after %d rounds, accountant %.15g", c.part, c.relation, g.Epsilon, c.rounds, want)
			}
		} else {
			d, err := pld.Compose(r.Mechanism, int64(c.rounds), ledger.RunOptions)
			if err != nil {
				t.Fatal(err)
			}
			if want = d.Epsilon(1e-5); g.Epsilon != want {
				t.Errorf("%v %v PLD: ledger ε = %.15g after %d rounds, pld.Compose %.15g", c.part, c.relation, g.Epsilon, c.rounds, want)
			}
		}
		// 3.50 is printed to two decimals: ±0.005 is its rounding.
		if c.part == Poisson && c.relation == accountant.AddRemove && c.kind == ledger.PLD && math.Abs(g.Epsilon-3.50) > 0.005 {
			t.Errorf("Poisson add/remove PLD: ε = %.4g, the literature's 3.50", g.Epsilon)
		}
		t.Logf("%v (%s, %s, %s): ε = %.4g", c.part, sampling, c.relation, c.kind, g.Epsilon)
	}
}

// What a variable round cannot do is refused with the reason: first-k
// over-selection, importance sampling of agents, distributed DP, central DP
// with secure aggregation, adaptive clipping, explicit neighbours or
// threshold, a grid that cannot hold every agent's input, and a rate
// above one.
func TestPoissonRefusesWhatNeedsAFixedRound(t *testing.T) {
	secure := func(c *Config) { c.SecAgg = &SecureAggregation{Bits: 32, Clip: 4, Sparse: true} }
	dp := func(mode DPMode) func(c *Config) {
		return func(c *Config) {
			c.Share, c.DP = Updates, DP{Mode: mode, Clip: 0.5, NoiseMultiplier: 1, Delta: 1e-5, Beta: 0.5}
		}
	}
	for _, c := range []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"first-k", func(c *Config) { c.Collect = FirstK{K: 2} }, "first-k"},
		{"importance", func(c *Config) { c.Importance.Agents = Partial }, "poisson"},
		{"distributed", func(c *Config) { secure(c); dp(DistributedDP)(c) }, "distributed DP"},
		{"central-secagg", func(c *Config) { secure(c); dp(CentralDP)(c) }, "secure aggregation"},
		{"neighbours", func(c *Config) { secure(c); c.SecAgg.Neighbours = 3 }, "neighbours"},
		{"threshold", func(c *Config) { secure(c); c.SecAgg.Threshold = 3 }, "threshold"},
		{"bits", func(c *Config) { secure(c); c.SecAgg.Bits = 4 }, "bits"},
		{"rate", func(c *Config) { c.Participants = 13 }, "participants"},
	} {
		cfg := poissonConfig(12, 4)
		c.edit(cfg)
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
	cfg := poissonConfig(12, 4)
	secure(cfg)
	if err := cfg.Validate(); err != nil {
		t.Errorf("secure aggregation without DP under Poisson participation: %v", err)
	}
	for n, want := range map[int][2]int{2: {1, 2}, 3: {2, 2}, 9: {8, 5}, 40: {12, 7}} {
		scfg, err := cfg.SecAggRound(1, n, 3)
		if err != nil || scfg.Clients != n || scfg.Neighbours != want[0] || scfg.Threshold != want[1] {
			t.Errorf("round of %d clients: %+v, %v; want k = %d, t = %d", n, scfg, err, want[0], want[1])
		}
	}
}
