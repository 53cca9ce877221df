package diffusion

import (
	"math"

	"maple/actors"
	adiffusion "maple/actors/diffusion"
	"maple/algorithms/data"
	"maple/algorithms/diffusion"
	"maple/families/internal/dpaudit"
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

// auditWording names what the audit is about in the run's details.
var auditWording = dpaudit.Wording{
	Victim: diffusion.Victim,
	Canary: "dataset: agent 0's whole dataset replaced by D′, another draw of the generator (the accountant's neighbouring dataset), in the odd runs",
	Views: map[audit.View]string{
		audit.WireView:    "wire: every message on agent 0's outgoing links, as the trace records them (the observer of paper 001's Definition 1); it does not see what agent 0 receives, so it predicts agent 0's values under D and D′ with the noise-free recursion on each",
		audit.NetworkView: "network: every message on every link (white-box, the history the ratio chain of eq. 30 conditions on); it replays every agent's recursion from the messages it receives, agent 0's under D and under D′: the exact conditional means of agent 0's messages",
	},
	Value: "agent 0's value",
	Round: "iteration",
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
	dpaudit.Run
	auditor *diffusion.Auditor
}

// newAuditRun builds the run's neighbouring dataset and auditor, and returns
// the datasets the run trains on: D′ for agent 0 when the canary is in.
func newAuditRun(j *run.Job, p *inputs.Problem, cfg diffusion.Config, prob diffusion.Problem) (*auditRun, []*data.Set, error) {
	view, dp, sets, err := dpaudit.New(j, p)
	if err != nil {
		return nil, nil, err
	}
	ar := &auditRun{Run: dp}
	if ar.auditor, err = diffusion.NewAuditor(cfg, prob, ar.Alt, view, diffusion.SeedStreams(j.RunSeed)); err != nil {
		return nil, nil, j.Curve.Errorf(scenarios.FieldAudit, "%v", err)
	}
	return ar, sets, nil
}

// spawn adds the auditor's tap to an actor run whose agents start at first.
func (ar *auditRun) spawn(r *actors.Run, first actors.ID) {
	adiffusion.NewAuditTap(ar.auditor, first).Spawn(r)
}

// record records the run's scores and the accountant's bound they are
// compared with, and describes the audit in the run's details (every run's
// divergence is what its expected score is).
func (ar *auditRun) record(j *run.Job, t *rundir.Table, agents, dim int) error {
	sc := j.Curve.Scenario
	return ar.Record(j, t, ar.auditor, auditWording, ar.upper(sc, t, agents, dim), sc.Privacy.Scheme != "none", dim)
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
		bound := accountant.SensitivityBound(agents, acc.B, acc.BPrime, ar.Dist)
		eps = func(i int) float64 {
			return accountant.GaussianEpsilon(accountant.GaussianComposedMu(bound, sigma, agents*i), acc.Delta)
		}
	default:
		norm, _ := accountant.ParseNorm(acc.Norm) // validated
		factor := accountant.NormFactor(norm, dim)
		u.Accountant = "paper 001 eq. 31, (√2P/σ_g)(B + B′ + √P‖w^o − w′^o‖)·i (maple's accountant)"
		eps = func(i int) float64 {
			return factor * accountant.DecentralizedEpsilon(agents, sigma, acc.B, acc.BPrime, ar.Dist, i)
		}
	}
	u.Epsilon = run.EpsilonAtRows(t, eps)
	return u
}
