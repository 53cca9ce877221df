package fedplt

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/sampling"
)

// A local problem is what an agent's solver minimizes in a round,
//
//	d(w) = f_i(w) + (c/2)‖w‖² + ⟨b, w⟩,  ∇d(w) = ∇f_i(w) + c·w + b,
//
// which covers every method of the family: Fed-PLT's prox subproblem
// (c = 1/ρ, b = −(2y − z_i)/ρ), FedPD's augmented Lagrangian (c = 1/η,
// b = λ_i − x_{0,i}/η), the gradient corrections of FedLin, TAMUNA and LED
// (c = 0) and 5GCS's dual subproblem (c = τ − μ/N). Its curvature lies in
// [λ̲ + c, λ̄ + c], with c the method's Config.Shift.

// LocalSolver is an agent's local solver: the behaviour of the slot
// fedplt.solver, which actors/fedplt registers and scenario files select
// with algorithm.fedplt.solver. A solver is a value of its parameters (a
// struct embedding StepSize, with the yaml, range and doc tags of package
// internal/params); it keeps no state between rounds, its scratch space and
// random streams being the LocalProblem's. The agents of both engines run
// the same Local, which calls Run, so a registered solver runs alike on
// both.
type LocalSolver interface {
	// Steps returns the step parameters every solver has (embed StepSize).
	Steps() StepSize
	// Traits declares what a method may require of the solver (see
	// Method.Refuses).
	Traits() Traits
	// DefaultStep returns the step γ the solver takes when the scenario
	// gives none, on a local problem whose curvature lies in k.
	DefaultStep(k Moduli) float64
	// StepBound returns the largest stable step on a local problem whose
	// curvature lies in k; strict reports whether the bound itself is
	// excluded. Config.Resolve refuses larger steps.
	StepBound(k Moduli) (bound float64, strict bool)
	// Run carries out steps iterations of step gamma on the local problem
	// p from w, leaving the result in w, and returns the number of local
	// gradients computed, for the cost ledger.
	Run(p *LocalProblem, w []float64, gamma float64, steps int) int
}

// StepSize holds the step parameters every local solver embeds (inline).
type StepSize struct {
	Step  float64 `yaml:"step" range:"[0, inf)" doc:"γ; 0 selects step_scale times the solver's default step on each run's data"`
	Scale float64 `yaml:"step_scale" range:"[0, inf)" doc:"multiplies the default step when step is 0 (0 means 1)"`
}

// Steps implements LocalSolver for a solver that embeds StepSize.
func (s StepSize) Steps() StepSize { return s }

// Traits are the properties of a local solver a method can require.
type Traits struct {
	// Momentum reports that a step depends on iterates before w (heavy
	// ball, Nesterov): the gradient-corrected baselines assume memoryless
	// gradient steps and refuse it.
	Momentum bool
	// Private reports that the solver is Fed-PLT's privacy mechanism:
	// Gaussian noise √(2γ)·τ·N(0, I) added at every step (eq. 13), with the
	// data term's per-sample gradients clipped to norm Clip/2 (0: none).
	// Only Fed-PLT accounts for it (Proposition 4); the baselines refuse it.
	Private bool
	// Noise is τ and Clip is L of a Private solver.
	Noise, Clip float64
}

// Checker is a LocalSolver with conditions on the local problem: Check
// returns a *params.Error naming the parameter (or "kind" for the solver
// itself) when the problem's curvature range k or the agent's samples rule
// the solver out. Config.Resolve calls it.
type Checker interface {
	Check(k Moduli, samples int) error
}

// Contractor is a LocalSolver whose steps contract the error of Fed-PLT's
// local problem (c = 1/ρ) by a known factor: chiSteps for steps of them and
// chi for one. Fed-PLT's theory (Analyze) needs it; a solver without it,
// such as SGD, gets no theory report.
type Contractor interface {
	Contraction(gamma float64, steps int, rho float64, m Moduli) (chiSteps, chi float64)
}

// Solver is one agent's local solver in a configuration.
type Solver struct {
	// Name is the solver's registered name, for messages.
	Name string
	// Rule is the solver with its parameters.
	Rule LocalSolver
	// Step is γ: Rule's step, or, when that is 0, its scale times its
	// default step, set by Config.Resolve.
	Step float64
}

// LocalProblem is what a solver sees of its agent: the local problem's
// curvature range, its gradients, the agent's random streams and scratch
// space. It belongs to one agent (or to the reference's copy of it).
type LocalProblem struct {
	// Curvature bounds the curvature of the local problem: [λ̲ + c, λ̄ + c].
	Curvature Moduli

	obj     Objective
	set     *data.Set
	c       float64
	b       []float64
	owner   string
	open    Streams
	streams map[string]*rand.Rand
	scratch [][]float64
	idx     []int
}

// Grad sets g to ∇d(w) on the agent's whole data set. g must not alias w.
func (p *LocalProblem) Grad(g, w []float64) {
	p.obj.Grad(g, w, p.set)
	p.finish(g, w)
}

// BatchGrad sets g to the estimate of ∇d(w) on a mini-batch of size
// samples drawn without replacement from stream.
func (p *LocalProblem) BatchGrad(g, w []float64, size int, stream *rand.Rand) {
	if cap(p.idx) < size {
		p.idx = make([]int, size)
	}
	idx := p.idx[:size]
	sampling.WithoutReplacement(idx, p.set.Len(), stream)
	p.obj.BatchGrad(g, w, p.set, idx)
	p.finish(g, w)
}

// ClippedGrad sets g to ∇d(w) with every per-sample gradient of the data
// term clipped to norm bound; scratch is a vector of the model's dimension
// it may overwrite.
func (p *LocalProblem) ClippedGrad(g, w []float64, bound float64, scratch []float64) {
	p.obj.ClippedGrad(g, w, p.set, bound, scratch)
	p.finish(g, w)
}

// finish adds c·w + b to the gradient of f_i in g.
func (p *LocalProblem) finish(g, w []float64) {
	if p.c != 0 {
		floats.AddScaled(g, p.c, w)
	}
	if p.b != nil {
		floats.Add(g, p.b)
	}
}

// Rand returns the agent's random stream for purpose ("batch", "noise", …),
// derived from the run seed, the agent's name and purpose: the same on
// both engines, and independent of every other stream.
func (p *LocalProblem) Rand(purpose string) *rand.Rand {
	r, ok := p.streams[purpose]
	if !ok {
		r = p.open(p.owner, purpose)
		p.streams[purpose] = r
	}
	return r
}

// Scratch returns the k-th scratch vector of the model's dimension, kept
// between rounds (its contents are not cleared): solvers use scratch 0, 1,
// … for their own vectors, so that a round allocates nothing.
func (p *LocalProblem) Scratch(k int) []float64 {
	for len(p.scratch) <= k {
		p.scratch = append(p.scratch, make([]float64, p.set.Dim))
	}
	return p.scratch[k]
}

// Local is one agent's local solver with its local problem: its
// configuration, data, random streams and scratch space. It is owned by one
// agent (or by the reference).
type Local struct {
	cfg Solver
	p   LocalProblem
}

// NewLocal returns the local solver cfg (with its step resolved, see
// Config.Resolve) of agent i holding set, for local problems with curvature
// shift c on costs with moduli m; open opens the agent's random streams.
func NewLocal(cfg Solver, obj Objective, set *data.Set, m Moduli, c float64, i int, open Streams) *Local {
	return &Local{cfg: cfg, p: LocalProblem{
		Curvature: Moduli{Low: m.Low + c, High: m.High + c},
		obj:       obj, set: set, owner: AgentName(i), open: open,
		streams: map[string]*rand.Rand{},
	}}
}

// Run carries out steps iterations of the solver on d(w) = f_i(w) +
// (c/2)‖w‖² + ⟨b, w⟩ (b nil for 0), starting from w and leaving the result in
// w. It returns the number of local gradients computed, for the cost ledger.
func (l *Local) Run(w []float64, c float64, b []float64, steps int) int {
	l.p.c, l.p.b = c, b
	return l.cfg.Rule.Run(&l.p, w, l.cfg.Step, steps)
}
