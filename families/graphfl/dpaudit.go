package graphfl

import (
	"fmt"
	"math"

	"maple/actors"
	agraphfl "maple/actors/graphfl"
	"maple/algorithms/data"
	"maple/algorithms/graphfl"
	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/privacy/audit"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// This file is the family's side of privacy.audit (scenarios.Audit): a
// many-run audit of seed 002's server-level guarantee (Definition 1,
// Theorem 3, thesis eq. 3.58), whose canary is the neighbouring dataset of
// its definition — client (0, 0)'s dataset replaced by D′, the one the
// accountant states its bound with (inputs.NeighbourOptimum) — and whose
// auditor (graphfl.Auditor) scores each run by the log-likelihood ratio of
// server 0's messages to the other servers in its view.

// auditCanary is the canary kind: client (0, 0)'s dataset replaced by the
// neighbouring one.
const auditCanary = "dataset"

// auditSupport is what the family offers to privacy.audit.
var auditSupport = &scenarios.AuditSupport{
	Methods:  []string{scenarios.AuditManyRun},
	Canaries: []string{auditCanary},
	Views:    audit.ViewNames(),
}

// auditViews describes each view for the summary.
var auditViews = map[audit.View]string{
	audit.WireView:    "wire: every message on server 0's links to the other servers, as the trace records them (the observer of Definition 1); it does not see what server 0 receives, so it predicts server 0's aggregates under D and D′ with the noise-free recursion on each, with the run's sampling and batches",
	audit.NetworkView: "network: every message between servers (white-box over the exchange, the history the proof's ratio chain conditions on); it replays every federated unit and combines each server's model from the messages it receives, server 0's under D and under D′: the exact conditional means of server 0's messages",
}

// validatePrivacyAudit refuses what the auditor cannot see or replay,
// naming the field.
func validatePrivacyAudit(v *scenarios.Validator, sc *scenarios.Scenario) {
	const f = scenarios.FieldAudit
	switch g := graphflParams(sc); {
	case g.Servers < 2:
		v.Fail("algorithm.graphfl.servers", "%s audits the exchange between servers; one server exchanges nothing", f)
	case clientNoise(sc) != "none":
		v.Fail(f, "audits the servers' exchange (eq. 3.58); client-level noise (%s), which no message between servers shows, is not audited", clientNoise(sc))
	case sc.Loss.Optimum == "none":
		v.Fail("loss.optimum", "%s inserts the neighbouring dataset of the accountant, which maple builds with its optimum; loss.optimum none has none", f)
	case sc.Privacy.SelfNoise && sc.Privacy.Audit.View == audit.NetworkView.String():
		v.Fail("privacy.self_noise", "the network view replays every server's self term, which self noise hides from every message; audit it with view wire")
	}
}

// auditRun is a run's audit: the neighbouring dataset and its auditor.
type auditRun struct {
	alt     *data.Set
	dist    float64 // ‖w^o − w′^o‖
	auditor *graphfl.Auditor
}

// newAuditRun builds the run's neighbouring dataset and auditor, and returns
// the datasets the run trains on: D′ for client (0, 0) when the canary is in.
func newAuditRun(j *run.Job, p *inputs.Problem, cfg graphfl.Config, prob graphfl.Problem) (*auditRun, []*data.Set, error) {
	c := j.Curve
	sc := c.Scenario
	view, err := audit.ParseView(j.Audit().View)
	if err != nil {
		return nil, nil, c.Errorf(scenarios.FieldAudit+".view", "%v", err)
	}
	seed := j.RunSeed // the run's data seed, as the runner draws the data
	if sc.Data.Regenerate == "once" {
		seed = rng.RunSeed(sc.Seed, 0)
	}
	sets, dist, err := inputs.NeighbourOptimum(j.Context(), c, j.Dir, seed, p)
	if err != nil {
		return nil, nil, err
	}
	ar := &auditRun{alt: sets[0], dist: dist}
	if ar.auditor, err = graphfl.NewAuditor(j.Context(), cfg, prob, ar.alt, view, j.RunSeed, sc.Iterations); err != nil {
		return nil, nil, c.Errorf(scenarios.FieldAudit, "%v", err)
	}
	if j.CanaryIn() {
		return ar, sets, nil
	}
	return ar, p.Sets, nil
}

// spawn adds the auditor's tap to an actor run whose servers start at first.
func (ar *auditRun) spawn(r *actors.Run, first actors.ID) {
	agraphfl.NewAuditTap(ar.auditor, first).Spawn(r)
}

// record records the run's scores and the accountant's bound they are
// compared with, and describes the audit in the run's details (the summary
// shows run 0's).
func (ar *auditRun) record(j *run.Job, t *rundir.Table, net *inputs.Network, dim int) error {
	sc := j.Curve.Scenario
	a := ar.auditor
	if a.Scored() != sc.Iterations {
		return fmt.Errorf("the auditor scored %d of %d rounds", a.Scored(), sc.Iterations)
	}
	j.RecordAudit(run.AuditRecord{Scores: run.AtRows(t, a.Score)})
	upper := ar.upper(sc, t, net, dim)
	j.RecordAuditUpper(upper)
	view, _ := audit.ParseView(sc.Privacy.Audit.View)
	d := map[string]any{
		"victim":           "server 0, whose client 0 holds the canary",
		"canary":           "dataset: client (0, 0)'s whole dataset replaced by D′, another draw of the generator (the accountant's neighbouring dataset), in the odd runs",
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
		// The wire view's predictions are the same in every run, and so is
		// its divergence: run 0 says it.
		d["divergence"] = rundir.Number(a.Divergence())
	}
	if chain, how := ar.chain(sc, dim); how != "" {
		d["chain_epsilon_final"], d["chain"] = rundir.Number(chain), how
		d["chain_sensitivity_bound"] = sc.Privacy.Accountant.B + sc.Privacy.Accountant.BPrime + ar.dist
	}
	j.Stats.Details["privacy_audit"] = d
	return nil
}

// upper returns maple's accountant of the audited guarantee after each row,
// as the family's privacy report states it: thesis eq. 3.58 composed over the
// releases of server 0's aggregate per round (one under graph-homomorphic and
// broadcast noise, one per neighbour under random and local
// graph-homomorphic noise) for Laplace noise (δ = 0), the exact composed
// Gaussian of those releases at privacy.accountant.delta for Gaussian noise,
// +∞ without noise.
func (ar *auditRun) upper(sc *scenarios.Scenario, t *rundir.Table, net *inputs.Network, dim int) run.AuditUpper {
	u := run.AuditUpper{Relation: "client-level replace-one: client (0, 0)'s whole dataset replaced", Sampling: "none (the sampling of clients is known to the adversary)"}
	acc := sc.Privacy.Accountant
	P := graphflParams(sc).Servers
	sigma := math.Sqrt(sc.Privacy.Variance)
	releases := 1
	if s := serverScheme(sc); s == graphfl.Random || s == graphfl.LocalGraphHomomorphic {
		releases = net.Degree[0]
	}
	var eps func(i int) float64
	switch {
	case serverScheme(sc) == graphfl.None || acc == nil:
		u.Accountant = "none: the messages carry no noise (ε = ∞)"
		eps = func(int) float64 { return math.Inf(1) }
	case sc.Privacy.Mechanism == "gaussian":
		u.Accountant, u.Delta = "analytic Gaussian mechanism of server 0's releases per round, sensitivity B + B′ + √P‖w^o − w′^o‖ (maple's accountant)", acc.Delta
		bound := accountant.SensitivityBound(P, acc.B, acc.BPrime, ar.dist)
		eps = func(i int) float64 {
			return accountant.GaussianEpsilon(accountant.GaussianComposedMu(bound, sigma, releases*i), acc.Delta)
		}
	default:
		norm, _ := accountant.ParseNorm(acc.Norm) // validated
		factor := float64(releases) * accountant.NormFactor(norm, dim)
		u.Accountant = "thesis eq. 3.58, (√2/σ_g)(B + B′ + √P‖w^o − w′^o‖)(i + 1) per release of server 0's aggregate (maple's accountant)"
		eps = func(i int) float64 {
			return factor * accountant.GraphFLEpsilon(P, sigma, acc.B, acc.BPrime, ar.dist, i-1)
		}
	}
	u.Epsilon = run.EpsilonAtRows(t, eps)
	return u
}

// chain returns the ratio chain of the proof of Theorem 3 stopped before its
// last step, for the view's actual noise, and how it was computed: per round,
// the Laplace mechanism of each independent draw server 0's messages carry,
// with server 0's sensitivity bound B + B′ + ‖w^o − w′^o‖ (its own error, on
// the same high-probability event) and ℓ1 (exact for per-coordinate Laplace
// noise), composed over the rounds; for Gaussian noise the same draws
// composed as one Gaussian mechanism. It is "" where the view reveals the
// aggregate or there is no noise.
func (ar *auditRun) chain(sc *scenarios.Scenario, dim int) (float64, string) {
	acc := sc.Privacy.Accountant
	draws := ar.auditor.Draws()
	if acc == nil || serverScheme(sc) == graphfl.None || math.IsInf(draws, 1) {
		return 0, ""
	}
	T := sc.Iterations
	sigma := math.Sqrt(sc.Privacy.Variance)
	bound := acc.B + acc.BPrime + ar.dist
	if sc.Privacy.Mechanism == "gaussian" {
		mu := math.Sqrt(draws*float64(T)) * bound / sigma
		return accountant.GaussianEpsilon(mu, acc.Delta), fmt.Sprintf("%g independent Gaussian draws of server 0's aggregate per round, sensitivity B + B′ + ‖w^o − w′^o‖ = %g, composed over %d rounds (analytic Gaussian mechanism at δ = %g)", draws, bound, T, acc.Delta)
	}
	eps := draws * math.Sqrt(float64(dim)) * math.Sqrt2 / sigma * bound * float64(T)
	return eps, fmt.Sprintf("%g independent Laplace draws of server 0's aggregate per round (weighted), sensitivity √M·(B + B′ + ‖w^o − w′^o‖) = %g in ℓ1, composed over %d rounds", draws, math.Sqrt(float64(dim))*bound, T)
}
