package data

import (
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"
)

func smallLogistic() LogisticConfig {
	return LogisticConfig{Agents: 3, SamplesMin: 20, SamplesMax: 40, Dim: 4, CovScale: 1,
		ScoreSD: 3, MeanShift: 1, FlipMin: 0, FlipMax: 0.2, TestSamples: 50}
}

func TestLogisticIsReproducibleAndAgentLocal(t *testing.T) {
	c := smallLogistic()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, testA, wa := Logistic(c, 11)
	b, testB, wb := Logistic(c, 11)
	if !slices.Equal(wa, wb) || !slices.Equal(testA.X, testB.X) || !slices.Equal(testA.Y, testB.Y) {
		t.Fatal("w⋆ or the test set differ between identical calls")
	}
	for k := range a {
		if !slices.Equal(a[k].X, b[k].X) || !slices.Equal(a[k].Y, b[k].Y) {
			t.Fatalf("agent %d data differ between identical calls", k)
		}
		if n := a[k].Len(); n < c.SamplesMin || n > c.SamplesMax {
			t.Errorf("agent %d has %d samples, outside [%d, %d]", k, n, c.SamplesMin, c.SamplesMax)
		}
		if err := wellFormed(a[k], true); err != nil {
			t.Errorf("agent %d: %v", k, err)
		}
	}
	if err := wellFormed(testA, true); err != nil || testA.Len() != c.TestSamples {
		t.Errorf("test set: %v, %d samples (want %d)", err, testA.Len(), c.TestSamples)
	}
	c.Agents = 5
	more, testMore, _ := Logistic(c, 11)
	for k := range a {
		if !slices.Equal(a[k].X, more[k].X) || !slices.Equal(a[k].Y, more[k].Y) {
			t.Errorf("agent %d data changed when agents were added", k)
		}
	}
	if !slices.Equal(testA.X, testMore.X) {
		t.Error("the test set changed when agents were added")
	}
	other, _, _ := Logistic(smallLogistic(), 12)
	if slices.Equal(a[0].X, other[0].X) {
		t.Error("a different run seed produced the same data")
	}
}

// Given x, a clean label disagrees with sign(xᵀw⋆) with probability
// p(x) = σ(−|xᵀw⋆|), and a label flipped with probability f with probability
// f + (1 − 2f)·p(x). The disagreement count is then a sum of independent
// Bernoulli variables with known means, so it must lie within 5 standard
// deviations √(Σ p(1−p)) of its mean (a 6e-7 two-sided chance of a false
// alarm). This checks the label model, the flip rate and that the test set is
// not flipped.
func TestLogisticLabelModel(t *testing.T) {
	c := LogisticConfig{Agents: 1, SamplesMin: 20000, SamplesMax: 20000, Dim: 3, CovScale: 1,
		ScoreSD: 2, FlipMin: 0.2, FlipMax: 0.2, TestSamples: 20000}
	sets, test, wStar := Logistic(c, 5)
	for _, tc := range []struct {
		name string
		s    *Set
		flip float64
	}{{"agent", sets[0], 0.2}, {"test", test, 0}} {
		var wrong, mean, variance float64
		for n := 0; n < tc.s.Len(); n++ {
			z := floats.Dot(tc.s.Row(n), wStar)
			if z*tc.s.Y[n] < 0 {
				wrong++
			}
			p := tc.flip + (1-2*tc.flip)*sigmoid(-math.Abs(z))
			mean += p
			variance += p * (1 - p)
		}
		if d := math.Abs(wrong - mean); d > 5*math.Sqrt(variance) {
			t.Errorf("%s: %v labels disagree with sign(xᵀw⋆), expected %.0f ± %.0f", tc.name, wrong, mean, math.Sqrt(variance))
		}
	}
}

// The test set has mean 0 and score standard deviation ScoreSD; an agent with
// a large MeanShift does not. With n = 20000 samples the standard error of a
// mean coordinate is √(R_jj/n) < 0.02 (R_jj < 4 for Dim = 3, CovScale = 1) and
// that of the score SD is ScoreSD/√(2n) = 0.015, so 0.1 and 0.08 are more than
// five standard errors; MeanShift = 3 moves some agent coordinate by far more
// than 0.1 unless all three N(0, 9) draws are that small (chance < 1e-3, and
// the seed is fixed).
func TestLogisticTestSetIsUnshifted(t *testing.T) {
	c := LogisticConfig{Agents: 1, SamplesMin: 20000, SamplesMax: 20000, Dim: 3, CovScale: 1,
		ScoreSD: 3, MeanShift: 3, TestSamples: 20000}
	sets, test, wStar := Logistic(c, 7)
	testMean, agentMean := columnMeans(test), columnMeans(sets[0])
	if m := floats.Norm(testMean, math.Inf(1)); m > 0.1 {
		t.Errorf("test feature mean %v, want 0 ± 0.1", testMean)
	}
	if m := floats.Norm(agentMean, math.Inf(1)); m < 0.1 {
		t.Errorf("agent feature mean %v shows no shift", agentMean)
	}
	scores := make([]float64, test.Len())
	for n := range scores {
		scores[n] = floats.Dot(test.Row(n), wStar)
	}
	var sq float64
	for _, z := range scores {
		sq += z * z
	}
	if sd := math.Sqrt(sq / float64(len(scores))); math.Abs(sd-c.ScoreSD) > 0.08 {
		t.Errorf("test score standard deviation %v, want %v ± 0.08", sd, c.ScoreSD)
	}
}

func columnMeans(s *Set) []float64 {
	m := make([]float64, s.Dim)
	for n := 0; n < s.Len(); n++ {
		floats.AddScaled(m, 1/float64(s.Len()), s.Row(n))
	}
	return m
}

func TestLogisticValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(*LogisticConfig)
		want string
	}{
		{func(c *LogisticConfig) { c.Agents = 0 }, "agents:"},
		{func(c *LogisticConfig) { c.SamplesMin = 50 }, "samples:"},
		{func(c *LogisticConfig) { c.Dim = 0 }, "dim:"},
		{func(c *LogisticConfig) { c.CovScale = math.NaN() }, "covariance_scale:"},
		{func(c *LogisticConfig) { c.ScoreSD = 0 }, "score_sd:"},
		{func(c *LogisticConfig) { c.ScoreSD = math.Inf(1) }, "score_sd:"},
		{func(c *LogisticConfig) { c.MeanShift = -1 }, "mean_shift:"},
		{func(c *LogisticConfig) { c.FlipMax = 0.5 }, "label_flip:"},
		{func(c *LogisticConfig) { c.FlipMin = 0.3 }, "label_flip:"},
		{func(c *LogisticConfig) { c.TestSamples = 0 }, "test_samples: must be at least 1, got 0"},
	} {
		c := smallLogistic()
		tc.edit(&c)
		if err := c.Validate(); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("got %v, want an error starting %q", err, tc.want)
		}
	}
	if err := DefaultLogisticConfig().Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
}
