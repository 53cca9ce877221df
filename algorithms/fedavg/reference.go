package fedavg

import (
	"context"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/algorithms/sampling"
)

// Reference runs rounds rounds of the whole recursion without actors and calls
// observe with the global model after each round (observe must copy it to keep
// it). It is the oracle for the actor engine and the flat baseline of its
// benchmarks: written independently of Server and Agent, it draws from the
// same named streams in the same order, so it yields the same iterates. The
// replies of a round are combined by cfg.Rule (Combine), in slot order. It
// shares only the pure formulas of importance sampling with them (samplers,
// σ²_{s,k}, α_k, estimator weights).
//
// It fails on an invalid configuration, and when importance sampling without
// replacement becomes impossible (fewer positive probabilities than the
// sample needs), as the actor run does.
func Reference(cfg Config, sets []*data.Set, l loss.Loss, w0 []float64, runSeed uint64, rounds int, observe func(round int, w []float64)) error {
	return ReferenceContext(context.Background(), cfg, sets, l, w0, runSeed, rounds, observe)
}

// ReferenceContext is Reference, stopping with an error wrapping ctx.Err()
// once ctx is done: it checks ctx before every round and before every
// agent's probe of the adaptive policies (K·N sample gradients a round),
// and changes nothing else, so that a run that is not interrupted has
// Reference's iterates.
func ReferenceContext(ctx context.Context, cfg Config, sets []*data.Set, l loss.Loss, w0 []float64, runSeed uint64, rounds int, observe func(round int, w []float64)) error {
	interrupted := func(round int) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("round %d: interrupted: %w", round, err)
		}
		return nil
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	dim := len(w0)
	imp := &cfg.Importance
	type agentState struct {
		schedule, batch, noise *rand.Rand
		epochs, batchSize      int
		probs                  []float64 // data probabilities, nil when uniform
		drawer                 *drawer
	}
	agents := make([]agentState, cfg.Agents)
	scratch := make([]float64, dim)
	largest := 0
	for _, s := range sets {
		largest = max(largest, s.Len())
	}
	var norms, probeProbs []float64 // per-sample gradient norms and probabilities, scratch
	if imp.Data != Uniform || imp.Agents != Uniform {
		norms, probeProbs = make([]float64, largest), make([]float64, largest)
	}
	normsOf := func(w []float64, k int) []float64 {
		n := norms[:sets[k].Len()]
		sampleNorms(n, l, w, sets[k], scratch)
		return n
	}
	for k := range agents {
		a := &agents[k]
		a.schedule = rng.New(runSeed, AgentName(k), "schedule")
		a.batch = rng.New(runSeed, AgentName(k), "batch")
		if cfg.NoiseStd > 0 {
			a.noise = rng.New(runSeed, AgentName(k), "noise")
		}
		if cfg.Schedule == PerAgent {
			a.epochs = sampling.IntInRange(cfg.Epochs.Min, cfg.Epochs.Max, a.schedule)
			a.batchSize = sampling.IntInRange(cfg.Batch.Min, cfg.Batch.Max, a.schedule)
		}
		if imp.Data != Uniform {
			a.probs = make([]float64, sets[k].Len())
			a.drawer = newDrawer(sets[k].Len(), cfg.Batch.Max, cfg.BatchWithReplacement, imp.RandomOrder)
			if imp.Data == Optimal {
				sampling.Proportional(a.probs, normsOf(imp.Optimum, k)) // eq. 2.46
			} else {
				sampling.Uniform(a.probs)
			}
		}
	}
	participation := rng.New(runSeed, ServerName, "participation")
	var agentProbs, slotProbs, c []float64 // p_k, p of each slot, c_k
	var agentDrawer *drawer
	if imp.Agents != Uniform {
		agentProbs = make([]float64, cfg.Agents)
		slotProbs = make([]float64, cfg.Draws())
		c = make([]float64, max(cfg.Agents, cfg.Draws()))
		agentDrawer = newDrawer(cfg.Agents, cfg.Draws(), cfg.Participation == WithReplacement, imp.RandomOrder)
		if imp.Agents == Fixed {
			copy(agentProbs, imp.Probabilities)
		} else {
			sampling.Uniform(agentProbs)
		}
	}
	// probe sets p_k ∝ c_k(v) from every agent's gradient noise at v
	// (eqs. 2.48, 2.51), σ²_{s,k} with the data probabilities its policy
	// would use at v.
	probeGrad := make([]float64, dim)
	probe := func(v []float64, round int) error {
		for k := range agents {
			if err := interrupted(round); err != nil {
				return err
			}
			a := &agents[k]
			n := normsOf(v, k)
			p := a.probs
			if imp.Data == Adaptive {
				p = probeProbs[:len(n)]
				sampling.Proportional(p, n)
			}
			g := probeGrad
			l.FullGrad(g, v, sets[k])
			c[k] = Report{GradNorm: floats.Norm(g, 2), Sigma2: dataVariance(n, p, a.epochs, a.batchSize), Alpha: alpha(a.epochs, a.batchSize)}.Weight()
		}
		sampling.Proportional(agentProbs, c[:cfg.Agents])
		return nil
	}
	w := append([]float64(nil), w0...)
	draws := make([]int, cfg.Draws())
	replies := make([][]float64, len(draws))
	for s := range replies {
		replies[s] = make([]float64, dim)
	}
	var column []float64 // the combination's scratch
	local := make([]float64, dim)
	g := make([]float64, dim)
	idx := make([]int, cfg.Batch.Max)
	q := make([]float64, cfg.Batch.Max)
	weights := make([]float64, cfg.Batch.Max)
	for round := 1; round <= rounds; round++ {
		if err := interrupted(round); err != nil {
			return err
		}
		var err error
		switch {
		case imp.Agents == Optimal && round == 1:
			err = probe(imp.Optimum, round)
		case imp.Agents == Adaptive:
			err = probe(w, round)
		}
		if err != nil {
			return err
		}
		switch {
		case cfg.Participation == Full:
			for k := range draws {
				draws[k] = k
			}
		case agentProbs != nil:
			if err := agentDrawer.draw(draws, slotProbs, agentProbs, participation); err != nil {
				return fmt.Errorf("round %d: sampling %d agents: %w", round, len(draws), err)
			}
		case cfg.Participation == WithReplacement:
			sampling.WithReplacement(draws, cfg.Agents, participation)
		default:
			sampling.WithoutReplacement(draws, cfg.Agents, participation)
		}
		for slot, k := range draws {
			a := &agents[k]
			if cfg.Schedule == PerRound {
				a.epochs = sampling.IntInRange(cfg.Epochs.Min, cfg.Epochs.Max, a.schedule)
				a.batchSize = sampling.IntInRange(cfg.Batch.Min, cfg.Batch.Max, a.schedule)
			}
			mu := cfg.StepSize
			if cfg.Normalized {
				mu /= float64(a.epochs)
			}
			if agentProbs != nil {
				mu /= float64(cfg.Agents) * slotProbs[slot]
			}
			if imp.Data == Adaptive {
				sampling.Proportional(a.probs, normsOf(w, k))
			}
			if imp.Agents == Partial {
				n := norms[:sets[k].Len()]
				if imp.Data != Adaptive {
					n = normsOf(w, k)
				}
				c[slot] = dataVariance(n, a.probs, a.epochs, a.batchSize) // σ², completed below
			}
			copy(local, w)
			batch := idx[:a.batchSize]
			for e := 0; e < a.epochs; e++ {
				var wts []float64
				switch {
				case a.probs != nil:
					if err := a.drawer.draw(batch, q[:a.batchSize], a.probs, a.batch); err != nil {
						return fmt.Errorf("round %d, agent %d: drawing a mini-batch of %d: %w", round, k, a.batchSize, err)
					}
					wts = weights[:a.batchSize]
					estimatorWeights(wts, q[:a.batchSize], sets[k].Len())
				case cfg.BatchWithReplacement:
					sampling.WithReplacement(batch, sets[k].Len(), a.batch)
				default:
					sampling.WithoutReplacement(batch, sets[k].Len(), a.batch)
				}
				l.Grad(g, local, sets[k], batch, wts)
				if e == 0 && imp.Agents == Partial {
					c[slot] = Report{GradNorm: floats.Norm(g, 2), Sigma2: c[slot], Alpha: alpha(a.epochs, a.batchSize)}.Weight()
				}
				if imp.Data == Partial {
					bn := q[:a.batchSize]
					for b, n := range batch {
						bn[b] = sampleNorm(l, w, sets[k], n, scratch)
					}
					sampling.PartialUpdate(a.probs, batch, bn) // eq. 2.54
				}
				for j := range local {
					local[j] -= mu * g[j]
				}
			}
			reply := replies[slot]
			for j := range reply {
				if cfg.Share == Models {
					reply[j] = local[j]
				} else {
					reply[j] = (w[j] - local[j]) / cfg.StepSize
				}
			}
			if cfg.NoiseStd > 0 {
				cfg.Noise.Add(reply, cfg.NoiseStd, a.noise)
			}
		}
		column = Combine(&cfg, w, replies, column)
		if imp.Agents == Partial {
			sampling.PartialUpdate(agentProbs, draws, c[:len(draws)]) // eq. 2.53
		}
		observe(round, w)
	}
	return nil
}
