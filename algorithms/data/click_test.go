package data

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func smallClick() ClickConfig {
	return ClickConfig{Agents: 3, SamplesMin: 30, SamplesMax: 60, Dim: 64, Active: 4,
		ZipfExponent: 1.2, Skew: 0.3, ClickRate: 0.17, WeightScale: 0.5,
		NoiseVarMin: 0.01, NoiseVarMax: 0.25, TestSamples: 40}
}

func sparseEqual(a, b *Set) bool {
	return a.Dim == b.Dim && slices.Equal(a.RowPtr, b.RowPtr) && slices.Equal(a.Col, b.Col) &&
		slices.Equal(a.Val, b.Val) && slices.Equal(a.Y, b.Y)
}

func TestClickIsReproducibleAndAgentLocal(t *testing.T) {
	c := smallClick()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, testA, wa := Click(c, 21)
	b, testB, wb := Click(c, 21)
	if !slices.Equal(wa, wb) || !sparseEqual(testA, testB) {
		t.Fatal("w⋆ or the test set differ between identical calls")
	}
	for k := range a {
		if !sparseEqual(a[k], b[k]) {
			t.Fatalf("agent %d data differ between identical calls", k)
		}
		if n := a[k].Len(); n < c.SamplesMin || n > c.SamplesMax {
			t.Errorf("agent %d has %d samples, outside [%d, %d]", k, n, c.SamplesMin, c.SamplesMax)
		}
	}
	c.Agents = 5
	more, testMore, _ := Click(c, 21)
	for k := range a {
		if !sparseEqual(a[k], more[k]) {
			t.Errorf("agent %d data changed when agents were added", k)
		}
	}
	if !sparseEqual(testA, testMore) {
		t.Error("the test set changed when agents were added")
	}
	other, _, _ := Click(smallClick(), 22)
	if slices.Equal(a[0].Col, other[0].Col) {
		t.Error("a different run seed produced the same data")
	}
}

// Every row is one-hot per field: well-formed sorted CSR with exactly one
// column in each block [f·Dim/Active, (f+1)·Dim/Active). Agents' active values
// are noisy; the test set's are exactly 1.
func TestClickRowsAreOneHotPerField(t *testing.T) {
	c := smallClick()
	sets, test, _ := Click(c, 3)
	for k, s := range append(sets, test) {
		if err := wellFormed(s, true); err != nil {
			t.Fatalf("set %d: %v", k, err)
		}
		for n := 0; n < s.Len(); n++ {
			cols := s.Col[s.RowPtr[n]:s.RowPtr[n+1]]
			if len(cols) != c.Active {
				t.Fatalf("set %d row %d has %d entries, want %d", k, n, len(cols), c.Active)
			}
			for f, col := range cols {
				if lo, hi := f*c.Dim/c.Active, (f+1)*c.Dim/c.Active; int(col) < lo || int(col) >= hi {
					t.Fatalf("set %d row %d: entry %d at column %d, outside field [%d, %d)", k, n, f, col, lo, hi)
				}
			}
		}
	}
	for j, v := range test.Val {
		if v != 1 {
			t.Fatalf("test value %d is %v, want exactly 1 (clean)", j, v)
		}
	}
	for k, s := range sets {
		if !slices.ContainsFunc(s.Val, func(v float64) bool { return v != 1 }) {
			t.Errorf("agent %d has no feature noise although σ² ≥ %v", k, c.NoiseVarMin)
		}
	}
}

// The per-agent noise variance lies in [NoiseVarMin, NoiseVarMax]: the sample
// variance of (value − 1) over m = 16000 entries has relative standard error
// √(2/m) ≈ 1.1%, so a 6% margin on each side is over five standard errors.
func TestClickNoiseVariance(t *testing.T) {
	c := smallClick()
	c.SamplesMin, c.SamplesMax = 4000, 4000
	sets, _, _ := Click(c, 4)
	for k, s := range sets {
		var sq float64
		for _, v := range s.Val {
			sq += (v - 1) * (v - 1)
		}
		if v := sq / float64(len(s.Val)); v < 0.94*c.NoiseVarMin || v > 1.06*c.NoiseVarMax {
			t.Errorf("agent %d: noise variance %v outside [%v, %v] ± 6%%", k, v, c.NoiseVarMin, c.NoiseVarMax)
		}
	}
}

// With Skew = 0 the agents and the test set share the clean distribution, so
// their click rates estimate ClickRate p. The bias was fitted on 2¹⁵ samples,
// which leaves the population rate within a standard error √(p(1−p)/2¹⁵) ≈
// 0.0021 of p; an observed rate over n samples adds √(p(1−p)/n). The tolerance
// is five combined standard errors.
func TestClickRate(t *testing.T) {
	for _, rate := range []float64{0.17, 0.5, 0.03} {
		c := smallClick()
		c.Skew, c.ClickRate, c.WeightScale = 0, rate, 1
		c.SamplesMin, c.SamplesMax, c.TestSamples = 20000, 20000, 20000
		sets, test, _ := Click(c, 9)
		for _, s := range []*Set{test, sets[0]} {
			clicks := 0
			for _, y := range s.Y {
				if y == 1 {
					clicks++
				}
			}
			v := rate * (1 - rate)
			tol := 5 * math.Sqrt(v/calibrationSamples+v/float64(s.Len()))
			if got := float64(clicks) / float64(s.Len()); math.Abs(got-rate) > tol {
				t.Errorf("click rate %v, want %v ± %.4f", got, rate, tol)
			}
		}
	}
}

// Skew moves an agent's popular categories. For each field, the total
// variation distance between the agent's and the test set's category
// frequencies is pure sampling noise at Skew = 0, at most ½√(S/n) ≈ 0.02 for
// S = 16 slots and n = 10000 samples (tolerance 0.05), and at Skew = 1 it is
// that of a Zipf law and a rotation of it, above 0.3 whenever the rotation is
// not zero (checked on the field that moves most).
func TestClickSkew(t *testing.T) {
	for _, tc := range []struct {
		skew   float64
		lo, hi float64
	}{{0, 0, 0.05}, {1, 0.3, 1}} {
		c := smallClick()
		c.Skew, c.SamplesMin, c.SamplesMax, c.TestSamples = tc.skew, 10000, 10000, 10000
		sets, test, _ := Click(c, 13)
		var most float64
		for f := 0; f < c.Active; f++ {
			most = max(most, fieldTV(sets[0], test, f, c))
		}
		if most < tc.lo || most > tc.hi {
			t.Errorf("skew %v: largest field TV distance %v, want in [%v, %v]", tc.skew, most, tc.lo, tc.hi)
		}
	}
}

// fieldTV returns the total variation distance between the frequencies of
// field f's categories in a and b.
func fieldTV(a, b *Set, f int, c ClickConfig) float64 {
	freq := func(s *Set) []float64 {
		h := make([]float64, c.Dim)
		for n := 0; n < s.Len(); n++ {
			h[s.Col[s.RowPtr[n]+f]] += 1 / float64(s.Len())
		}
		return h
	}
	fa, fb := freq(a), freq(b)
	var tv float64
	for j := range fa {
		tv += math.Abs(fa[j]-fb[j]) / 2
	}
	return tv
}

func TestClickValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*ClickConfig)
		want string
	}{
		{func(c *ClickConfig) { c.Agents = 0 }, "agents:"},
		{func(c *ClickConfig) { c.SamplesMax = 1 }, "samples:"},
		{func(c *ClickConfig) { c.Active = 0 }, "active:"},
		{func(c *ClickConfig) { c.Dim = 3 }, "dim:"},
		{func(c *ClickConfig) { c.Dim = math.MaxInt32 + 1 }, "dim:"},
		{func(c *ClickConfig) { c.ZipfExponent = 1 }, "zipf_exponent:"},
		{func(c *ClickConfig) { c.Skew = 1.5 }, "skew:"},
		{func(c *ClickConfig) { c.ClickRate = 1 }, "click_rate:"},
		{func(c *ClickConfig) { c.WeightScale = math.Inf(1) }, "weight_scale:"},
		{func(c *ClickConfig) { c.WeightScale = math.NaN() }, "weight_scale:"},
		{func(c *ClickConfig) { c.NoiseVarMin = -1 }, "noise_variance:"},
		{func(c *ClickConfig) { c.TestSamples = 0 }, "test_samples: must be at least 1, got 0"},
	} {
		c := smallClick()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want an error starting %q", err, tc.want)
		}
	}
	if err := DefaultClickConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}

// The default configuration reproduces the scale of the thesis's Avazu subset:
// about 5101 samples over 50 agents (the mean N_k is 102, so the total has
// standard deviation √50·σ(U[51,153]) ≈ 209; ±1050 is five of them).
func TestClickDefaultScale(t *testing.T) {
	sets, test, _ := Click(DefaultClickConfig(), 1)
	total := 0
	for _, s := range sets {
		total += s.Len()
	}
	if len(sets) != 50 || test.Len() != 256 || total < 5101-1050 || total > 5101+1050 {
		t.Errorf("%d agents, %d test samples, %d training samples", len(sets), test.Len(), total)
	}
}
