package diffusion

import (
	"fmt"
	"math"

	"maple/actors"
	adiffusion "maple/actors/diffusion"
	"maple/algorithms/data"
	"maple/algorithms/diffusion"
	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/privacy/audit"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// This file is the family's side of privacy.audit (scenarios.Audit): a
// many-run audit of paper 001's guarantee, whose canary is the neighbouring
// dataset of its definition — agent 0's whole dataset replaced by D′, the one
// maple's accountant states its bound with (inputs.NeighbourOptimum) — and
// whose auditor (diffusion.Auditor) scores each run by the log-likelihood
// ratio of agent 0's messages in its view. Distinct from the eavesdropper of
// algorithm.diffusion.audit (audit.go), which measures a reconstruction
// error, not ε.

// auditCanary is the canary kind: agent 0's dataset replaced by the
// neighbouring one.
const auditCanary = "dataset"

// auditSupport is what the family offers to privacy.audit.
var auditSupport = &scenarios.AuditSupport{
	Methods:  []string{scenarios.AuditManyRun},
	Canaries: []string{auditCanary},
	Views:    audit.ViewNames(),
}

// auditViews describes each view for the summary: what the auditor sees and
// what it computes from it.
var auditViews = map[audit.View]string{
	audit.WireView:    "wire: every message on agent 0's outgoing links, as the trace records them (the observer of paper 001's Definition 1); it does not see what agent 0 receives, so it predicts agent 0's values under D and D′ with the noise-free recursion on each",
	audit.NetworkView: "network: every message on every link (white-box, the history the ratio chain of eq. 30 conditions on); it replays every agent's recursion from the messages it receives, agent 0's under D and under D′: the exact conditional means of agent 0's messages",
}

// validatePrivacyAudit refuses what the auditor cannot replay, naming the
// field.
func validatePrivacyAudit(v *scenarios.Validator, sc *scenarios.Scenario, d *Diffusion) {
	const f = scenarios.FieldAudit
	switch {
	case d.Mode == "async":
		v.Fail("algorithm.diffusion.mode", "%s replays the synchronous recursion, not asynchronous agents", f)
	case diffusionDynamic(sc):
		v.Fail(f, "the auditor replays a fixed graph; link failures, dropouts and crashes make it time-varying")
	case d.Combine.Kind != "linear":
		v.Fail("algorithm.diffusion.combine", "%s replays the linear combination, not %s", f, d.Combine.Kind)
	case sc.Loss.Optimum == "none":
		v.Fail("loss.optimum", "%s inserts the neighbouring dataset of the accountant, which maple builds with its optimum; loss.optimum none has none", f)
	case sc.Privacy.SelfNoise && sc.Privacy.Audit.View == audit.NetworkView.String():
		v.Fail("privacy.self_noise", "the network view replays every agent's self term, which self noise hides from every message; audit it with view wire")
	}
}

// auditRun is a run's audit: the neighbouring dataset and its auditor.
type auditRun struct {
	alt     *data.Set
	dist    float64 // ‖w^o − w′^o‖
	auditor *diffusion.Auditor
}

// dataSeed returns the seed of the run's data, as the runner draws them: the
// run's, or run 0's when the data are drawn once for every run.
func dataSeed(sc *scenarios.Scenario, runSeed uint64) uint64 {
	if sc.Data.Regenerate == "once" {
		return rng.RunSeed(sc.Seed, 0)
	}
	return runSeed
}

// newAuditRun builds the run's neighbouring dataset and auditor, and returns
// the datasets the run trains on: D′ for agent 0 when the canary is in.
func newAuditRun(j *run.Job, p *inputs.Problem, cfg diffusion.Config, prob diffusion.Problem) (*auditRun, []*data.Set, error) {
	c := j.Curve
	view, err := audit.ParseView(j.Audit().View)
	if err != nil {
		return nil, nil, c.Errorf(scenarios.FieldAudit+".view", "%v", err)
	}
	sets, dist, err := inputs.NeighbourOptimum(j.Context(), c, j.Dir, dataSeed(c.Scenario, j.RunSeed), p)
	if err != nil {
		return nil, nil, err
	}
	ar := &auditRun{alt: sets[diffusion.Victim], dist: dist}
	if ar.auditor, err = diffusion.NewAuditor(cfg, prob, ar.alt, view, diffusion.SeedStreams(j.RunSeed)); err != nil {
		return nil, nil, c.Errorf(scenarios.FieldAudit, "%v", err)
	}
	if j.CanaryIn() {
		return ar, sets, nil
	}
	return ar, p.Sets, nil
}

// spawn adds the auditor's tap to an actor run whose agents start at first.
func (ar *auditRun) spawn(r *actors.Run, first actors.ID) {
	adiffusion.NewAuditTap(ar.auditor, first).Spawn(r)
}

// record records the run's scores and the accountant's bound they are
// compared with, and describes the audit in the run's details (the summary
// shows run 0's; every run's divergence is what its expected score is).
func (ar *auditRun) record(j *run.Job, t *rundir.Table, agents, dim int) error {
	sc := j.Curve.Scenario
	a := ar.auditor
	if a.Scored() != sc.Iterations {
		return fmt.Errorf("the auditor scored %d of %d iterations", a.Scored(), sc.Iterations)
	}
	j.RecordAudit(run.AuditRecord{Scores: run.AtRows(t, a.Score)})
	upper := ar.upper(sc, t, agents, dim)
	j.RecordAuditUpper(upper)
	view, _ := audit.ParseView(sc.Privacy.Audit.View)
	d := map[string]any{
		"victim":           diffusion.Victim,
		"canary":           "dataset: agent 0's whole dataset replaced by D′, another draw of the generator (the accountant's neighbouring dataset), in the odd runs",
		"view":             auditViews[view],
		"statistic":        a.Statistic(),
		"exact":            a.Exact(),
		"score_final":      a.Score(sc.Iterations),
		"optimum_distance": ar.dist,
		"sensitivity_max":  a.Sensitivity(),
		"accountant":       upper.Accountant,
		"epsilon_final":    rundir.Number(upper.Epsilon[len(upper.Epsilon)-1]),
	}
	if j.Run == 0 || view == audit.NetworkView {
		// The wire view's predictions are the noise-free recursions, the
		// same in every run, and so is its divergence: run 0 says it (it
		// can take a numerical integral per link and coordinate).
		d["divergence"] = rundir.Number(a.Divergence())
	}
	if chain, how := ar.chain(sc, agents, dim); how != "" {
		d["chain_epsilon_final"], d["chain"] = rundir.Number(chain), how
		d["chain_sensitivity_bound"] = sc.Privacy.Accountant.B + sc.Privacy.Accountant.BPrime + ar.dist
	}
	j.Stats.Details["privacy_audit"] = d
	return nil
}

// upper returns maple's accountant of the audited guarantee after each row:
// paper 001 eq. 31 for Laplace noise (δ = 0, the claim's pure ε), the exact
// composed Gaussian of P noisy messages per iteration at privacy.accountant.delta
// for Gaussian noise (the family's privacy report), +∞ without noise.
func (ar *auditRun) upper(sc *scenarios.Scenario, t *rundir.Table, agents, dim int) run.AuditUpper {
	u := run.AuditUpper{Relation: "agent-level replace-one: agent 0's whole dataset replaced", Sampling: "none"}
	acc := sc.Privacy.Accountant
	sigma := math.Sqrt(sc.Privacy.Variance)
	var eps func(i int) float64
	switch {
	case sc.Privacy.Scheme == "none" || acc == nil:
		u.Accountant = "none: the messages carry no noise (ε = ∞)"
		eps = func(int) float64 { return math.Inf(1) }
	case sc.Privacy.Mechanism == "gaussian":
		u.Accountant, u.Delta = "analytic Gaussian mechanism of the P noisy messages per iteration, sensitivity B + B′ + √P‖w^o − w′^o‖ (maple's accountant)", acc.Delta
		bound := accountant.SensitivityBound(agents, acc.B, acc.BPrime, ar.dist)
		eps = func(i int) float64 {
			return accountant.GaussianEpsilon(accountant.GaussianComposedMu(bound, sigma, agents*i), acc.Delta)
		}
	default:
		norm, _ := accountant.ParseNorm(acc.Norm) // validated
		factor := accountant.NormFactor(norm, dim)
		u.Accountant = "paper 001 eq. 31, (√2P/σ_g)(B + B′ + √P‖w^o − w′^o‖)·i (maple's accountant)"
		eps = func(i int) float64 {
			return factor * accountant.DecentralizedEpsilon(agents, sigma, acc.B, acc.BPrime, ar.dist, i)
		}
	}
	u.Epsilon = run.EpsilonAtRows(t, eps)
	return u
}

// chain returns the ratio chain of paper 001 eq. 30 stopped before its last
// step, for the view's actual noise, and how it was computed: per iteration,
// the Laplace mechanism of each independent draw agent 0's messages carry
// (K links under random noise, one draw under graph-homomorphic noise, the
// masks of weight a_0k under local graph-homomorphic ones), with agent 0's
// sensitivity bound B + B′ + ‖w^o − w′^o‖ (its own error, not the network's,
// on the same high-probability event) and ℓ1 (exact for per-coordinate
// Laplace noise), composed over the iterations; for Gaussian noise the same
// draws composed as one Gaussian mechanism. It is "" where the view reveals
// agent 0's value (no finite ε applies) or there is no noise.
func (ar *auditRun) chain(sc *scenarios.Scenario, agents, dim int) (float64, string) {
	acc := sc.Privacy.Accountant
	draws := ar.auditor.Draws()
	if acc == nil || sc.Privacy.Scheme == "none" || math.IsInf(draws, 1) {
		return 0, ""
	}
	T := sc.Iterations
	sigma := math.Sqrt(sc.Privacy.Variance)
	bound := acc.B + acc.BPrime + ar.dist
	if sc.Privacy.Mechanism == "gaussian" {
		mu := math.Sqrt(draws*float64(T)) * bound / sigma
		return accountant.GaussianEpsilon(mu, acc.Delta), fmt.Sprintf("%g independent Gaussian draws of agent 0's value per iteration, sensitivity B + B′ + ‖w^o − w′^o‖ = %g, composed over %d iterations (analytic Gaussian mechanism at δ = %g)", draws, bound, T, acc.Delta)
	}
	eps := draws * math.Sqrt(float64(dim)) * math.Sqrt2 / sigma * bound * float64(T)
	return eps, fmt.Sprintf("%g independent Laplace draws of agent 0's value per iteration (weighted), sensitivity √M·(B + B′ + ‖w^o − w′^o‖) = %g in ℓ1, composed over %d iterations", draws, math.Sqrt(float64(dim))*bound, T)
}
