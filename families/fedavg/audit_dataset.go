package fedavg

import (
	"fmt"
	"math"

	"maple/actors"
	afedavg "maple/actors/fedavg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// This file is FedAvg's many-run audit of the thesis's privatized FedAvg
// (privacy.scheme model-noise or update-noise, thesis eqs. 2.56, 2.59–2.60)
// against its ε(i) (eq. 2.69): the canary is the neighbouring dataset of
// §2.5 — agent 0's local dataset D replaced by D′, the one the accountant
// states its bound with (inputs.NeighbourProblem) — and the auditor
// (fedavg.DatasetAuditor) scores each run by the log-likelihood ratio of
// agent 0's noisy replies given the models the server sent it, as an
// observer of agent 0's link sees them.

// The dataset canary and the view it is scored on.
const (
	// canaryDataset is agent 0's local dataset replaced by the neighbouring
	// one, in the odd runs.
	canaryDataset = "dataset"
	// viewWire is the messages on agent 0's link to the server: the models
	// the server sends it and its noisy replies.
	viewWire = "wire"
)

// wireView describes the view for the summary.
const wireView = "wire: every message on agent 0's link to the server, as the trace records them — the global model the server sends agent 0 in each round it takes part in (with its probability p_k under importance sampling) and agent 0's noisy reply (the observer of thesis Definition 2.1, who sees agent 0's noisy messages); it replays agent 0's local training from each model it sees, on D and on D′, with agent 0's schedule and mini-batch streams (the sampling of data is not privacy noise: eq. 2.69 does not rest on it), which gives the exact means of the reply under either dataset"

// validateDatasetAudit checks the dataset canary and the wire view against
// the rest of the scenario, naming the field: what the auditor cannot see or
// replay is refused.
func validateDatasetAudit(v *scenarios.Validator, sc *scenarios.Scenario) {
	a := sc.Privacy.Audit
	const f = scenarios.FieldAudit
	if a == nil {
		return
	}
	if a.View == viewWire && a.Canary != canaryDataset {
		v.Fail(f+".view", "view wire scores agent 0's replies under its two candidate datasets, the canary dataset; canary %s is scored on the released models (view white-box or final)", a.Canary)
	}
	if a.Canary != canaryDataset {
		return
	}
	draft := draftConfig(sc)
	_, private := draft.Client.(fedavg.PrivateClient)
	sa := sc.Privacy.SecureAggregation
	switch {
	case a.View != viewWire:
		v.Fail(f+".view", "canary dataset is scored on agent 0's link to the server: view wire, not %s", a.View)
	case a.Method != scenarios.AuditManyRun:
		v.Fail(f+".method", "canary dataset replaces agent 0's whole dataset, one canary per run: method many-run")
	case sc.Privacy.DP != nil:
		v.Fail(f+".canary", "canary dataset audits the privatized replies of privacy.scheme (thesis eq. 2.69); DP-FedAvg (privacy.dp) is audited with canary client")
	case sa != nil && sa.Protocol != "none":
		v.Fail(scenarios.FieldSecureAggregation, "%s with canary dataset reads agent 0's replies on its link, which secure aggregation masks", f)
	case sc.Loss.Optimum == "none":
		v.Fail("loss.optimum", "%s inserts the neighbouring dataset of the accountant, which maple builds with its optimum; loss.optimum none has none", f)
	case scenarios.UsesSystems(sc):
		v.Fail(f, "the auditor replays agent 0 on the ideal network, where every model sent gets its reply; the scenario sets systems fields of network (or output.x_axis time)")
	case draft.Adversarial():
		v.Fail(fieldAdversary, "%s replays agent 0 as an honest client", f)
	case draft.Async.Mode != fedavg.Sync:
		v.Fail(fieldServer, "%s replays agent 0 under a synchronous server", f)
	case draft.Collection().Early():
		v.Fail(fieldCollect, "%s replays agent 0 under a server that waits for every reply", f)
	case private:
		v.Fail(fieldClient, "%s replays agent 0's training, and would need the noise of client %s", f, fedavgParams(sc).Client.Kind)
	}
}

// wireAudit is a run's dataset audit: the auditor on agent 0's link, and
// what the upper bounds need.
type wireAudit struct {
	auditor *fedavg.DatasetAuditor
	dist    float64 // ‖w^o − w′^o‖
	dim     int
	in      bool
}

// startWireAudit returns the run's dataset audit and the problem the run
// trains on — p, with agent 0's dataset replaced by D′ when the canary is
// in — or nil and p when the curve has no dataset audit. The neighbouring
// dataset comes from the seed of the run's data, so that with
// data.regenerate once every run audits the same pair D, D′.
func startWireAudit(j *run.Job, p *inputs.Problem, cfg *fedavg.Config) (*wireAudit, *inputs.Problem, error) {
	a := j.Audit()
	if a == nil || a.Canary != canaryDataset {
		return nil, p, nil
	}
	c := j.Curve
	seed := j.RunSeed // the run's data seed, as the runner draws the data
	if c.Scenario.Data.Regenerate == "once" {
		seed = rng.RunSeed(c.Scenario.Seed, 0)
	}
	n, err := inputs.NeighbourProblem(j.Context(), c, j.Dir, seed, p)
	if err != nil {
		return nil, nil, err
	}
	w := &wireAudit{dist: n.Distance, dim: len(p.WOpt), in: j.CanaryIn()}
	ref, trained := p.WOpt, p
	if w.in {
		q := *p
		q.Data, q.Sets = n.Data, n.Sets
		ref, trained = n.Optimum, &q
	}
	if w.auditor, err = fedavg.NewDatasetAuditor(cfg, [2]*data.Set{p.Data.Set(fedavg.AuditVictim), n.Set}, p.Loss, j.RunSeed, ref); err != nil {
		return nil, nil, c.Errorf(scenarios.FieldAudit, "%v", err)
	}
	return w, trained, nil
}

// tap returns the auditor as the reference engine's wiretap, nil without an
// audit.
func (w *wireAudit) tap() fedavg.WireObserver {
	if w == nil {
		return nil
	}
	return w.auditor
}

// spawn places the auditor on agent 0's link of an actor run: call it
// before the run's Spawn, and the function it returns with the scheduler's
// ID after. It does nothing without an audit.
func (w *wireAudit) spawn(r *actors.Run) func(sched actors.ID) error {
	if w == nil {
		return func(actors.ID) error { return nil }
	}
	t := afedavg.NewWireTap(r, w.auditor)
	return func(sched actors.ID) error { return t.Attach(r, sched) }
}

// record records the run's scores after every row of t and the accountant's
// bound they are compared with, and describes the audit in the run's
// details (the summary shows run 0's). It does nothing without an audit.
func (w *wireAudit) record(j *run.Job, t *rundir.Table) error {
	if w == nil {
		return nil
	}
	a := w.auditor
	if err := a.Finish(); err != nil {
		return err
	}
	sc := j.Curve.Scenario
	j.RecordAudit(run.AuditRecord{Scores: run.AtRows(t, a.Score)})
	upper := w.upper(sc, t)
	j.RecordAuditUpper(upper)
	d := map[string]any{
		"victim":           fedavg.AuditVictim,
		"canary":           "dataset: agent 0's whole local dataset replaced by D′, another draw of the generator (the accountant's neighbouring dataset), in the odd runs",
		"view":             wireView,
		"statistic":        a.Statistic(),
		"exact":            true,
		"score_final":      a.Score(sc.Iterations),
		"divergence":       rundir.Number(a.Divergence()),
		"tasks":            len(a.Tasks()),
		"optimum_distance": w.dist,
		"accountant":       upper.Accountant,
		"epsilon_final":    rundir.Number(upper.Epsilon[len(upper.Epsilon)-1]),
	}
	w.sensitivity(d, sc)
	j.Stats.Details["privacy_audit"] = d
	return nil
}

// sensitivity adds to d what the run says of the sensitivity bound eq. 2.69
// rests on: agent 0's conditional sensitivity (the shift of its reply's
// mean between D and D′, given the model it was sent) against B + B′ +
// ‖w^o − w′^o‖, which the thesis derives for the distance between two
// models and applies to the replies (spec §2.4, caveat 1); the event of
// eq. 2.64 — the error of the model sent to agent 0 within B of w^o (the
// runs on D) or within B′ of w′^o (the runs on D′); and the path's ε: the
// exact ε of the conditional mechanisms of the run's tasks at their
// realised shifts, which holds for this run's path only (the shifts grow
// with the models, without bound for least squares between datasets whose
// Hessians differ).
func (w *wireAudit) sensitivity(d map[string]any, sc *scenarios.Scenario) {
	a := w.auditor
	acc := sc.Privacy.Accountant
	var max2, max1, maxErr, sum1, sum2 float64
	var over, outside int
	bound, radius := math.Inf(1), math.Inf(1)
	if acc != nil {
		bound = acc.B + acc.BPrime + w.dist
		radius = acc.B
		if w.in {
			radius = acc.BPrime
		}
	}
	for _, t := range a.Tasks() {
		max2, max1, maxErr = math.Max(max2, t.Shift2), math.Max(max1, t.Shift1), math.Max(maxErr, t.Error)
		sum1 += t.Shift1
		sum2 += t.Shift2 * t.Shift2
		if t.Shift2 > bound {
			over++
		}
		if t.Error > radius {
			outside++
		}
	}
	d["sensitivity_max"] = max2
	d["sensitivity_max_l1"] = max1
	d["error_max"] = maxErr
	if acc == nil {
		return
	}
	d["sensitivity_bound"] = bound
	d["tasks_over_bound"] = over
	d["tasks_outside_event"] = outside
	sigma := math.Sqrt(sc.Privacy.Variance)
	switch {
	case a.Revealed():
		d["path_epsilon_final"] = rundir.Number(math.Inf(1))
	case sc.Privacy.Mechanism == "gaussian":
		d["path_epsilon_final"] = rundir.Number(accountant.GaussianEpsilon(math.Sqrt(sum2)/sigma, acc.Delta))
	default:
		d["path_epsilon_final"] = rundir.Number(sum1 / a.Law().Scale())
		d["epsilon_l1_final"] = rundir.Number(accountant.NormFactor(accountant.L1, w.dim) * accountant.FederatedEpsilon(sigma, acc.B, acc.BPrime, w.dist, sc.Iterations))
	}
}

// upper returns maple's accountant of the audited guarantee after each row,
// as the family's privacy report states it (run.Job.AccountFor with
// Exposure{Federated: true}): thesis eq. 2.69, (√2/σ_g)(B + B′ +
// ‖w^o − w′^o‖)·i in the scenario's norm, for Laplace noise (δ = 0, the
// claim's pure ε); the exact composed Gaussian of i replies of that
// sensitivity at privacy.accountant.delta for Gaussian noise; +∞ without
// noise. Both count agent 0 in every round, the claim's worst case.
func (w *wireAudit) upper(sc *scenarios.Scenario, t *rundir.Table) run.AuditUpper {
	u := run.AuditUpper{Relation: "agent-level replace-one: agent 0's whole local dataset replaced",
		Sampling: "none (worst case: agent 0 takes part in every round)"}
	acc := sc.Privacy.Accountant
	sigma := math.Sqrt(sc.Privacy.Variance)
	var eps func(i int) float64
	switch {
	case sc.Privacy.Scheme == "none" || acc == nil:
		u.Accountant = "none: the replies carry no noise (ε = ∞)"
		eps = func(int) float64 { return math.Inf(1) }
	case sc.Privacy.Mechanism == "gaussian":
		u.Accountant, u.Delta = "analytic Gaussian mechanism of agent 0's i replies, sensitivity B + B′ + ‖w^o − w′^o‖ (maple's accountant)", acc.Delta
		bound := accountant.SensitivityBound(1, acc.B, acc.BPrime, w.dist)
		eps = func(i int) float64 {
			return accountant.GaussianEpsilon(accountant.GaussianComposedMu(bound, sigma, i), acc.Delta)
		}
	default:
		norm, _ := accountant.ParseNorm(acc.Norm) // validated
		factor := accountant.NormFactor(norm, w.dim)
		u.Accountant = fmt.Sprintf("thesis eq. 2.69, (√2/σ_g)(B + B′ + ‖w^o − w′^o‖)·i in the %s norm (maple's accountant)", acc.Norm)
		eps = func(i int) float64 {
			return factor * accountant.FederatedEpsilon(sigma, acc.B, acc.BPrime, w.dist, i)
		}
	}
	u.Epsilon = run.EpsilonAtRows(t, eps)
	return u
}
