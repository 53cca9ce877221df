package fedplt

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"maple/internal/enum"
)

// CoordinatorName is the actor name (and random-stream owner) of the coordinator.
const CoordinatorName = "coordinator"

// AgentName returns the actor name (and random-stream owner) of agent i.
func AgentName(i int) string { return "agent/" + strconv.Itoa(i) }

// Method selects the algorithm a run executes.
type Method int

const (
	// PLT is Fed-PLT, Algorithm 1 of the paper.
	PLT Method = iota
	// FedPD is the primal–dual method of Zhang et al. (IEEE TSP 2021).
	FedPD
	// FedLin is the gradient-corrected method of Mitra et al. (NeurIPS 2021).
	FedLin
	// Tamuna is TAMUNA of Condat et al. (2023), without compression.
	Tamuna
	// LED is Local Exact-Diffusion (Alghunaim 2023) on the complete graph.
	LED
	// FiveGCS is 5GCS of Grudzień, Malinovsky and Richtárik (AISTATS 2023).
	FiveGCS
)

var methodNames = enum.Of[Method]("method", "fed-plt", "fedpd", "fedlin", "tamuna", "led", "5gcs")

// String returns the scenario-file name of the method.
func (m Method) String() string { return methodNames.String(m) }

// ParseMethod returns the method named s.
func ParseMethod(s string) (Method, error) { return methodNames.Parse(s) }

// Label returns the method's name as the paper prints it.
func (m Method) Label() string {
	return [...]string{"Fed-PLT", "FedPD", "FedLin", "TAMUNA", "LED", "5GCS"}[m]
}

// SolverKind selects an agent's local solver.
type SolverKind int

const (
	// GD is gradient descent (eq. 11).
	GD SolverKind = iota
	// AGD is Nesterov's accelerated gradient descent (eq. 12).
	AGD
	// SGD is mini-batch stochastic gradient descent.
	SGD
	// NoisyGD is gradient descent with Gaussian noise √(2γ)·τ·N(0, I) added
	// at every step (eq. 13), the privacy mechanism of Fed-PLT.
	NoisyGD
)

var solverNames = enum.Of[SolverKind]("solver", "gd", "agd", "sgd", "noisy-gd")

// String returns the scenario-file name of the solver.
func (k SolverKind) String() string { return solverNames.String(k) }

// ParseSolverKind returns the solver named s.
func ParseSolverKind(s string) (SolverKind, error) { return solverNames.Parse(s) }

// Solver configures one agent's local solver.
type Solver struct {
	Kind SolverKind
	// Step is γ; 0 selects Scale times the default step of the local
	// problem (DefaultStep).
	Step float64
	// Scale multiplies the default step when Step is 0 (1 when unset).
	Scale float64
	// Batch is the mini-batch size of SGD.
	Batch int
	// Noise is τ, the standard deviation scale of noisy GD.
	Noise float64
	// Clip is L: noisy GD clips every per-sample gradient of the data term to
	// norm L/2 (0: no clipping).
	Clip float64
}

// ParticipationKind is how the coordinator picks the active agents of a round.
type ParticipationKind int

const (
	// Full activates every agent in every round.
	Full ParticipationKind = iota
	// Bernoulli activates agent i independently with probability p_i
	// (Assumption 2, the theory's model).
	Bernoulli
	// Subset activates a uniformly random subset of fixed size (the paper's
	// experiments).
	Subset
)

var participationNames = enum.Of[ParticipationKind]("participation", "full", "bernoulli", "subset")

// String returns the scenario-file name of the participation model.
func (k ParticipationKind) String() string { return participationNames.String(k) }

// ParseParticipation returns the participation model named s.
func ParseParticipation(s string) (ParticipationKind, error) { return participationNames.Parse(s) }

// Participation configures the active sets.
type Participation struct {
	Kind ParticipationKind
	// ProbMin and ProbMax bound the p_i of Bernoulli participation, drawn
	// uniformly per agent from the coordinator's "probabilities" stream (one
	// value when they are equal).
	ProbMin, ProbMax float64
	// Active is the size of a Subset.
	Active int
}

// ProxKind selects the common regularizer h.
type ProxKind int

const (
	// Zero is h = 0: the coordinator step is a plain average.
	Zero ProxKind = iota
	// L1 is h = Weight·‖x‖₁ (soft thresholding).
	L1
	// Box is the indicator of [Low, High]^n (projection).
	Box
)

var proxNames = enum.Of[ProxKind]("regularizer", "zero", "l1", "box")

// String returns the scenario-file name of the regularizer.
func (k ProxKind) String() string { return proxNames.String(k) }

// ParseProx returns the regularizer named s.
func ParseProx(s string) (ProxKind, error) { return proxNames.Parse(s) }

// Prox configures h.
type Prox struct {
	Kind ProxKind
	// Weight is λ₁ of h = λ₁‖x‖₁.
	Weight float64
	// Low and High bound the box.
	Low, High float64
}

// Init selects the agents' initial models.
type Init int

const (
	// ZeroInit starts every model (and every auxiliary variable) at 0.
	ZeroInit Init = iota
	// PriorInit draws x_{i,0} ~ N(0, 2τ²/λ̲·I) from agent i's "init" stream,
	// as Proposition 4 requires, with z_{i,0} = x_{i,0}.
	PriorInit
)

var initNames = enum.Of[Init]("init", "zero", "prior")

// String returns the scenario-file name of the initialization.
func (i Init) String() string { return initNames.String(i) }

// ParseInit returns the initialization named s.
func ParseInit(s string) (Init, error) { return initNames.Parse(s) }

// Costs are the unit costs of the ledger (§VII): t_G per local gradient and
// t_C per agent–coordinator round trip.
type Costs struct {
	Gradient, Communication float64
}

// Config is one run's configuration. Validate checks what does not depend on
// the data; Resolve checks the step sizes against the moduli of the data.
type Config struct {
	Method Method
	// Agents is N.
	Agents int
	// Epochs is N_e, the local solver steps per round (the mean of TAMUNA's
	// geometric L^r).
	Epochs int
	// Rho is ρ, Fed-PLT's penalty.
	Rho float64
	// Solvers holds agent i's local solver at index i.
	Solvers []Solver
	// Participation is the active-set model.
	Participation Participation
	// Prox is h.
	Prox Prox
	// Init selects the initial models.
	Init Init
	// Costs are the ledger's unit costs.
	Costs Costs
	// FedPDEta is FedPD's η (the augmented-Lagrangian penalty 1/η).
	FedPDEta float64
	// TamunaEta is TAMUNA's control-variate step η.
	TamunaEta float64
	// LEDBeta is LED's β.
	LEDBeta float64
	// FiveGCS holds 5GCS's server step γ, dual step τ and split μ.
	FiveGCS FiveGCSParams
}

// FiveGCSParams are the parameters of 5GCS.
type FiveGCSParams struct {
	// Gamma is the server step γ, Tau the dual step τ, and Mu the strong
	// convexity μ moved into the server's prox: F_m = f_m − μ/(2N)‖·‖².
	Gamma, Tau, Mu float64
}

// Capabilities reports which solvers and participation models a method
// supports (the paper's Table I and its "--" entries).
func (m Method) Capabilities() (solvers []SolverKind, participation []ParticipationKind) {
	switch m {
	case PLT:
		return []SolverKind{GD, AGD, SGD, NoisyGD}, []ParticipationKind{Full, Bernoulli, Subset}
	case Tamuna:
		return []SolverKind{GD, SGD}, []ParticipationKind{Full, Subset}
	case FiveGCS:
		return []SolverKind{GD, AGD, SGD}, []ParticipationKind{Full, Subset}
	}
	return []SolverKind{GD, SGD}, []ParticipationKind{Full}
}

// FieldError is a configuration error about one field, named by its path
// below the family's parameter section ("rho", "solvers[3].step", …).
type FieldError struct {
	Field string
	Msg   string
}

// Error implements error.
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// SolverField names solver i's field in errors: the runner maps it to the
// scenario field it came from.
func SolverField(i int, field string) string {
	return "solvers[" + strconv.Itoa(i) + "]." + field
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// Validate reports the first impossible setting that does not depend on the
// data, as a *FieldError.
func (c *Config) Validate() error {
	solvers, parts := c.Method.Capabilities()
	switch {
	case c.Agents < 1:
		return fieldErr("agents", "need at least one agent, got %d", c.Agents)
	case c.Epochs < 1:
		return fieldErr("local_epochs", "must be at least 1, got %d", c.Epochs)
	case c.Method == PLT && !positive(c.Rho):
		return fieldErr("rho", "must be positive and finite, got %v", c.Rho)
	case len(c.Solvers) != c.Agents:
		return fieldErr("solvers", "need one solver per agent, got %d for %d agents", len(c.Solvers), c.Agents)
	case !(c.Costs.Gradient >= 0) || math.IsInf(c.Costs.Gradient, 1):
		return fieldErr("cost.gradient", "must be finite and non-negative, got %v", c.Costs.Gradient)
	case !(c.Costs.Communication >= 0) || math.IsInf(c.Costs.Communication, 1):
		return fieldErr("cost.communication", "must be finite and non-negative, got %v", c.Costs.Communication)
	}
	if !slices.Contains(parts, c.Participation.Kind) {
		return fieldErr("participation.kind", "%s does not support %s participation (supported: %v)", c.Method.Label(), c.Participation.Kind, parts)
	}
	switch p := c.Participation; p.Kind {
	case Bernoulli:
		if !(p.ProbMin > 0 && p.ProbMin <= p.ProbMax && p.ProbMax <= 1) {
			return fieldErr("participation.probability", "need 0 < min ≤ max ≤ 1, got [%v, %v]", p.ProbMin, p.ProbMax)
		}
	case Subset:
		if p.Active < 1 || p.Active > c.Agents {
			return fieldErr("participation.fraction", "selects %d of %d agents; need at least 1", p.Active, c.Agents)
		}
	}
	for i, s := range c.Solvers {
		if !slices.Contains(solvers, s.Kind) {
			return fieldErr(SolverField(i, "kind"), "%s does not support the %s local solver (supported: %v)", c.Method.Label(), s.Kind, solvers)
		}
		if err := s.validate(i); err != nil {
			return err
		}
		if c.Method != PLT && s != c.Solvers[0] {
			return fieldErr(SolverField(i, "kind"), "%s needs the same local solver at every agent; per-agent solvers are a Fed-PLT feature (Remark 1)", c.Method.Label())
		}
	}
	if c.Init == PriorInit && c.Method != PLT {
		return fieldErr("init", "the prior initialization of Proposition 4 is a Fed-PLT setting")
	}
	switch c.Prox.Kind {
	case L1:
		if !(c.Prox.Weight >= 0) || math.IsInf(c.Prox.Weight, 1) {
			return fieldErr("regularizer.weight", "must be finite and non-negative, got %v", c.Prox.Weight)
		}
	case Box:
		if !(c.Prox.Low < c.Prox.High) {
			return fieldErr("regularizer.low", "need low < high, got [%v, %v]", c.Prox.Low, c.Prox.High)
		}
	}
	if c.Prox.Kind != Zero && c.Method != PLT {
		return fieldErr("regularizer.kind", "a non-smooth h is handled by Fed-PLT's coordinator prox only; %s solves smooth problems", c.Method.Label())
	}
	return c.validateBaseline()
}

func (c *Config) validateBaseline() error {
	switch c.Method {
	case FedPD:
		if !positive(c.FedPDEta) {
			return fieldErr("fedpd.eta", "must be positive and finite, got %v", c.FedPDEta)
		}
	case Tamuna:
		if !positive(c.TamunaEta) {
			return fieldErr("tamuna.eta", "must be positive and finite, got %v", c.TamunaEta)
		}
	case LED:
		if !positive(c.LEDBeta) {
			return fieldErr("led.beta", "must be positive and finite, got %v", c.LEDBeta)
		}
	case FiveGCS:
		p := c.FiveGCS
		switch {
		case !positive(p.Gamma):
			return fieldErr("5gcs.gamma", "must be positive and finite, got %v", p.Gamma)
		case !positive(p.Tau):
			return fieldErr("5gcs.tau", "must be positive and finite, got %v", p.Tau)
		case !(p.Mu >= 0) || math.IsInf(p.Mu, 1):
			return fieldErr("5gcs.mu", "must be finite and non-negative, got %v", p.Mu)
		}
	}
	return nil
}

func (s Solver) validate(i int) error {
	switch {
	case !(s.Step >= 0) || math.IsInf(s.Step, 1):
		return fieldErr(SolverField(i, "step"), "must be finite and non-negative (0: the default step), got %v", s.Step)
	case !(s.Scale >= 0) || math.IsInf(s.Scale, 1):
		return fieldErr(SolverField(i, "step_scale"), "must be finite and positive, got %v", s.Scale)
	case s.Kind == SGD && s.Batch < 1:
		return fieldErr(SolverField(i, "batch"), "SGD needs a batch of at least 1 sample, got %d", s.Batch)
	case s.Kind == NoisyGD && (!(s.Noise >= 0) || math.IsInf(s.Noise, 1)):
		return fieldErr(SolverField(i, "noise"), "must be finite and non-negative, got %v", s.Noise)
	case s.Kind == NoisyGD && (!(s.Clip >= 0) || math.IsInf(s.Clip, 1)):
		return fieldErr(SolverField(i, "clip"), "must be finite and non-negative, got %v", s.Clip)
	}
	return nil
}
