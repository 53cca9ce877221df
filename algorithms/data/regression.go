package data

import (
	"fmt"
	"math"
	"math/rand/v2"

	"maple/algorithms/rng"
)

// RegressionConfig describes synthetic linear-regression data
//
//	d_k(n) = u_{k,n}ᵀ w⋆ + v_k(n)
//
// (thesis eq. 2.70, paper 001 eq. 8). Features are Gaussian, u ~ N(0, R_u) with
// R_u = L Lᵀ for a random lower-triangular L; the noise v_k(n) ~ N(0, σ²_{v,k})
// has an agent-dependent variance, which makes the agents' data non-IID. The
// papers leave these distributions unstated; the defaults follow the sanity
// simulation of the decentralized-privacy spec (§5.4).
type RegressionConfig struct {
	// Agents is the number of local datasets K (or P).
	Agents int
	// SamplesMin and SamplesMax bound the per-agent sample count N_k, drawn
	// uniformly from the closed range (equal bounds fix N_k).
	SamplesMin, SamplesMax int
	// Dim is the feature dimension M.
	Dim int
	// CovScale scales L: its diagonal entries are CovScale·U(0.5, 1.5) and its
	// strictly lower entries CovScale·U(−0.5, 0.5).
	CovScale float64
	// SharedCovariance draws one R_u for all agents (paper 001) instead of one
	// per agent (thesis ch. 2–3).
	SharedCovariance bool
	// NoiseVarMin and NoiseVarMax bound σ²_{v,k}, drawn uniformly per agent.
	NoiseVarMin, NoiseVarMax float64
}

// Validate reports the first impossible parameter, naming its field.
func (c RegressionConfig) Validate() error {
	switch {
	case c.Agents < 1:
		return fmt.Errorf("agents: must be at least 1, got %d", c.Agents)
	case c.SamplesMin < 1 || c.SamplesMax < c.SamplesMin:
		return fmt.Errorf("samples: need 1 ≤ min ≤ max, got [%d, %d]", c.SamplesMin, c.SamplesMax)
	case c.Dim < 1:
		return fmt.Errorf("dim: must be at least 1, got %d", c.Dim)
	case c.CovScale <= 0:
		return fmt.Errorf("covariance_scale: must be positive, got %v", c.CovScale)
	case c.NoiseVarMin < 0 || c.NoiseVarMax < c.NoiseVarMin:
		return fmt.Errorf("noise_variance: need 0 ≤ min ≤ max, got [%v, %v]", c.NoiseVarMin, c.NoiseVarMax)
	}
	return nil
}

// Regression generates the K local datasets and the true model w⋆ of one run:
// every dataset of RegressionSource, in memory.
func Regression(c RegressionConfig, runSeed uint64) (sets []*Set, wStar []float64) {
	src, wStar := RegressionSource(c, runSeed)
	return Collect(src), wStar
}

// RegressionSource returns the local datasets of one run as a Source that
// draws each when asked, and the true model w⋆. Agent k's data come from the
// stream ("data", "agent/k") and the shared quantities (w⋆, a shared R_u)
// from ("data", "global"), so an agent's data do not depend on how many
// other agents there are, nor on which were drawn before.
func RegressionSource(c RegressionConfig, runSeed uint64) (src Source, wStar []float64) {
	global := rng.New(runSeed, "data", "global")
	wStar = make([]float64, c.Dim)
	for j := range wStar {
		wStar[j] = global.NormFloat64()
	}
	var shared []float64
	if c.SharedCovariance {
		shared = covarianceFactor(c.Dim, c.CovScale, global)
	}
	return &regression{c: c, runSeed: runSeed, wStar: wStar, shared: shared}, wStar
}

// regression is the Source of RegressionSource.
type regression struct {
	c       RegressionConfig
	runSeed uint64
	wStar   []float64
	shared  []float64 // the shared covariance factor, nil for one per agent
}

// Agents implements Source.
func (g *regression) Agents() int { return g.c.Agents }

// Set implements Source.
func (g *regression) Set(k int) *Set {
	c := &g.c
	pr := agentRand(g.runSeed, k)
	defer pr.release()
	r := pr.Rand
	factor := g.shared
	if factor == nil {
		factor = covarianceFactor(c.Dim, c.CovScale, r)
	}
	n := c.SamplesMin + r.IntN(c.SamplesMax-c.SamplesMin+1)
	noiseSD := math.Sqrt(c.NoiseVarMin + (c.NoiseVarMax-c.NoiseVarMin)*r.Float64())
	return linearSamples(n, factor, g.wStar, noiseSD, r)
}

// covarianceFactor draws the lower-triangular factor L (row-major, Dim×Dim).
func covarianceFactor(dim int, scale float64, r *rand.Rand) []float64 {
	l := make([]float64, dim*dim)
	for i := 0; i < dim; i++ {
		for j := 0; j < i; j++ {
			l[i*dim+j] = scale * (r.Float64() - 0.5)
		}
		l[i*dim+i] = scale * (0.5 + r.Float64())
	}
	return l
}

// linearSamples draws n samples u = L z, z ~ N(0, I), d = uᵀw⋆ + noiseSD·N(0,1).
func linearSamples(n int, factor, wStar []float64, noiseSD float64, r *rand.Rand) *Set {
	dim := len(wStar)
	s := newDense(n, dim)
	var stack [16]float64
	z := scratch(stack[:], dim)
	for i := 0; i < n; i++ {
		for j := range z {
			z[j] = r.NormFloat64()
		}
		row := s.Row(i)
		for a := 0; a < dim; a++ {
			var u float64
			for b := 0; b <= a; b++ {
				u += factor[a*dim+b] * z[b]
			}
			row[a] = u
		}
		var d float64
		for j, u := range row {
			d += u * wStar[j]
		}
		s.Y[i] = d + noiseSD*r.NormFloat64()
	}
	return s
}
