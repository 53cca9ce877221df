// Package fedplt is the scenario glue of Fed-PLT (seed 004) and its
// baselines FedPD, FedLin, TAMUNA, LED and 5GCS, with the paper's table
// cells that maple table prints. It registers the family fedplt with the
// runner.
package fedplt

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"

	"maple/actors"
	afedplt "maple/actors/fedplt"
	"maple/actors/msg"
	"maple/algorithms/fedplt"
	"maple/privacy/renyi"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

func init() {
	run.Register(run.Family{
		Family: scenarios.Family{
			Kind:     "fedplt",
			Summary:  "Fed-PLT (Peaceman–Rachford local training with partial participation and noisy-GD privacy, seed 004) and its baselines FedPD, FedLin, TAMUNA, LED and 5GCS",
			Schemes:  []string{"none"},
			Defaults: fedpltDefaults,
			Validate: validateFedPLT,
			Audit: &scenarios.AuditSupport{Methods: []string{scenarios.AuditManyRun},
				Canaries: []string{canaryLabel}, Views: []string{viewFinal}},
		},
		Check:    func(c *scenarios.CurveSpec, _ string) error { _, err := fedpltConfig(c); return err },
		Columns:  fedpltColumns,
		Run:      runFedPLT,
		Estimate: fedpltEstimate,
		Tiny: []string{`name: tiny
seed: 3
runs: 2
iterations: 8
data: {agents: 6, samples: [8, 12], dim: 2}
algorithm: {kind: fedplt}
output: {plot: false, steady_state: 0.5}
`, `name: tiny-audit
seed: 3
runs: 4
iterations: 5
data: {agents: 3, samples: [8, 12], dim: 2}
algorithm:
  kind: fedplt
  fedplt:
    init: prior
    tolerance: 0
    solver: {kind: noisy-gd, noise: 0.3}
    accountant: {sensitivity: 2}
privacy: {audit: {method: many-run}}
output: {plot: false, steady_state: 0.5}
`},
	})
}

// fedpltEstimate is the cost of one run, with every agent active (full
// participation bounds the others): per round each agent's local epochs,
// each a gradient on its samples (a mini-batch for a solver with a batch
// parameter, such as sgd; the most of the per-agent solvers), and the monitor's pass over all the data; up to
// four messages per agent (FedLin's round sends the most) and a Tick and a
// Done; every agent an actor holding a handful of model-sized vectors.
func fedpltEstimate(sc *scenarios.Scenario, md run.Model) run.Estimate {
	f, d := fedpltParams(sc), md.Dim
	N, q, T := float64(sc.Data.Agents), float64(sc.Data.Samples.Max), float64(sc.Iterations)
	per := samplesPerGradient(f.Solver, q)
	for _, s := range f.Solvers {
		per = max(per, samplesPerGradient(s.Solver, q))
	}
	epochs := float64(max(f.LocalEpochs, 1))
	e := run.Estimate{
		Bytes:       N * (run.ActorBytes + 8*d*8),
		Ops:         T * N * (epochs*(per*md.SampleOps+10*d) + q*md.SampleOps),
		Messages:    1 + T*(2+4*N),
		RecordBytes: 150,
		VectorLen:   d,
		Drivers:     []run.Driver{{Field: pltField + "local_epochs", Ratio: epochs / 5}},
	}
	if sc.Privacy.Audit != nil {
		// The auditor's state of D = 2nN coordinates: four D×D matrices
		// (M, Q, the covariance and scratch), two products of them per
		// round and a Cholesky factorization of the final models' block.
		D := 2 * d * N
		e.Bytes += 4 * D * D * 8
		e.Ops += T * (4*D*D*D + D*D*D/24)
	}
	return e
}

// samplesPerGradient is the number of samples a local gradient of solver b
// reads, of an agent's q: its batch parameter if it has one, else q.
func samplesPerGradient(b scenarios.Behaviour, q float64) float64 {
	if batch, ok := b.Params["batch"].(int); ok && batch > 0 {
		return min(q, float64(batch))
	}
	return q
}

// FedPLT parameterizes the fedplt family: the section algorithm.fedplt.
type FedPLT struct {
	// Method is fed-plt, fedpd, fedlin, tamuna, led or 5gcs.
	Method string `yaml:"method"`
	// Rho is Fed-PLT's penalty ρ.
	Rho float64 `yaml:"rho"`
	// LocalEpochs is N_e, the local solver steps per round (TAMUNA: their mean).
	LocalEpochs int `yaml:"local_epochs"`
	// Solver is every agent's local solver, unless Solvers overrides it: a
	// behaviour of the slot fedplt.solver (actors/fedplt.Solvers).
	Solver scenarios.Behaviour `yaml:"solver" slot:"fedplt.solver"`
	// Solvers gives ranges of agents other solvers (Fed-PLT only, Remark 1);
	// a later entry wins.
	Solvers []PLTAgentSolver `yaml:"solvers,omitempty"`
	// Participation is the active-set model.
	Participation PLTParticipation `yaml:"participation"`
	// Regularizer is the common, possibly non-smooth h (Fed-PLT only).
	Regularizer PLTRegularizer `yaml:"regularizer"`
	// Nonconvex is ε of the non-convex regularizer ε Σ_k x_k²/(1 + x_k²).
	Nonconvex float64 `yaml:"nonconvex"`
	// Init is zero or prior (x_{i,0} ~ N(0, 2τ²/λ̲·I), Proposition 4).
	Init string `yaml:"init"`
	// Tolerance stops a run at the first round with ‖Σ_i ∇f_i(x̄)‖² ≤
	// tolerance (0: never).
	Tolerance float64 `yaml:"tolerance"`
	// Cost holds the ledger's unit costs t_G and t_C.
	Cost PLTCost `yaml:"cost"`
	// FedPD, Tamuna, LED and FiveGCS hold the baselines' parameters.
	FedPD   PLTFedPD   `yaml:"fedpd"`
	Tamuna  PLTTamuna  `yaml:"tamuna"`
	LED     PLTLED     `yaml:"led"`
	FiveGCS PLTFiveGCS `yaml:"5gcs"`
	// Accountant configures the Rényi-DP report of noisy GD.
	Accountant PLTAccountant `yaml:"accountant"`
	// Table places the curve in a paper table for maple table.
	Table *PLTTableCell `yaml:"table,omitempty"`
}

// PLTAgentSolver is a local solver for a range of agents: in a file, one
// mapping of agents and the solver's kind and parameters,
// {agents: [0, 9], kind: sgd, batch: 5}.
type PLTAgentSolver struct {
	// Agents is the range of agent indices [first, last] the solver applies to.
	Agents scenarios.IntRange `yaml:"agents"`
	// Solver is the solver, of the slot fedplt.solver; its parameters the
	// entry does not set take their defaults.
	Solver scenarios.Behaviour `yaml:",inline" slot:"fedplt.solver"`
}

// UnmarshalYAML decodes the entry's agents and its solver.
func (s *PLTAgentSolver) UnmarshalYAML(n *yaml.Node) error {
	return scenarios.DecodeWithBehaviour(n, s)
}

// MarshalYAML writes the entry as one mapping of its agents and its solver.
func (s PLTAgentSolver) MarshalYAML() (any, error) { return scenarios.EncodeWithBehaviour(s) }

// PLTParticipation configures the active sets.
type PLTParticipation struct {
	// Kind is full, bernoulli or subset.
	Kind string `yaml:"kind"`
	// Probability is the range the p_i of bernoulli are drawn from.
	Probability scenarios.FloatRange `yaml:"probability"`
	// Fraction is the share of agents a subset activates (rounded).
	Fraction float64 `yaml:"fraction"`
}

// PLTRegularizer configures h.
type PLTRegularizer struct {
	// Kind is zero, l1 or box.
	Kind string `yaml:"kind"`
	// Weight is λ₁ of λ₁‖x‖₁; Low and High bound the box.
	Weight float64 `yaml:"weight"`
	Low    float64 `yaml:"low"`
	High   float64 `yaml:"high"`
}

// PLTCost are the ledger's unit costs.
type PLTCost struct {
	// Gradient is t_G per local gradient, Communication t_C per round trip.
	Gradient      float64 `yaml:"gradient"`
	Communication float64 `yaml:"communication"`
}

// PLTFedPD holds FedPD's parameters.
type PLTFedPD struct {
	// Eta is η: the augmented Lagrangian's penalty is 1/η.
	Eta float64 `yaml:"eta"`
}

// PLTTamuna holds TAMUNA's parameters.
type PLTTamuna struct {
	// Eta is the control-variate step η.
	Eta float64 `yaml:"eta"`
}

// PLTLED holds LED's parameters.
type PLTLED struct {
	// Beta is the correction step β.
	Beta float64 `yaml:"beta"`
}

// PLTFiveGCS holds 5GCS's parameters.
type PLTFiveGCS struct {
	// Gamma is the server step γ and Tau the dual step τ.
	Gamma float64 `yaml:"gamma"`
	Tau   float64 `yaml:"tau"`
	// MuFraction sets μ = MuFraction·N·λ̲, the share of the strong
	// convexity moved to the server's prox (1 keeps every F_m convex).
	MuFraction float64 `yaml:"mu_fraction"`
}

// PLTAccountant configures the Rényi-DP report.
type PLTAccountant struct {
	// Delta is the δ of the (ε, δ) conversion.
	Delta float64 `yaml:"delta"`
	// Order is the Rényi order λ; 0 selects the best one for Delta.
	Order float64 `yaml:"order"`
	// Sensitivity is L of Assumption 3 for least squares without
	// clipping, whose per-sample gradients are unbounded over the data:
	// there Assumption 3 holds only between datasets that differ in one
	// label, ‖∇f_i^D − ∇f_i^{D′}‖ = 2‖a‖·|b − b′|/q_i, and L covers every such
	// pair with 2‖a‖·|b − b′| ≤ L. 0: none (no guarantee is reported).
	Sensitivity float64 `yaml:"sensitivity,omitempty"`
}

// PLTTableCell places a curve in a table of the paper, for maple table.
type PLTTableCell struct {
	// Title names the table ("Table II").
	Title string `yaml:"title"`
	// Row and Column label the cell.
	Row    string `yaml:"row"`
	Column string `yaml:"column"`
	// Quantity is time (the ledger at the tolerance), iterations or error
	// (the steady-state ‖Σ_i ∇f_i(x̄)‖, Table VII).
	Quantity string `yaml:"quantity"`
	// Paper is the value the paper prints and PaperIterations the iteration
	// count it implies (0: none).
	Paper           float64 `yaml:"paper"`
	PaperIterations float64 `yaml:"paper_iterations"`
}

// fedpltDefaults returns the family's defaults. With logistic data they
// also set the paper's set-up (§VII): N = 100 agents of q_i = 250 samples
// in n = 5 dimensions, and maple's ρ = 0.25 for the paper's ε‖x‖²/2 with
// ε = 0.5, on features with one shared covariance and no label flips.
func fedpltDefaults(sc *scenarios.Scenario) any {
	if sc.Data.Kind == "logistic" {
		sc.Data.Agents, sc.Data.Samples, sc.Data.Dim = 100, scenarios.IntRange{Min: 250, Max: 250}, 5
		sc.Data.Logistic.SharedCovariance, sc.Data.Logistic.MeanShift = true, 0
		sc.Data.Logistic.LabelFlip = scenarios.FloatRange{}
		sc.Loss.Rho = 0.25
	}
	return &FedPLT{
		Method: "fed-plt", Rho: 1, LocalEpochs: 5,
		Solver:        scenarios.NewBehaviour(afedplt.SolverSlot, "gd"),
		Participation: PLTParticipation{Kind: "full", Probability: scenarios.FloatRange{Min: 1, Max: 1}, Fraction: 1},
		Regularizer:   PLTRegularizer{Kind: "zero", Low: -1, High: 1},
		Init:          "zero",
		Tolerance:     1e-5,
		Cost:          PLTCost{Gradient: 1, Communication: 10},
		FedPD:         PLTFedPD{Eta: 1},
		Tamuna:        PLTTamuna{Eta: 0.2},
		LED:           PLTLED{Beta: 0.1},
		FiveGCS:       PLTFiveGCS{Gamma: 0.01, Tau: 1, MuFraction: 1},
		Accountant:    PLTAccountant{Delta: 1e-5},
	}
}

func fedpltParams(sc *scenarios.Scenario) *FedPLT { return sc.Algorithm.Params.(*FedPLT) }

const pltField = "algorithm.fedplt."

// tableQuantities are the values of algorithm.fedplt.table.quantity.
var tableQuantities = []string{"time", "iterations", "error"}

func validateFedPLT(v *scenarios.Validator, sc *scenarios.Scenario) {
	f := fedpltParams(sc)
	v.Unused("algorithm.step_size", "fedplt's steps are algorithm.fedplt.solver.step (γ) and the methods' own parameters")
	v.Absent("network.gradient_time", sc.Network.GradientTime != 0, "fedplt charges algorithm.fedplt.cost.gradient per local gradient on the virtual clock")
	v.Unused("privacy.mechanism", "Fed-PLT's privacy mechanism is the noisy-gd local solver (algorithm.fedplt.solver)")
	v.Unused("privacy.variance", "noisy GD's noise is algorithm.fedplt.solver.noise (τ)")
	v.Absent("loss.optimum", sc.Loss.Optimum == "none", "fedplt measures its error against the solution x⋆, which the optimum provides")
	if sc.Loss.Kind != "least-squares" && sc.Loss.Kind != "logistic" {
		v.Fail("loss.kind", "fedplt is written for the generalized linear losses (least-squares, logistic): its models have the data's dimension and noisy GD clips ℓ'(xᵀw)·x; got %s", sc.Loss.Kind)
	}
	v.Absent("loss.optimum", sc.Loss.Optimum == "none", "fedplt measures ‖x̄ − x⋆‖, the stacked error and the bound of Proposition 2 against the reference solution x⋆, which it always computes")
	v.Positive(pltField+"rho", f.Rho)
	v.AtLeast(pltField+"local_epochs", f.LocalEpochs, 1)
	v.NonNegative(pltField+"nonconvex", f.Nonconvex)
	v.NonNegative(pltField+"tolerance", f.Tolerance)
	v.NonNegative(pltField+"cost.gradient", f.Cost.Gradient)
	v.NonNegative(pltField+"cost.communication", f.Cost.Communication)
	p := f.Participation
	if p.Kind == "bernoulli" && !(p.Probability.Min > 0 && p.Probability.Min <= p.Probability.Max && p.Probability.Max <= 1) {
		v.Fail(pltField+"participation.probability", "p_i must lie in (0, 1]: need 0 < min ≤ max ≤ 1, got [%v, %v]", p.Probability.Min, p.Probability.Max)
	}
	if p.Kind == "subset" && !(p.Fraction > 0 && p.Fraction <= 1) {
		v.Fail(pltField+"participation.fraction", "must be a fraction in (0, 1], got %v", p.Fraction)
	}
	for i, s := range f.Solvers {
		if s.Agents.Min < 0 || s.Agents.Max < s.Agents.Min || s.Agents.Max >= sc.Data.Agents {
			v.Fail(fmt.Sprintf("%ssolvers[%d].agents", pltField, i), "need 0 ≤ first ≤ last < data.agents = %d, got [%d, %d]", sc.Data.Agents, s.Agents.Min, s.Agents.Max)
		}
	}
	// The parameters of one method are refused under another: a tuned
	// fedpd.eta left in a curve that runs LED would otherwise be ignored.
	for _, m := range []struct{ section, method string }{
		{"rho", "fed-plt"}, {"fedpd", "fedpd"}, {"tamuna", "tamuna"}, {"led", "led"}, {"5gcs", "5gcs"},
	} {
		if f.Method != m.method {
			v.Unused(pltField+m.section, "only method "+m.method+" uses it, this curve runs "+f.Method)
		}
	}
	v.Positive(pltField+"fedpd.eta", f.FedPD.Eta)
	v.Positive(pltField+"tamuna.eta", f.Tamuna.Eta)
	v.Positive(pltField+"led.beta", f.LED.Beta)
	v.Positive(pltField+"5gcs.gamma", f.FiveGCS.Gamma)
	v.Positive(pltField+"5gcs.tau", f.FiveGCS.Tau)
	if !(f.FiveGCS.MuFraction >= 0 && f.FiveGCS.MuFraction <= 1) {
		v.Fail(pltField+"5gcs.mu_fraction", "must be a fraction in [0, 1], got %v", f.FiveGCS.MuFraction)
	}
	validateSensitivity(v, sc, f)
	if sc.Privacy.Audit != nil {
		validateAudit(v, sc, f)
	}
	if a := f.Accountant; !(a.Delta > 0 && a.Delta < 1) {
		v.Fail(pltField+"accountant.delta", "δ must lie in (0, 1), got %v", a.Delta)
	} else if a.Order != 0 && (!(a.Order > 1) || math.IsInf(a.Order, 0)) {
		v.Fail(pltField+"accountant.order", "the Rényi order must exceed 1 (or be 0 for the best order), got %v", a.Order)
	}
	if t := f.Table; t != nil {
		v.OneOf(pltField+"table.quantity", t.Quantity, tableQuantities)
		if t.Title == "" || t.Row == "" || t.Column == "" {
			v.Fail(pltField+"table", "a table cell needs a title, a row and a column")
		}
	}
}

// fedpltConfig translates a curve's scenario into the family's
// configuration (data-free: 5GCS's μ is set at run time), checking it and
// naming the scenario field of any problem.
func fedpltConfig(c *scenarios.CurveSpec) (*fedplt.Config, error) {
	sc := c.Scenario
	f := fedpltParams(sc)
	n := sc.Data.Agents
	cfg := &fedplt.Config{Agents: n, Epochs: f.LocalEpochs, Rho: f.Rho, Solvers: make([]fedplt.Solver, n),
		Costs:    fedplt.Costs{Gradient: f.Cost.Gradient, Communication: f.Cost.Communication},
		FedPDEta: f.FedPD.Eta, TamunaEta: f.Tamuna.Eta, LEDBeta: f.LED.Beta,
		FiveGCS: fedplt.FiveGCSParams{Gamma: f.FiveGCS.Gamma, Tau: f.FiveGCS.Tau}}
	var err error
	if cfg.Method, err = fedplt.ParseMethod(f.Method); err != nil {
		return nil, c.Errorf(pltField+"method", "%v", err)
	}
	if cfg.Init, err = fedplt.ParseInit(f.Init); err != nil {
		return nil, c.Errorf(pltField+"init", "%v", err)
	}
	base, err := pltSolver(f.Solver)
	if err != nil {
		return nil, c.Errorf(pltField+"solver.kind", "%v", err)
	}
	for i := range cfg.Solvers {
		cfg.Solvers[i] = base
	}
	for k, s := range f.Solvers {
		solver, err := pltSolver(s.Solver)
		if err != nil {
			return nil, c.Errorf(fmt.Sprintf("%ssolvers[%d].kind", pltField, k), "%v", err)
		}
		for i := s.Agents.Min; i <= s.Agents.Max && i < n; i++ {
			cfg.Solvers[i] = solver
		}
	}
	for i, s := range cfg.Solvers {
		if why := cfg.Method.Refuses(s.Rule.Traits()); why != "" {
			return nil, pltError(c, &fedplt.FieldError{Field: fedplt.SolverField(i, "kind"),
				Msg: fmt.Sprintf("%s does not support the %s local solver: %s (supported: %s)", cfg.Method.Label(), s.Name, why, strings.Join(supportedSolvers(cfg.Method), ", "))})
		}
	}
	p := &cfg.Participation
	if p.Kind, err = fedplt.ParseParticipation(f.Participation.Kind); err != nil {
		return nil, c.Errorf(pltField+"participation.kind", "%v", err)
	}
	p.ProbMin, p.ProbMax = f.Participation.Probability.Min, f.Participation.Probability.Max
	p.Active = int(math.Round(f.Participation.Fraction * float64(n)))
	if cfg.Prox.Kind, err = fedplt.ParseProx(f.Regularizer.Kind); err != nil {
		return nil, c.Errorf(pltField+"regularizer.kind", "%v", err)
	}
	cfg.Prox.Weight, cfg.Prox.Low, cfg.Prox.High = f.Regularizer.Weight, f.Regularizer.Low, f.Regularizer.High
	if err := cfg.Validate(); err != nil {
		return nil, pltError(c, err)
	}
	return cfg, nil
}

// pltSolver returns the local solver a scenario selects.
func pltSolver(b scenarios.Behaviour) (fedplt.Solver, error) {
	rule, err := afedplt.Solvers.New(b.Kind, b.Params)
	return fedplt.Solver{Name: b.Kind, Rule: rule}, err
}

// supportedSolvers lists the registered solvers, at their defaults, that
// method m can run.
func supportedSolvers(m fedplt.Method) []string {
	var names []string
	for _, name := range afedplt.Solvers.Names() {
		if rule, err := afedplt.Solvers.New(name, nil); err == nil && m.Refuses(rule.Traits()) == "" {
			names = append(names, name)
		}
	}
	return names
}

// pltError turns an error of the fedplt package into a scenario error on the
// field it came from: an agent's solver field is reported on the solvers
// entry that set it, or on algorithm.fedplt.solver.
func pltError(c *scenarios.CurveSpec, err error) error {
	var fe *fedplt.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	field := fe.Field
	switch {
	case field == "agents":
		return c.Errorf("data.agents", "%s", fe.Msg)
	case field == "5gcs.mu":
		field = "5gcs.mu_fraction"
	case strings.HasPrefix(field, "solvers["):
		var agent int
		var leaf string
		if _, scanErr := fmt.Sscanf(field, "solvers[%d].%s", &agent, &leaf); scanErr == nil {
			field = "solver." + leaf
			for k, s := range fedpltParams(c.Scenario).Solvers {
				if agent >= s.Agents.Min && agent <= s.Agents.Max {
					field = fmt.Sprintf("solvers[%d].%s", k, leaf)
				}
			}
			fe.Msg = fmt.Sprintf("agent %d: %s", agent, fe.Msg)
		}
	}
	return c.Errorf(pltField+field, "%s", fe.Msg)
}

// fedpltColumns are the metrics of a run: the stopping metric and its
// square root, the distance to the reference solution, the ledger, the
// rounds run and whether the tolerance was met (both frozen once a run
// stops), the stacked error of Propositions 1–2 for Fed-PLT and, for
// classification data, the test error, accuracy and cross-entropy of x̄ (the
// shared ClassColumns).
func fedpltColumns(sc *scenarios.Scenario) []rundir.Column {
	cols := []rundir.Column{
		{Name: "stationarity", Decibel: true, Label: "‖Σ∇f_i(x̄)‖² (dB)"},
		{Name: "gradient_norm", Label: "‖Σ∇f_i(x̄)‖"},
		{Name: "distance", Decibel: true, Label: "‖x̄ − x⋆‖² (dB)"},
		{Name: "cost", Label: "cost (t_G per gradient + t_C per round trip, all agents)"},
		{Name: "rounds", Label: "rounds run"},
		{Name: "converged", Label: "fraction of runs at the tolerance"},
	}
	if fedpltParams(sc).Method == fedplt.PLT.String() {
		cols = append(cols, rundir.Column{Name: "stacked_error", Decibel: true, Label: "‖[x − x̄; z − z̄]‖² (dB)"})
	}
	return append(cols, run.ClassColumns(sc, "", " of x̄")...)
}

// runFedPLT executes one run on the job's engine.
func runFedPLT(j *run.Job, p *inputs.Problem, sink *run.TraceSink) error {
	c := j.Curve
	sc := c.Scenario
	f := fedpltParams(sc)
	cfg, err := fedpltConfig(c)
	if err != nil {
		return err
	}
	obj := fedplt.Objective{Loss: p.Loss, Nonconvex: f.Nonconvex}
	sets, canary, err := auditSets(j, p)
	if err != nil {
		return err
	}
	prob := fedplt.NewProblem(obj, sets)
	cfg.FiveGCS.Mu = f.FiveGCS.MuFraction * float64(cfg.Agents) * math.Max(prob.Moduli.Low, 0)
	resolved, err := cfg.Resolve(prob.Moduli, prob.Sizes())
	if err != nil {
		return pltError(c, err)
	}
	cfg = &resolved
	sol, err := pltSolution(p, prob, cfg)
	if err != nil {
		return c.Errorf("algorithm.fedplt", "cannot compute the reference solution: %v", err)
	}
	x0, err := fedplt.InitialModels(cfg, prob, fedplt.SeededStreams(j.RunSeed))
	if err != nil {
		return pltError(c, err)
	}
	mon := fedplt.NewMonitor(cfg.Method, obj, sets, cfg.Prox, sol.X, cfg.Rho, f.Tolerance, x0, x0)
	var aud *finalAudit
	if canary != nil {
		if aud, err = newFinalAudit(c, cfg, &fedplt.Problem{Obj: obj, Sets: p.Sets, Moduli: prob.Moduli}, canary, sc.Iterations); err != nil {
			return err
		}
		mon.OnRound = aud.observe
	}
	if j.Opts.Engine == run.Reference {
		if _, err := fedplt.ReferenceContext(j.Context(), cfg, prob, x0, j.RunSeed, sc.Iterations, mon); err != nil {
			return err
		}
	} else {
		obs := afedplt.NewObserver(mon)
		r := actors.NewRun(j.ActorOptions(obs, sink))
		defer r.Close()
		sched, err := afedplt.Spawn(r, afedplt.Setup{Config: cfg, Problem: prob, X0: x0, Rounds: sc.Iterations, Observer: obs})
		if err != nil {
			return err
		}
		if err := r.Execute(sched, &msg.Start{}); err != nil {
			return err
		}
		j.Finish(r)
	}
	j.Table = pltTable(sc, p, mon)
	pltDetails(j, cfg, prob, mon, sol)
	if aud != nil {
		return aud.record(j, cfg, prob)
	}
	return nil
}

// pltSolution returns the reference solution x⋆: the shared optimum for
// the smooth ℓ2-regularized problem (the minimizer of (1/N)Σ_i f_i is that of
// Σ_i f_i), the family's proximal gradient solve when the non-convex
// regularizer or a non-smooth h changes the problem.
func pltSolution(p *inputs.Problem, prob *fedplt.Problem, cfg *fedplt.Config) (fedplt.Solution, error) {
	if prob.Obj.Nonconvex == 0 && cfg.Prox.Kind == fedplt.Zero {
		return fedplt.Solution{X: p.WOpt, Iterations: p.Solver.Iterations, Method: "shared optimum: " + p.Solver.Method}, nil
	}
	return fedplt.Solve(prob, cfg.Prox, 1e-10, 100000)
}

// pltTable writes the monitor's records into the run's metrics table. Rows
// after an early stop repeat the last round (the models no longer change);
// after a divergence they are NaN, from the round it was detected.
func pltTable(sc *scenarios.Scenario, p *inputs.Problem, mon *fedplt.Monitor) *rundir.Table {
	cols := fedpltColumns(sc)
	t := rundir.NewTable(sc.Iterations, sc.Output.Every, len(cols))
	last := len(mon.Records) - 1
	for row, it := range t.Iterations {
		if mon.Diverged >= 0 && it >= mon.Diverged {
			for k := range cols {
				t.Set(row, k, math.NaN())
			}
			continue
		}
		r := mon.Records[min(it, last)]
		converged := 0.0
		if mon.Converged >= 0 && min(it, last) >= mon.Converged {
			converged = 1
		}
		values := []float64{r.Stationarity, math.Sqrt(r.Stationarity), r.Distance, r.Cost, float64(r.Round), converged}
		if len(cols) > len(values) && cols[len(values)].Name == "stacked_error" {
			values = append(values, r.Stacked*r.Stacked)
		}
		var class [run.ClassMetrics]float64
		if p.Classify(class[:], r.X) {
			values = append(values, class[:]...)
		}
		for k, v := range values {
			t.Set(row, k, v)
		}
	}
	return t
}

// pltDetails records the facts of run 0: the solution, the moduli and
// steps, rounds and cost to tolerance, the theory of §V and the Rényi-DP
// guarantee of noisy GD.
func pltDetails(j *run.Job, cfg *fedplt.Config, prob *fedplt.Problem, mon *fedplt.Monitor, sol fedplt.Solution) {
	d := j.Stats.Details
	d["optimum"] = sol.X
	d["solver"] = sol
	d["moduli"] = map[string]float64{"low": prob.Moduli.Low, "high": prob.Moduli.High}
	d["step"] = cfg.Solvers[0].Step
	if cfg.Method == fedplt.FiveGCS {
		d["5gcs_mu"] = cfg.FiveGCS.Mu
	}
	last := mon.Records[len(mon.Records)-1]
	d["rounds_run"] = last.Round
	if mon.Converged >= 0 {
		d["rounds_to_tolerance"] = mon.Converged
		d["cost_to_tolerance"] = mon.Records[mon.Converged].Cost
	}
	if mon.Diverged >= 0 {
		d["diverged_at_round"] = mon.Diverged
	}
	active := cfg.Agents
	if cfg.Participation.Kind == fedplt.Subset {
		active = cfg.Participation.Active
	}
	d["cost_per_iteration_closed_form"] = cfg.Costs.PerIteration(cfg.Method, cfg.Epochs, active)
	if cfg.Method != fedplt.PLT {
		return
	}
	if th, ok := fedplt.Analyze(cfg, prob.Moduli, prob.Dim()); ok {
		report := map[string]any{"quantities": th}
		if th.Informative {
			worst := 0.0
			e0 := mon.Records[0].Stacked
			for _, r := range mon.Records {
				worst = math.Max(worst, r.Stacked/th.Bound(r.Round, e0))
			}
			report["measured_over_bound_max"] = worst
			report["holds"] = worst <= 1
		} else {
			report["bound"] = "vacuous: ‖S‖ ≥ 1"
		}
		d["theory"] = report
	}
	if acc := pltPrivacy(cfg, prob, last.Round, fedpltParams(j.Curve.Scenario).Accountant); acc != nil {
		d["privacy"] = acc
	}
}

// pltPrivacy reports Proposition 4's guarantee for the agents' noisy GD
// after `rounds` rounds, for the worst case over agents: the largest ε_i,
// each agent with its own q_i, τ, γ and L (its clipping bound, or the data's
// 2·max‖a‖). It returns nil when no agent runs noisy GD with noise, and no
// ε when some agent adds none: that agent has no guarantee, so neither has
// the worst case.
func pltPrivacy(cfg *fedplt.Config, prob *fedplt.Problem, rounds int, a PLTAccountant) map[string]any {
	var plain []int
	for i, s := range cfg.Solvers {
		if t := s.Rule.Traits(); !t.Private || t.Noise == 0 {
			plain = append(plain, i)
		}
	}
	switch {
	case len(plain) == len(cfg.Solvers):
		return nil
	case len(plain) > 0:
		return map[string]any{"renyi": fmt.Sprintf("none: %d of %d agents (agent %d first) add no noise, so they have no guarantee and neither has the worst case", len(plain), len(cfg.Solvers), plain[0])}
	case prob.Moduli.Low <= 0:
		return map[string]any{"renyi": "not available: Proposition 4 needs strongly convex costs"}
	}
	agents, why := pltAgents(cfg, prob, rounds, a)
	if why != "" {
		return map[string]any{"renyi": why}
	}
	p, agent, order, eps := pltEpsilon(agents, a)
	return map[string]any{
		"agent": agent, "sensitivity_L": p.L, "samples": p.Samples, "noise": p.Tau, "step": p.Step, "local_steps": p.Steps,
		"order": order, "epsilon_renyi": p.Rate() * order, "saturation_per_order": p.Saturation(),
		"delta": a.Delta, "epsilon": eps, "note": "Proposition 4: final local models, full participation (an upper bound under partial participation); the worst agent's bound",
	}
}

// pltAgents returns Proposition 4's parameters of every agent after
// `rounds` rounds — its q_i, τ, γ and L (its clipping bound,
// algorithm.fedplt.accountant.sensitivity for least squares, or the data's
// 2·max‖a‖ for logistic regression) — or why some agent has none.
func pltAgents(cfg *fedplt.Config, prob *fedplt.Problem, rounds int, a PLTAccountant) ([]renyi.Params, string) {
	agents := make([]renyi.Params, len(cfg.Solvers))
	free := -1.0 // the unclipped L, a pass over all the data: computed once
	for i, s := range cfg.Solvers {
		t := s.Rule.Traits()
		L := t.Clip
		if L == 0 && a.Sensitivity > 0 {
			L = a.Sensitivity
		}
		if L == 0 {
			if free < 0 {
				var ok bool
				if free, ok = prob.Obj.Sensitivity(prob.Sets, 0); !ok {
					return nil, fmt.Sprintf("not available: agent %d's per-sample gradients are unbounded; set algorithm.fedplt.solver.clip, or for neighbours that differ in one label algorithm.fedplt.accountant.sensitivity", i)
				}
			}
			L = free
		}
		agents[i] = renyi.Params{L: L, Low: prob.Moduli.Low, Tau: t.Noise, Samples: prob.Sets[i].Len(), Step: s.Step, Steps: rounds * cfg.Epochs}
	}
	return agents, ""
}

// pltEpsilon returns the worst agent's parameters and index, and its (ε,
// δ) at the best Rényi order for δ (or at the accountant's order).
func pltEpsilon(agents []renyi.Params, a PLTAccountant) (p renyi.Params, agent int, order, eps float64) {
	p, agent = renyi.WorstCase(agents)
	order, eps = renyi.BestOrder(p.Rate(), a.Delta)
	if a.Order > 0 {
		order = a.Order
		eps = renyi.ToDP(p.Epsilon(order), order, a.Delta)
	}
	return p, agent, order, eps
}
