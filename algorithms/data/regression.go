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
func (g *regression) Set(k int) *Set { return g.draw(k, nil) }

// DrawTo implements Drawer: agent k's samples drawn into dst's storage.
func (g *regression) DrawTo(k int, dst *Set) *Set { return g.draw(k, dst) }

// draw draws agent k's dataset into dst, or into a new set when dst is nil.
func (g *regression) draw(k int, dst *Set) *Set {
	c := &g.c
	pr := agentRand(g.runSeed, k)
	defer pr.release()
	r := pr.Rand
	factor := g.shared
	if factor == nil {
		var stack [16]float64
		factor = covarianceFactorTo(scratch(stack[:], c.Dim*c.Dim), c.Dim, c.CovScale, r)
	}
	n := c.SamplesMin + r.IntN(c.SamplesMax-c.SamplesMin+1)
	noiseSD := math.Sqrt(c.NoiseVarMin + (c.NoiseVarMax-c.NoiseVarMin)*r.Float64())
	if dst == nil {
		dst = newDense(n, c.Dim)
	} else {
		dst.reshapeDense(n, c.Dim, c.SamplesMax)
	}
	linearSamples(dst, factor, g.wStar, noiseSD, r)
	return dst
}

// covarianceFactor draws the lower-triangular factor L (row-major, Dim×Dim).
func covarianceFactor(dim int, scale float64, r *rand.Rand) []float64 {
	return covarianceFactorTo(make([]float64, dim*dim), dim, scale, r)
}

// covarianceFactorTo is covarianceFactor into l, of length dim².
func covarianceFactorTo(l []float64, dim int, scale float64, r *rand.Rand) []float64 {
	clear(l)
	for i := 0; i < dim; i++ {
		for j := 0; j < i; j++ {
			l[i*dim+j] = scale * (r.Float64() - 0.5)
		}
		l[i*dim+i] = scale * (0.5 + r.Float64())
	}
	return l
}

// linearSamples draws s.Len() samples u = L z, z ~ N(0, I),
// d = uᵀw⋆ + noiseSD·N(0,1) into the dense set s. Every sum starts from
// zero and adds its terms in index order, each product rounded (the
// conversions forbid fused multiply-adds); two dimensions take a copy of
// the loop written out, the same operations (TestLinearSamplesInTwoDimensions).
func linearSamples(s *Set, factor, wStar []float64, noiseSD float64, r *rand.Rand) {
	if len(wStar) == 2 {
		linearSamples2(s, factor, wStar, noiseSD, r)
		return
	}
	linearSamplesN(s, factor, wStar, noiseSD, r)
}

// linearSamplesN is linearSamples in any dimension.
func linearSamplesN(s *Set, factor, wStar []float64, noiseSD float64, r *rand.Rand) {
	dim := len(wStar)
	var stack [16]float64
	z := scratch(stack[:], dim)
	for i := 0; i < s.Len(); i++ {
		for j := range z {
			z[j] = r.NormFloat64()
		}
		row := s.Row(i)
		for a := 0; a < dim; a++ {
			var u float64
			for b := 0; b <= a; b++ {
				u += float64(factor[a*dim+b] * z[b])
			}
			row[a] = u
		}
		var d float64
		for j, u := range row {
			d += float64(u * wStar[j])
		}
		s.Y[i] = d + float64(noiseSD*r.NormFloat64())
	}
}

// linearSamples2 is linearSamples in two dimensions.
func linearSamples2(s *Set, factor, wStar []float64, noiseSD float64, r *rand.Rand) {
	f00, f10, f11 := factor[0], factor[2], factor[3]
	w0, w1 := wStar[0], wStar[1]
	x, y := s.X[:2*len(s.Y)], s.Y
	for i := range y {
		z0 := r.NormFloat64()
		z1 := r.NormFloat64()
		var u0, u1, d float64
		u0 += float64(f00 * z0)
		u1 += float64(f10 * z0)
		u1 += float64(f11 * z1)
		x[2*i], x[2*i+1] = u0, u1
		d += float64(u0 * w0)
		d += float64(u1 * w1)
		y[i] = d + float64(noiseSD*r.NormFloat64())
	}
}
