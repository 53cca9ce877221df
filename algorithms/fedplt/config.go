package fedplt

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"maple/internal/enum"
	"maple/internal/params"
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

// Participations lists the participation models the method supports (the
// paper's Table I and its "--" entries).
func (m Method) Participations() []ParticipationKind {
	switch m {
	case PLT:
		return []ParticipationKind{Full, Bernoulli, Subset}
	case Tamuna, FiveGCS:
		return []ParticipationKind{Full, Subset}
	}
	return []ParticipationKind{Full}
}

// Refuses returns why the method cannot run a local solver with traits t
// (the paper's Table I and its "--" entries), or "" if it can: only Fed-PLT
// accounts for the noisy-GD privacy mechanism, and the gradient-corrected
// baselines FedPD, FedLin, TAMUNA and LED assume memoryless local steps.
func (m Method) Refuses(t Traits) string {
	switch {
	case m == PLT:
		return ""
	case t.Private:
		return "it is Fed-PLT's privacy mechanism, which only Fed-PLT accounts for"
	case t.Momentum && m != FiveGCS:
		return "its steps carry momentum, and " + m.Label() + "'s corrections assume memoryless gradient steps"
	}
	return ""
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
	parts := c.Method.Participations()
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
		if s.Rule == nil {
			return fieldErr(SolverField(i, "kind"), "no local solver")
		}
		if why := c.Method.Refuses(s.Rule.Traits()); why != "" {
			return fieldErr(SolverField(i, "kind"), "%s does not support the %s local solver: %s", c.Method.Label(), s.Name, why)
		}
		var pe *params.Error
		if err := params.Check(s.Rule); errors.As(err, &pe) {
			return fieldErr(SolverField(i, pe.Param), "%s", pe.Msg)
		}
		if !(s.Step >= 0) || math.IsInf(s.Step, 1) {
			return fieldErr(SolverField(i, "step"), "must be finite and non-negative (0: the default step), got %v", s.Step)
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
