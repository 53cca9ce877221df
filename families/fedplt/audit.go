package fedplt

import (
	"fmt"
	"math"

	"maple/algorithms/data"
	"maple/algorithms/fedplt"
	"maple/privacy/accountant"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// The audit of Fed-PLT's noisy GD (privacy.audit) against Proposition 4,
// which bounds the Rényi divergence of the final local models between
// datasets that differ in one data point.
const (
	// canaryLabel is one data point of agent 0 changed: its first sample's
	// label raised by L/(2‖a‖), which moves the agent's gradient by exactly
	// L/q_0 at every point (fedplt.LabelCanary), the most Assumption 3
	// allows with the accountant's L, in the same direction at every local
	// step.
	canaryLabel = "label"
	// viewFinal is the final local models x_{i,K} of every agent, the
	// last model only: what Proposition 4 is about. The z messages and the
	// intermediate models are not in it (the guarantee does not cover
	// them).
	viewFinal = "final"
)

// validateSensitivity refuses algorithm.fedplt.accountant.sensitivity
// where it sets nothing: it is L for least squares without clipping.
func validateSensitivity(v *scenarios.Validator, sc *scenarios.Scenario, f *FedPLT) {
	const field = pltField + "accountant.sensitivity"
	s := f.Accountant.Sensitivity
	if s == 0 {
		return
	}
	v.Positive(field, s)
	switch {
	case sc.Loss.Kind != "least-squares":
		v.Fail(field, "does not apply: only least squares needs it (logistic regression's L is twice the largest feature norm, from the data)")
	case !someUnclippedNoisyGD(f):
		v.Fail(field, "does not apply: no agent runs noisy GD without clipping (a clipping bound is L itself)")
	}
}

// someUnclippedNoisyGD reports whether some agent's solver is noisy GD
// without clipping.
func someUnclippedNoisyGD(f *FedPLT) bool {
	for _, b := range agentSolvers(f) {
		if s, err := pltSolver(b); err == nil {
			if t := s.Rule.Traits(); t.Private && t.Clip == 0 {
				return true
			}
		}
	}
	return false
}

// agentSolvers lists the solver of every entry: the default and each
// per-agent one.
func agentSolvers(f *FedPLT) []scenarios.Behaviour {
	b := []scenarios.Behaviour{f.Solver}
	for _, s := range f.Solvers {
		b = append(b, s.Solver)
	}
	return b
}

// validateAudit refuses, naming the field, every setting in which the final
// models are not the affine Gaussian recursion the auditor computes exactly
// (fedplt.FinalAudit) or Proposition 4 does not apply.
func validateAudit(v *scenarios.Validator, sc *scenarios.Scenario, f *FedPLT) {
	const why = "privacy.audit computes the exact likelihood ratio of the final models, which needs "
	if f.Method != fedplt.PLT.String() {
		v.Fail(pltField+"method", why+"Fed-PLT (Proposition 4's algorithm), got %s", f.Method)
	}
	if sc.Loss.Kind != "least-squares" {
		v.Fail("loss.kind", why+"a quadratic cost (least-squares), got %s", sc.Loss.Kind)
	}
	if f.Nonconvex != 0 {
		v.Fail(pltField+"nonconvex", why+"a quadratic cost, without the non-convex regularizer")
	}
	if f.Participation.Kind != "full" {
		v.Fail(pltField+"participation.kind", why+"full participation (Proposition 4's setting), got %s", f.Participation.Kind)
	}
	if f.Regularizer.Kind != "zero" {
		v.Fail(pltField+"regularizer.kind", why+"h = 0, got %s", f.Regularizer.Kind)
	}
	if f.Init != "prior" {
		v.Fail(pltField+"init", why+"Proposition 4's initial models N(0, 2τ²/λ̲·I): init prior, got %s", f.Init)
	}
	if f.Tolerance != 0 {
		v.Fail(pltField+"tolerance", why+"every run to run all its rounds: tolerance 0, got %v", f.Tolerance)
	}
	for k, b := range agentSolvers(f) {
		field := pltField + "solver"
		if k > 0 {
			field = fmt.Sprintf("%ssolvers[%d]", pltField, k-1)
		}
		s, err := pltSolver(b)
		if err != nil {
			continue // reported by the configuration's check
		}
		if t := s.Rule.Traits(); !t.Private || t.Noise <= 0 || t.Clip != 0 {
			v.Fail(field, why+"every agent to run noisy-gd with noise > 0 and without clipping, got %s", b.Kind)
		}
	}
	if f.Accountant.Sensitivity == 0 {
		v.Fail(pltField+"accountant.sensitivity", "privacy.audit's label canary moves agent 0's gradient by L/q_0: set L, the sensitivity Proposition 4 is stated for")
	}
}

// auditSets returns the datasets of the run and, for an audited curve, the
// canary: agent 0's dataset with one label changed (fedplt.LabelCanary),
// which replaces agent 0's in the runs with the canary (Job.CanaryIn).
// The problem's own sets, which other runs share, are not modified.
func auditSets(j *run.Job, p *inputs.Problem) ([]*data.Set, *data.Set, error) {
	if j.Audit() == nil {
		return p.Sets, nil, nil
	}
	canary, err := fedplt.LabelCanary(p.Sets[0], fedpltParams(j.Curve.Scenario).Accountant.Sensitivity)
	if err != nil {
		return nil, nil, j.Curve.Errorf("data", "privacy.audit: %v", err)
	}
	if !j.CanaryIn() {
		return p.Sets, canary, nil
	}
	return append([]*data.Set{canary}, p.Sets[1:]...), canary, nil
}

// finalAudit scores a run's final models after every round.
type finalAudit struct {
	a      *fedplt.FinalAudit
	scores []float64 // by round, NaN for rounds not run
	mu     []float64
	shift  float64 // the canary's change of agent 0's first label
	err    error
}

// newFinalAudit returns the auditor of a run of cfg on out, the datasets
// without the canary, for rounds rounds.
func newFinalAudit(c *scenarios.CurveSpec, cfg *fedplt.Config, out *fedplt.Problem, canary *data.Set, rounds int) (*finalAudit, error) {
	a, err := fedplt.NewFinalAudit(cfg, out, canary)
	if err != nil {
		return nil, c.Errorf(scenarios.FieldAudit, "%v", err)
	}
	f := &finalAudit{a: a, scores: make([]float64, rounds+1), mu: make([]float64, rounds+1), shift: canary.Y[0] - out.Sets[0].Y[0]}
	for k := 1; k <= rounds; k++ {
		f.scores[k], f.mu[k] = math.NaN(), math.NaN()
	}
	return f, nil
}

// observe is the monitor's OnRound: the auditor advances to round k and
// scores the local models.
func (f *finalAudit) observe(k int, x [][]float64) {
	if f.err != nil {
		return
	}
	for f.a.Round() < k {
		if f.err = f.a.Advance(); f.err != nil {
			return
		}
	}
	f.scores[k], f.mu[k] = f.a.Score(x), f.a.Mu()
}

// record records the run's audit: the score of the final models after each
// row's round, beside Proposition 4's ε after as many rounds at the
// accountant's δ; the details add, per row, μ of the final models (they are
// exactly μ-GDP for the canary's pair) and the tight ε at δ it gives, the
// Gaussian mechanism's.
func (f *finalAudit) record(j *run.Job, cfg *fedplt.Config, prob *fedplt.Problem) error {
	if f.err != nil {
		return fmt.Errorf("privacy.audit: %v", f.err)
	}
	a := fedpltParams(j.Curve.Scenario).Accountant
	rows := j.Table.Iterations
	scores, upper := make([]float64, len(rows)), make([]float64, len(rows))
	mu, exact := make([]float64, len(rows)), make([]float64, len(rows))
	for k, it := range rows {
		scores[k], mu[k] = f.scores[it], f.mu[it]
		if it == 0 {
			continue
		}
		agents, why := pltAgents(cfg, prob, it, a)
		if why != "" {
			return fmt.Errorf("privacy.audit: Proposition 4: %s", why) // not reached: the validator requires L
		}
		_, _, _, upper[k] = pltEpsilon(agents, a)
		exact[k] = accountant.GaussianEpsilon(mu[k], a.Delta)
	}
	j.RecordAudit(run.AuditRecord{Scores: scores})
	j.RecordAuditUpper(run.AuditUpper{
		Accountant: "Proposition 4 (Rényi DP of the final models, the worst agent) at the best order",
		Relation:   "one data point of an agent changed (Assumption 3 with sensitivity L: a label of agent 0, moving its gradient by L/q)",
		Sampling:   "none (full participation)", Delta: a.Delta, Epsilon: upper,
	})
	j.Stats.Details["audit"] = map[string]any{
		"canary_in": j.CanaryIn(), "label_shift": f.shift,
		"mu": mu, "exact_epsilon": exact, "delta": a.Delta,
		"note": "view: the final local models of every agent after each row's round; mu is their exact GDP parameter for the canary's pair (the score is N(±mu²/2, mu²)), exact_epsilon the Gaussian mechanism's ε at delta: the tight ε of the final models, which Proposition 4's (the audit's upper bound) must not be below",
	}
	return nil
}
