package data

import (
	"fmt"
	"math"
	"math/rand/v2"

	"maple/algorithms/rng"
)

// MixtureConfig describes the two-class Gaussian data of paper 003 §V (spec
// random-walk §6.1): a label y = +1 with probability Positive, else −1, and
// features x ~ N(y·Mean·1, Variance·I), the class means ±Mean in every
// coordinate. The paper gives Variance (ν = 10 "high", 1 "low") and one sample
// per node; Mean, Dim and the class balance are not stated.
type MixtureConfig struct {
	// Agents is the number of local datasets.
	Agents int
	// SamplesMin and SamplesMax bound each agent's sample count, drawn
	// uniformly from the closed range.
	SamplesMin, SamplesMax int
	// Dim is the feature dimension.
	Dim int
	// Mean is μ, the per-coordinate class mean of class +1 (class −1 has −μ).
	Mean float64
	// Variance is ν, the per-coordinate variance of both classes.
	Variance float64
	// Positive is the probability of the label +1.
	Positive float64
	// TestSamples is the size of the test set drawn from the same
	// distribution; 0 gives none.
	TestSamples int
}

// Validate reports the first impossible parameter, naming its field.
func (c MixtureConfig) Validate() error {
	if err := checkCounts(c.Agents, c.SamplesMin, c.SamplesMax); err != nil {
		return err
	}
	switch {
	case c.Dim < 1:
		return fmt.Errorf("dim: must be at least 1, got %d", c.Dim)
	case math.IsNaN(c.Mean) || math.IsInf(c.Mean, 0):
		return fmt.Errorf("mean: must be finite, got %v", c.Mean)
	case !(c.Variance > 0) || math.IsInf(c.Variance, 1):
		return fmt.Errorf("variance: must be finite and positive, got %v", c.Variance)
	case !(c.Positive > 0 && c.Positive < 1):
		return fmt.Errorf("positive: must lie in (0, 1), got %v", c.Positive)
	case c.TestSamples < 0:
		return fmt.Errorf("test_samples: must be non-negative, got %d", c.TestSamples)
	}
	return nil
}

// Mixture generates the local datasets and the test set (nil when
// TestSamples is 0) of one run; c must be valid: every dataset of
// MixtureSource, in memory.
func Mixture(c MixtureConfig, runSeed uint64) (sets []*Set, test *Set) {
	src, test := MixtureSource(c, runSeed)
	return Collect(src), test
}

// MixtureSource returns the local datasets of one run as a Source that draws
// each when asked, and the test set (nil when TestSamples is 0); c must be
// valid. Agent k draws from the stream ("data", "agent/k"), so its data do
// not depend on the number of agents; the test set comes from ("data",
// "test").
func MixtureSource(c MixtureConfig, runSeed uint64) (src Source, test *Set) {
	if c.TestSamples > 0 {
		test = mixtureSamples(c, c.TestSamples, rng.New(runSeed, "data", "test"))
	}
	return &mixture{c: c, runSeed: runSeed}, test
}

// mixture is the Source of MixtureSource.
type mixture struct {
	c       MixtureConfig
	runSeed uint64
}

// Agents implements Source.
func (g *mixture) Agents() int { return g.c.Agents }

// Set implements Source.
func (g *mixture) Set(k int) *Set {
	pr := agentRand(g.runSeed, k)
	defer pr.release()
	r := pr.Rand
	return mixtureSamples(g.c, sampleCount(r, g.c.SamplesMin, g.c.SamplesMax), r)
}

// mixtureSamples draws n labelled samples: first the label, then the
// features of its class.
func mixtureSamples(c MixtureConfig, n int, r *rand.Rand) *Set {
	s := newDense(n, c.Dim)
	sd := math.Sqrt(c.Variance)
	for i := range n {
		y := -1.0
		if r.Float64() < c.Positive {
			y = 1
		}
		s.Y[i] = y
		for j, row := 0, s.Row(i); j < c.Dim; j++ {
			row[j] = y*c.Mean + sd*r.NormFloat64()
		}
	}
	return s
}
