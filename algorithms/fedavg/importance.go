package fedavg

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/algorithms/sampling"
	"maple/internal/enum"
)

// This file holds importance sampling of agents and data, thesis Algorithm
// 2.1 (ISFedAvg): the server samples agent k with normalized inclusion
// probability p_k and sends it p_k; the agent samples its mini-batches with
// normalized inclusion probabilities p_n^(k) and takes the unbiased
// importance-weighted steps of eq. 2.10,
//
//	w_{k,e} = w_{k,e−1} − μ/(K p_k E_k B_k) Σ_{b∈B} 1/(N_k p_b^(k)) ∇Q_k(w_{k,e−1}; x_b),
//
// and the server averages the returned models (eq. 2.11). With uniform
// policies (p_k = 1/K, p_n = 1/N_k) it is exactly the FedAvg of eqs.
// 1.30–1.31, and the uniform policy runs the plain FedAvg code, draw for draw.

// Policy is how the sampling probabilities of agents (at the server) or of
// data points (at each agent) are chosen, thesis §2.4.
type Policy int

const (
	// Uniform is p_k = 1/K and p_n = 1/N_k with FedAvg's uniform samplers.
	Uniform Policy = iota
	// Optimal uses the probabilities that minimize the gradient-noise bound
	// at w^o: eq. 2.46 for data, eq. 2.48 for agents (the thesis's "true
	// probabilities", an oracle: w^o comes with the configuration).
	Optimal
	// Adaptive recomputes them at the current model w_{i−1} every round,
	// eqs. 2.50 (data, from every local sample) and 2.51 (agents, from the
	// full local gradient of every agent, which the server probes for).
	Adaptive
	// Partial rewrites only the entries of what was sampled, eqs. 2.53
	// (agents, from what the round's participants report) and 2.54 (data,
	// after every mini-batch), starting from uniform.
	Partial
	// Fixed takes the agent probabilities from the configuration.
	Fixed
)

var policyNames = enum.Of[Policy]("policy", "uniform", "optimal", "adaptive", "partial", "fixed")

// String returns the scenario-file name of the value.
func (v Policy) String() string { return policyNames.String(v) }

// ParsePolicy returns the value named s.
func ParsePolicy(s string) (Policy, error) { return policyNames.Parse(s) }

// Importance configures importance sampling (Algorithm 2.1). The zero value is
// uniform sampling of agents and data: plain FedAvg.
type Importance struct {
	// Agents is the server's policy for p_k, Data the agents' policy for
	// p_n^(k).
	Agents, Data Policy
	// Probabilities are the p_k of the Fixed agent policy, one per agent.
	Probabilities []float64
	// RandomOrder puts the population in a random order before systematic
	// selection, as in Hartley and Rao's original scheme; the thesis selects
	// in index order.
	RandomOrder bool
	// Optimum is w^o, which the Optimal policies evaluate gradients at.
	Optimum []float64
}

// needsOptimum reports whether a policy evaluates gradients at w^o.
func (c *Importance) needsOptimum() bool { return c.Agents == Optimal || c.Data == Optimal }

// validate reports the first inconsistency of an importance-sampling set-up
// with the rest of the configuration.
func (c *Importance) validate(cfg *Config) error {
	switch {
	case c.Data == Fixed:
		return fmt.Errorf("data policy fixed is not supported: fixed probabilities are given per agent only")
	case c.Agents != Uniform && cfg.Participation == Full:
		return fmt.Errorf("agent policy %v needs partial participation: with full participation every p_k = 1/K", c.Agents)
	case c.Agents != Uniform && cfg.Participation == Poisson:
		return fmt.Errorf("agent policy %v draws a fixed number of agents with unequal probabilities: it does not apply to poisson participation", c.Agents)
	case (c.Agents == Optimal || c.Agents == Adaptive || c.Agents == Partial) && cfg.Schedule == PerRound:
		return fmt.Errorf("agent policy %v needs E_k and B_k fixed per agent (schedule per-agent): α_k = 3 + 6/(E_k B_k) enters p_k (eq. 2.49)", c.Agents)
	case c.needsOptimum() && len(c.Optimum) == 0:
		return fmt.Errorf("policy optimal needs w^o")
	case c.Agents != Fixed && len(c.Probabilities) > 0:
		return fmt.Errorf("probabilities are only used by the fixed agent policy")
	case c.Agents == Fixed:
		if err := checkProbabilities(c.Probabilities, cfg.Agents); err != nil {
			return err
		}
		positive := 0
		for _, v := range c.Probabilities {
			if v > 0 {
				positive++
			}
		}
		if cfg.Participation == WithoutReplacement && positive < cfg.Participants {
			return fmt.Errorf("fixed agent probabilities: only %d agents have a positive probability, fewer than the %d distinct participants per round", positive, cfg.Participants)
		}
	}
	return nil
}

// checkProbabilities checks a fixed probability vector for K agents.
func checkProbabilities(p []float64, agents int) error {
	if len(p) != agents {
		return fmt.Errorf("fixed agent probabilities: need one per agent (%d), got %d", agents, len(p))
	}
	var sum float64
	for k, v := range p {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("fixed agent probabilities: entry %d is %v, must be a non-negative number", k, v)
		}
		sum += v
	}
	// A list typed with a few decimals sums to one up to its rounding; 1e-9
	// accepts any float64 rounding and refuses every real mistake.
	if math.Abs(sum-1) > 1e-9 {
		return fmt.Errorf("fixed agent probabilities: sum to %v, must sum to 1", sum)
	}
	return nil
}

// Report is what an agent tells the server about its gradient noise at a
// model w: the norm of its (full or mini-batch) local gradient, its data
// variability σ²_{s,k} (eq. 2.25) and α_k = 3 + 6/(E_k B_k) (eq. 2.49). The
// server's adaptive agent probabilities are proportional to Weight.
type Report struct {
	GradNorm, Sigma2, Alpha float64
}

// Weight returns c_k = √(σ²_{s,k} + α_k‖∇J_k‖²), the unnormalized optimal
// agent probability of eqs. 2.48, 2.51 and 2.53.
func (r Report) Weight() float64 { return math.Sqrt(r.Sigma2 + r.Alpha*r.GradNorm*r.GradNorm) }

// alpha returns α_k of eq. 2.49.
func alpha(epochs, batch int) float64 { return 3 + 6/float64(epochs*batch) }

// dataVariance returns σ²_{s,k} of eq. 2.25,
// 6/(E_k B_k N_k²) Σ_n ‖∇Q_k(w; x_n)‖²/p_n, from the per-sample gradient
// norms at w and the data probabilities p (nil: uniform).
func dataVariance(norms, p []float64, epochs, batch int) float64 {
	N := float64(len(norms))
	var s float64
	for n, g := range norms {
		if p == nil {
			s += g * g * N
		} else if g != 0 {
			s += g * g / p[n]
		}
	}
	return 6 * s / (float64(epochs*batch) * N * N)
}

// sampleNorms sets norms[n] = ‖∇Q(w; x_n)‖ for every sample of set; scratch
// has the length of w.
func sampleNorms(norms []float64, l loss.Loss, w []float64, set *data.Set, scratch []float64) {
	l.SampleGradNorms(norms, w, set, scratch)
}

// sampleNorm returns ‖∇Q(w; x_n)‖, the gradient of the single sample n
// computed by the loss into scratch (loss.Loss.SampleGradNorm).
func sampleNorm(l loss.Loss, w []float64, set *data.Set, n int, scratch []float64) float64 {
	return l.SampleGradNorm(w, set, n, scratch)
}

// drawer draws a sample of a population with prescribed probabilities —
// agents at the server, data points at an agent — reusing its scratch.
type drawer struct {
	// replace makes independent draws (sampling.Weighted) instead of
	// distinct indices (sampling.Systematic with capped inclusion).
	replace bool
	// order is scratch for Hartley–Rao's random order; nil keeps the index
	// order.
	order []int
	incl  []float64 // inclusion probabilities, len = population
	u     []float64 // scratch of Weighted, len ≥ sample
}

func newDrawer(population, sample int, replace, randomOrder bool) *drawer {
	d := &drawer{replace: replace}
	if replace {
		d.u = make([]float64, sample)
	} else {
		d.incl = make([]float64, population)
		if randomOrder {
			d.order = make([]int, population)
		}
	}
	return d
}

// draw fills idx with len(idx) indices drawn with the probabilities p (which
// sum to one) and q[b] with the normalized probability of idx[b] that the
// estimator weighs by: p itself for independent draws, π/len(idx) for
// distinct ones, π being the inclusion probabilities capped at 1
// (sampling.Inclusion). It fails when fewer indices have a positive
// probability than the sample needs distinct indices.
func (d *drawer) draw(idx []int, q, p []float64, r *rand.Rand) error {
	if d.replace {
		sampling.Weighted(idx, p, d.u, r)
		for b, n := range idx {
			q[b] = p[n]
		}
		return nil
	}
	if err := sampling.Inclusion(d.incl, p, len(idx)); err != nil {
		return err
	}
	sampling.Systematic(idx, d.incl, d.order, r)
	for b, n := range idx {
		q[b] = d.incl[n] / float64(len(idx))
	}
	return nil
}

// estimatorWeights sets a[b] = 1/(B·N·q_b), the weight of sample idx[b] in
// the importance-weighted mini-batch gradient (1/B) Σ_b ∇Q(w; x_b)/(N p_b) of
// eq. 2.9.
func estimatorWeights(a, q []float64, n int) {
	B, N := float64(len(q)), float64(n)
	for b, v := range q {
		a[b] = 1 / (B * N * v)
	}
}

// NoiseBound returns the gradient-noise constant σ_s² of thesis eq. 2.23 at
// w^o — the term the steady-state MSD bound is O(μ) times (Theorem 2.1) —
// under uniform probabilities (p_k = 1/K, p_n = 1/N_k) and under the optimal
// ones of eqs. 2.46 and 2.48, for which it reduces to
// (1/(L K²)) (Σ_k √c_k)², c_k = σ²_{s,k} + α_k‖∇J_k(w^o)‖². Their ratio is
// what the thesis calls the improvement of the MSD bound. E_k and B_k are each
// agent's own, drawn from its schedule stream exactly as a run draws them,
// so cfg must use the PerAgent schedule. Without replacement the thesis's
// bound drops the 1/L; the ratio is the same.
func NoiseBound(cfg *Config, src data.Source, l loss.Loss, wOpt []float64, runSeed uint64) (uniform, optimal float64) {
	uniform, optimal, _ = NoiseBoundContext(context.Background(), cfg, src, l, wOpt, runSeed)
	return uniform, optimal
}

// NoiseBoundContext is NoiseBound, stopping with an error wrapping ctx.Err()
// once ctx is done; it checks ctx before every agent's share of the sums.
// It passes over the agents once (data.Fold), computing their terms on every
// core and summing them in agent order, a few chunks of agents' data held
// per core.
func NoiseBoundContext(ctx context.Context, cfg *Config, src data.Source, l loss.Loss, wOpt []float64, runSeed uint64) (uniform, optimal float64, err error) {
	var sum NoiseSum
	err = data.Fold(src, func(lo int, sets []*data.Set, out []NoiseTerm) {
		var s NoiseScratch
		for i, set := range sets {
			out[i] = cfg.NoiseTermWith(lo+i, set, l, wOpt, runSeed, &s)
		}
	}, func(_ int, _ *data.Set, t *NoiseTerm) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("importance sampling's noise bound: interrupted: %w", err)
		}
		sum.Add(*t)
		return nil
	})
	if err != nil {
		return 0, 0, err
	}
	uniform, optimal = sum.Bound(cfg)
	return uniform, optimal, nil
}

// NoiseTerm is one agent's share of NoiseBound: c_k under uniform data
// probabilities and √c_k under the optimal ones.
type NoiseTerm struct{ c, sqrtC float64 }

// NoiseTerm returns agent k's share of NoiseBound, from its dataset set and
// its E_k and B_k drawn from its schedule stream as a run draws them. It is
// safe for concurrent use.
func (cfg *Config) NoiseTerm(k int, set *data.Set, l loss.Loss, wOpt []float64, runSeed uint64) NoiseTerm {
	return cfg.NoiseTermWith(k, set, l, wOpt, runSeed, new(NoiseScratch))
}

// NoiseScratch is the work space of NoiseTermWith, one per goroutine: the
// schedule stream, reseeded for each agent, and the vectors of its
// gradient, sample norms and probabilities. The zero value is ready.
type NoiseScratch struct {
	src                     *rand.ChaCha8
	schedule                *rand.Rand
	g, scratch, norms, prob []float64
}

// NoiseTermWith is NoiseTerm in the work space s, which it reuses: the same
// term, bit for bit, without allocating for an agent once s has served one
// with as many samples. Give each goroutine its own s.
func (cfg *Config) NoiseTermWith(k int, set *data.Set, l loss.Loss, wOpt []float64, runSeed uint64, s *NoiseScratch) NoiseTerm {
	if s.src == nil {
		s.src = new(rand.ChaCha8)
		s.schedule = rand.New(s.src)
	}
	// Seed gives the generator rand.NewChaCha8 gives: the stream
	// rng.New(runSeed, AgentName(k), "schedule"), keyed without building
	// the name.
	s.src.Seed(rng.IndexedKey(runSeed, agentNamePrefix, "schedule", 0, k))
	epochs := sampling.IntInRange(cfg.Epochs.Min, cfg.Epochs.Max, s.schedule)
	batch := sampling.IntInRange(cfg.Batch.Min, cfg.Batch.Max, s.schedule)
	g, scratch := resize(&s.g, len(wOpt)), resize(&s.scratch, len(wOpt))
	norms, p := resize(&s.norms, set.Len()), resize(&s.prob, set.Len())
	l.NormsAndFullGrad(norms, g, wOpt, set, scratch)
	model := alpha(epochs, batch) * floats.Dot(g, g)
	sampling.Proportional(p, norms)
	return NoiseTerm{c: dataVariance(norms, nil, epochs, batch) + model, sqrtC: math.Sqrt(dataVariance(norms, p, epochs, batch) + model)}
}

// resize returns *v with length n, reallocated when its capacity is short;
// its values are left to the caller.
func resize(v *[]float64, n int) []float64 {
	if cap(*v) < n {
		*v = make([]float64, n)
	}
	*v = (*v)[:n]
	return *v
}

// NoiseSum adds up the agents' NoiseTerms, in agent order, for a caller
// that passes over the agents for more than NoiseBound.
type NoiseSum struct {
	sumC, sumSqrtC float64
	agents         int
}

// Add adds the next agent's term.
func (s *NoiseSum) Add(t NoiseTerm) {
	s.sumC += t.c
	s.sumSqrtC += t.sqrtC
	s.agents++
}

// Bound returns NoiseBound's σ_s² under uniform and under optimal
// probabilities from the terms of every agent.
func (s *NoiseSum) Bound(cfg *Config) (uniform, optimal float64) {
	K, L := float64(s.agents), float64(cfg.Draws())
	// uniform: (1/(L K²)) Σ_k K·c_k(uniform data); optimal: (1/(L K²)) (Σ √c_k)².
	return s.sumC / (L * K), s.sumSqrtC * s.sumSqrtC / (L * K * K)
}
