package fedplt

import (
	"maple/algorithms/fedplt"
	"maple/internal/params"
)

// SolverSlot is the behaviour slot of the agents' local solvers (package
// internal/params): scenario files select one with algorithm.fedplt.solver
// (and per agent with algorithm.fedplt.solvers).
const SolverSlot = "fedplt.solver"

// Solvers is the registry of local solvers: each is registered as the
// struct of its parameters at their defaults (embedding fedplt.StepSize),
// which implements fedplt.LocalSolver; the run's fedplt.Config carries each
// agent's, with its values, and the agents of both engines run it through
// fedplt.Local.
var Solvers = params.Registry[fedplt.LocalSolver]{Slot: SolverSlot}

// defaultStep is every built-in solver's step: its default step, unscaled.
var defaultStep = fedplt.StepSize{Scale: 1}

func init() {
	Solvers.Register("gd", "gradient descent (eq. 11)", fedplt.GD{StepSize: defaultStep})
	Solvers.Register("agd", "Nesterov's accelerated gradient descent (eq. 12)", fedplt.AGD{StepSize: defaultStep})
	Solvers.Register("sgd", "mini-batch SGD, batches drawn without replacement and redrawn every step", fedplt.SGD{StepSize: defaultStep, Batch: 1})
	Solvers.Register("noisy-gd", "gradient descent plus √(2γ)·τ·N(0, I) every step (eq. 13), Fed-PLT's privacy mechanism", fedplt.NoisyGD{StepSize: defaultStep})
}
