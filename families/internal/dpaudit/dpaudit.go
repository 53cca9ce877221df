// Package dpaudit is what the many-run privacy audits of the decentralized
// families (diffusion, graph federated learning) share: their canary is the
// neighbouring dataset of the papers' definition — the victim's whole
// dataset replaced by D′, the one the accountant states its bound with
// (inputs.NeighbourOptimum) — and their auditors score each run by the
// log-likelihood ratio of the victim's messages in a view (privacy/audit).
// A family builds its auditor and its accountant's bound; this package
// builds the neighbouring dataset, records the scores and the audit's
// details, and computes the ratio chain of the papers' proofs.
package dpaudit

import (
	"fmt"
	"math"

	"maple/algorithms/data"
	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/privacy/audit"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// Canary is the canary kind of these audits: the victim's dataset replaced
// by the neighbouring one.
const Canary = "dataset"

// Support is what the families offer to privacy.audit.
var Support = &scenarios.AuditSupport{
	Methods:  []string{scenarios.AuditManyRun},
	Canaries: []string{Canary},
	Views:    audit.ViewNames(),
}

// Auditor is a family's auditor of one run, as the record reads it.
type Auditor interface {
	// Scored returns the last round scored; Score the score after round i.
	Scored() int
	Score(i int) float64
	// Statistic describes the score in words.
	Statistic() string
	// Exact reports whether the score is the exact likelihood ratio.
	Exact() bool
	// Sensitivity returns the largest shift of the victim's predictions.
	Sensitivity() float64
	// Divergence returns the expected score of a run with the canary.
	Divergence() float64
	// Draws returns the independent draws of the victim's value the view
	// carries per round, +Inf where it reveals the value.
	Draws() float64
}

// Wording is how a family names what its audit is about, in the run's
// details.
type Wording struct {
	// Victim is the details' "victim".
	Victim any
	// Canary describes the canary.
	Canary string
	// Views describes each view: what the auditor sees and computes.
	Views map[audit.View]string
	// Value names the victim's value its messages carry ("agent 0's value").
	Value string
	// Round names a round of the recursion ("iteration").
	Round string
}

// Run is one run's neighbouring dataset: the victim's D′ and the distance
// of the optima it moves.
type Run struct {
	// Alt is the victim's neighbouring dataset D′.
	Alt *data.Set
	// Dist is ‖w^o − w′^o‖.
	Dist float64
}

// New reads the job's view and builds its neighbouring datasets, D′ for
// the victim (dataset 0), from the seed of the run's data: the run's, or run
// 0's when the data are drawn once for every run. It returns the view, the
// neighbouring dataset, and the datasets the run trains on (D′ for the
// victim when the canary is in).
func New(j *run.Job, p *inputs.Problem) (audit.View, Run, []*data.Set, error) {
	c := j.Curve
	view, err := audit.ParseView(j.Audit().View)
	if err != nil {
		return 0, Run{}, nil, c.Errorf(scenarios.FieldAudit+".view", "%v", err)
	}
	seed := j.RunSeed
	if c.Scenario.Data.Regenerate == "once" {
		seed = rng.RunSeed(c.Scenario.Seed, 0)
	}
	sets, dist, err := inputs.NeighbourOptimum(j.Context(), c, j.Dir, seed, p)
	if err != nil {
		return 0, Run{}, nil, err
	}
	ar := Run{Alt: sets[0], Dist: dist}
	if j.CanaryIn() {
		return view, ar, sets, nil
	}
	return view, ar, p.Sets, nil
}

// Record records the scores of the run's auditor a and the accountant's
// bound upper they are compared with, and describes the audit in the run's
// details (the summary shows run 0's). noised says the victim's messages
// carry privacy noise (for the ratio chain); dim is the model's dimension.
func (ar Run) Record(j *run.Job, t *rundir.Table, a Auditor, w Wording, upper run.AuditUpper, noised bool, dim int) error {
	sc := j.Curve.Scenario
	if a.Scored() != sc.Iterations {
		return fmt.Errorf("the auditor scored %d of %d %ss", a.Scored(), sc.Iterations, w.Round)
	}
	j.RecordAudit(run.AuditRecord{Scores: run.AtRows(t, a.Score)})
	j.RecordAuditUpper(upper)
	view, _ := audit.ParseView(sc.Privacy.Audit.View)
	d := map[string]any{
		"victim":           w.Victim,
		"canary":           w.Canary,
		"view":             w.Views[view],
		"statistic":        a.Statistic(),
		"exact":            a.Exact(),
		"score_final":      a.Score(sc.Iterations),
		"optimum_distance": ar.Dist,
		"sensitivity_max":  a.Sensitivity(),
		"accountant":       upper.Accountant,
		"epsilon_final":    rundir.Number(upper.Epsilon[len(upper.Epsilon)-1]),
	}
	if j.Run == 0 || view == audit.NetworkView {
		// The summary reports run 0's details; the wire view's divergence
		// can take a numerical integral per link and coordinate, so the
		// other runs skip it.
		d["divergence"] = rundir.Number(a.Divergence())
	}
	if chain, how := ar.chain(sc, a.Draws(), w, noised, dim); how != "" {
		d["chain_epsilon_final"], d["chain"] = rundir.Number(chain), how
		d["chain_sensitivity_bound"] = sc.Privacy.Accountant.B + sc.Privacy.Accountant.BPrime + ar.Dist
	}
	j.Stats.Details["privacy_audit"] = d
	return nil
}

// chain returns the ratio chain of the papers' proofs (paper 001 eq. 30,
// seed 002's Theorem 3) stopped before its last step, for the view's actual
// noise, and how it was computed: per round, the Laplace mechanism of each
// of the independent draws the victim's messages carry (draws of them, the
// auditor's Draws), with the victim's sensitivity bound B + B′ +
// ‖w^o − w′^o‖ (its own error, not the network's, on the same
// high-probability event) and ℓ1 (exact for
// per-coordinate Laplace noise), composed over the rounds; for Gaussian
// noise the same draws composed as one Gaussian mechanism. It is "" where
// the view reveals the victim's value (no finite ε applies) or there is no
// noise.
func (ar Run) chain(sc *scenarios.Scenario, draws float64, w Wording, noised bool, dim int) (float64, string) {
	acc := sc.Privacy.Accountant
	if acc == nil || !noised || math.IsInf(draws, 1) {
		return 0, ""
	}
	T := sc.Iterations
	sigma := math.Sqrt(sc.Privacy.Variance)
	bound := acc.B + acc.BPrime + ar.Dist
	if sc.Privacy.Mechanism == "gaussian" {
		mu := math.Sqrt(draws*float64(T)) * bound / sigma
		return accountant.GaussianEpsilon(mu, acc.Delta), fmt.Sprintf("%g independent Gaussian draws of %s per %s, sensitivity B + B′ + ‖w^o − w′^o‖ = %g, composed over %d %ss (analytic Gaussian mechanism at δ = %g)", draws, w.Value, w.Round, bound, T, w.Round, acc.Delta)
	}
	eps := draws * math.Sqrt(float64(dim)) * math.Sqrt2 / sigma * bound * float64(T)
	return eps, fmt.Sprintf("%g independent Laplace draws of %s per %s (weighted), sensitivity √M·(B + B′ + ‖w^o − w′^o‖) = %g in ℓ1, composed over %d %ss", draws, w.Value, w.Round, math.Sqrt(float64(dim))*bound, T, w.Round)
}
