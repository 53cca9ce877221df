package fedplt

import (
	"fmt"
	"math"
	"math/rand/v2"

	"maple/algorithms/data"
	"maple/algorithms/rng"
)

// Problem is the learning problem of a run: the agents' data, their cost and
// the global moduli the default steps and the theory use.
type Problem struct {
	Obj  Objective
	Sets []*data.Set
	// Moduli are the global λ̲ = min_i λ̲_i and λ̄ = max_i λ̄_i.
	Moduli Moduli
}

// NewProblem computes the moduli of every agent's cost and returns the
// problem with the global ones.
func NewProblem(obj Objective, sets []*data.Set) *Problem {
	local := make([]Moduli, len(sets))
	for i, s := range sets {
		local[i] = obj.Moduli(s)
	}
	return &Problem{Obj: obj, Sets: sets, Moduli: GlobalModuli(local)}
}

// Dim returns the model dimension.
func (p *Problem) Dim() int { return p.Sets[0].Dim }

// Sizes returns q_i of every agent.
func (p *Problem) Sizes() []int {
	q := make([]int, len(p.Sets))
	for i, s := range p.Sets {
		q[i] = s.Len()
	}
	return q
}

// Streams opens the random stream of an owner (actor name) for a purpose:
// rng.New with the run seed in the reference, actors.Run.Rand for actors.
type Streams func(owner, purpose string) *rand.Rand

// SeededStreams returns the streams of the run with seed runSeed, as the
// reference opens them (the actor engine's Run.Rand gives the same ones).
func SeededStreams(runSeed uint64) Streams {
	return func(owner, purpose string) *rand.Rand { return rng.New(runSeed, owner, purpose) }
}

// InitialModels returns every agent's x_{i,0}: zero, or with PriorInit a
// draw from N(0, 2τ_i²/λ̲·I) from the agent's "init" stream (Proposition 4).
// Fed-PLT starts z_{i,0} = x_{i,0}; the baselines start their server model
// at the mean of the x_{i,0} and every auxiliary variable at 0.
func InitialModels(cfg *Config, p *Problem, open Streams) ([][]float64, error) {
	x0 := make([][]float64, cfg.Agents)
	for i := range x0 {
		x0[i] = make([]float64, p.Dim())
		if cfg.Init != PriorInit {
			continue
		}
		if p.Moduli.Low <= 0 {
			return nil, fieldErr("init", "the prior N(0, 2τ²/λ̲·I) needs strongly convex costs, but λ̲ = %.6g", p.Moduli.Low)
		}
		sd := cfg.Solvers[i].Rule.Traits().Noise * math.Sqrt(2/p.Moduli.Low)
		r := open(AgentName(i), "init")
		for j := range x0[i] {
			x0[i][j] = sd * r.NormFloat64()
		}
	}
	return x0, nil
}

// NewLocals returns the local solvers of every agent, which open the
// agent's streams ("batch" for SGD, "noise" for noisy GD) from open, as
// both engines create them.
func NewLocals(cfg *Config, p *Problem, open Streams) []*Local {
	locals := make([]*Local, cfg.Agents)
	for i, s := range cfg.Solvers {
		locals[i] = NewLocal(s, p.Obj, p.Sets[i], p.Moduli, cfg.Shift(), i, open)
	}
	return locals
}

// NewCoordinatorSampler returns the coordinator's participation sampler with
// the streams it draws from.
func NewCoordinatorSampler(cfg *Config, open Streams) *Sampler {
	var part, probs *rand.Rand
	usePart, useProbs := cfg.Participation.Streams()
	if usePart {
		part = open(CoordinatorName, "participation")
	}
	if useProbs {
		probs = open(CoordinatorName, "probabilities")
	}
	return NewSampler(cfg.Participation, cfg.Agents, part, probs)
}

// mean sets dst to the mean of vs[i] over the indices idx, in ascending
// order of idx, or over all of vs when idx is nil.
func mean(dst []float64, vs [][]float64, idx []int) {
	clear(dst)
	n := len(vs)
	if idx != nil {
		n = len(idx)
		for _, i := range idx {
			for j, v := range vs[i] {
				dst[j] += v
			}
		}
	} else {
		for _, x := range vs {
			for j, v := range x {
				dst[j] += v
			}
		}
	}
	inv := 1 / float64(n)
	for j := range dst {
		dst[j] *= inv
	}
}

// errNoAgent reports a reply from an index outside the run.
func errNoAgent(i, n int) error { return fmt.Errorf("reply from agent %d of %d", i, n) }
