package graphfl

import (
	"math"

	"maple/actors"
	agraphfl "maple/actors/graphfl"
	"maple/algorithms/data"
	"maple/algorithms/graphfl"
	"maple/families/internal/dpaudit"
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

// auditWording names what the audit is about in the run's details.
var auditWording = dpaudit.Wording{
	Victim: "server 0, whose client 0 holds the canary",
	Canary: "dataset: client (0, 0)'s whole dataset replaced by D′, another draw of the generator (the accountant's neighbouring dataset), in the odd runs",
	Views: map[audit.View]string{
		audit.WireView:    "wire: every message on server 0's links to the other servers, as the trace records them (the observer of Definition 1); it does not see what server 0 receives, so it predicts server 0's aggregates under D and D′ with the noise-free recursion on each, with the run's sampling and batches",
		audit.NetworkView: "network: every message between servers (white-box over the exchange, the history the proof's ratio chain conditions on); it replays every federated unit and combines each server's model from the messages it receives, server 0's under D and under D′: the exact conditional means of server 0's messages",
	},
	Value: "server 0's aggregate",
	Round: "round",
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
	dpaudit.Run
	auditor *graphfl.Auditor
}

// newAuditRun builds the run's neighbouring dataset and auditor, and returns
// the datasets the run trains on: D′ for client (0, 0) when the canary is in.
func newAuditRun(j *run.Job, p *inputs.Problem, cfg graphfl.Config, prob graphfl.Problem) (*auditRun, []*data.Set, error) {
	view, dp, sets, err := dpaudit.New(j, p)
	if err != nil {
		return nil, nil, err
	}
	ar := &auditRun{Run: dp}
	if ar.auditor, err = graphfl.NewAuditor(j.Context(), cfg, prob, ar.Alt, view, j.RunSeed, j.Curve.Scenario.Iterations); err != nil {
		return nil, nil, j.Curve.Errorf(scenarios.FieldAudit, "%v", err)
	}
	return ar, sets, nil
}

// spawn adds the auditor's tap to an actor run whose servers start at first.
func (ar *auditRun) spawn(r *actors.Run, first actors.ID) {
	agraphfl.NewAuditTap(ar.auditor, first).Spawn(r)
}

// record records the run's scores and the accountant's bound they are
// compared with, and describes the audit in the run's details.
func (ar *auditRun) record(j *run.Job, t *rundir.Table, net *inputs.Network, dim int) error {
	sc := j.Curve.Scenario
	return ar.Record(j, t, ar.auditor, auditWording, ar.upper(sc, t, net, dim), serverScheme(sc) != graphfl.None, dim)
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
		bound := accountant.SensitivityBound(P, acc.B, acc.BPrime, ar.Dist)
		eps = func(i int) float64 {
			return accountant.GaussianEpsilon(accountant.GaussianComposedMu(bound, sigma, releases*i), acc.Delta)
		}
	default:
		norm, _ := accountant.ParseNorm(acc.Norm) // validated
		factor := float64(releases) * accountant.NormFactor(norm, dim)
		u.Accountant = "thesis eq. 3.58, (√2/σ_g)(B + B′ + √P‖w^o − w′^o‖)(i + 1) per release of server 0's aggregate (maple's accountant)"
		eps = func(i int) float64 {
			return factor * accountant.GraphFLEpsilon(P, sigma, acc.B, acc.BPrime, ar.Dist, i-1)
		}
	}
	u.Epsilon = run.EpsilonAtRows(t, eps)
	return u
}
