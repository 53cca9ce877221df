package fedavg

import (
	"math"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/canary"
	"maple/algorithms/fedavg"
	"maple/algorithms/rng"
	"maple/privacy/accountant"
	"maple/privacy/auditscore"
	"maple/privacy/ledger"
	"maple/scenarios"
	"maple/scenarios/run"
)

// This file is FedAvg's side of privacy.audit (scenarios/audit.go): the
// canary clients of DP-FedAvg (algorithms/fedavg/audit.go) and the auditor
// that scores them on the models the server releases.

// The canaries and views FedAvg audits.
const (
	// canaryClient is a client that trains no data and replies C·u along
	// its own direction u when it is in: the worst-case client of
	// DP-FedAvg's client-level guarantee.
	canaryClient = "client"
	// viewWhiteBox is every model the server releases, one per round —
	// what DP-FedAvg's guarantee covers (the composition of its rounds);
	// for canary examples, every local step of agent 0 (audit_sgd.go).
	viewWhiteBox = "white-box"
	// viewFinal is the last model only.
	viewFinal = "final"
)

// fedavgAudit lists the audits FedAvg implements.
var fedavgAudit = &scenarios.AuditSupport{
	Methods:  []string{scenarios.AuditManyRun, scenarios.AuditOneRun},
	Canaries: []string{canaryClient, canaryDataset, canaryGradient, canaryExample},
	Views:    []string{viewWhiteBox, viewFinal, viewWire},
}

// validateFedAvgAudit checks privacy.audit against the rest of a FedAvg
// scenario: canary clients need DP-FedAvg, whose guarantee they test.
func validateFedAvgAudit(v *scenarios.Validator, sc *scenarios.Scenario) {
	validateSampleAudit(v, sc)
	validateDatasetAudit(v, sc) // audit_dataset.go
	a := sc.Privacy.Audit
	if a == nil || a.Canary != canaryClient {
		return
	}
	if sc.Privacy.DP == nil {
		v.Fail(scenarios.FieldAudit+".canary", "canary clients test DP-FedAvg's client-level guarantee: they need privacy.dp")
	}
	if fa := fedavgParams(sc); sc.Privacy.DP != nil && sc.Privacy.DP.Relation == "add-remove" && fa.Participation == fedavg.WithoutReplacement.String() && fa.Participants < sc.Data.Agents {
		v.Fail(scenarios.FieldAudit+".canary", "under fixed-size sampling a canary client that is out still takes one of the round's L places, so the runs with and without it are not add/remove neighbours: audit with privacy.dp.relation replace-one or with participation poisson")
	}
	if a.Method == scenarios.AuditOneRun && a.Canaries > sc.Data.Agents {
		v.Fail(scenarios.FieldAudit+".canaries", "at most data.agents = %d of the agents can be canaries, got %d", sc.Data.Agents, a.Canaries)
	}
}

// applyAudit translates privacy.audit into cfg for a run of a curve of
// scenario seed seed, on models of dim coordinates: a many-run audit makes
// agent 0 the canary, in the odd runs, along one direction drawn from the
// scenario's seed (the same in every run, so that what the other clients'
// updates add along it is alike in the runs with and without it); a
// one-run audit makes about Canaries agents canaries. A canary that is out
// replies −C·u when the guarantee is stated for replace-one neighbours.
func applyAudit(a *scenarios.Audit, cfg *fedavg.Config, seed uint64, dim int, in bool) {
	if a == nil || a.Canary != canaryClient {
		return
	}
	au := fedavg.Audit{Opposite: cfg.DP.Relation == accountant.ReplaceOne}
	if a.Method == scenarios.AuditManyRun {
		au.Single, au.In = true, in
		au.Direction = canary.RandomDirection(rng.New(seed, "audit", fedavg.StreamCanary), dim)
	} else {
		au.Canaries = a.Canaries
	}
	cfg.DP.Audit = au
}

// auditor scores the canary clients on the released models. In round i the
// server moves the model by w_{i−1} − w_i = (μ/L)·(S_i + n_i), S_i the sum
// of the clipped updates ψ (clipped to C/μ) and n_i ~ N(0, (zC/μ)²) per
// coordinate; a canary that is in and drawn adds C·u/μ to S_i, so
// x = ⟨w_{i−1} − w_i, u⟩·L is C·b_i + N(0, (zC)²) plus what the other
// clients' updates add along u (little, for a direction u drawn at random
// in many dimensions; alike in every run, for the many-run audit's fixed
// one). The white-box score is the log-likelihood
// ratio of these projections — the Neyman–Pearson test between b_i ~
// Bernoulli(q) and b_i = 0 (add/remove) or −b_i (replace-one); the final
// view scores the projection of w_0 − w_T, the sum of the x_i.
type auditor struct {
	a        *scenarios.Audit
	canaries []fedavg.Canary
	scale    float64 // L
	clip     float64 // C
	sigma    float64 // zC
	rate     float64 // q
	opposite bool
	w0, prev []float64
	step     []float64
	score    []float64 // per canary: the running score (white-box) or projection (final)
	rows     [][]float64
	// rounds[c][i−1] is canary c's projection x in round i (white-box),
	// what the measured-noise statistic reads.
	rounds [][]float64
	table  interface{ Row(int) int }
}

// newAuditor opens every agent's StreamCanary stream, as the agents do, to
// know the canaries.
func newAuditor(a *scenarios.Audit, cfg *fedavg.Config, runSeed uint64, w0 []float64, rows int, table interface{ Row(int) int }) *auditor {
	au := &auditor{a: a, scale: float64(cfg.Draws()), clip: cfg.DP.Clip, sigma: cfg.DP.NoiseMultiplier * cfg.DP.Clip,
		rate: min(cfg.Rate(), 1), opposite: cfg.DP.Audit.Opposite,
		w0: append([]float64(nil), w0...), prev: append([]float64(nil), w0...), step: make([]float64, len(w0)),
		rows: make([][]float64, rows), table: table}
	for k := range cfg.Agents {
		if c := cfg.CanaryOf(k, rng.New(runSeed, fedavg.AgentName(k), fedavg.StreamCanary), len(w0)); c.Canary {
			au.canaries = append(au.canaries, c)
		}
		if cfg.DP.Audit.Single {
			break // agent 0 is the only one
		}
	}
	au.score = make([]float64, len(au.canaries))
	au.rows[0] = make([]float64, len(au.canaries))
	if a.View == viewWhiteBox {
		au.rounds = make([][]float64, len(au.canaries))
	}
	return au
}

// release scores the canaries on the model w the server released in round
// i.
func (au *auditor) release(round int, w []float64) {
	if round <= 0 {
		return
	}
	if au.a.View == viewFinal {
		floats.SubTo(au.step, au.w0, w)
		for c, can := range au.canaries {
			au.score[c] = floats.Dot(au.step, can.Direction) * au.scale
		}
	} else {
		floats.SubTo(au.step, au.prev, w)
		copy(au.prev, w)
		for c, can := range au.canaries {
			x := floats.Dot(au.step, can.Direction) * au.scale
			au.score[c] += au.roundScore([]float64{x})
			au.rounds[c] = append(au.rounds[c], x)
		}
	}
	if row := au.table.Row(round); row > 0 {
		au.rows[row] = append([]float64(nil), au.score...)
	}
}

// roundScore is the log-likelihood ratio of one round's projection.
func (au *auditor) roundScore(x []float64) float64 {
	if au.opposite {
		in, _ := auditscore.Gaussian(x, au.clip, au.sigma, au.rate)
		out, _ := auditscore.Gaussian(x, -au.clip, au.sigma, au.rate)
		return in - out
	}
	s, _ := auditscore.Gaussian(x, au.clip, au.sigma, au.rate) // the arguments are finite and validated
	return s
}

// record gives the runner the run's audit: the canary's scores after every
// row (many-run) or every canary's (one-run), and the ledger's ε beside
// them.
func (au *auditor) record(j *run.Job, l *privacyLog) {
	model := au.model(l.cfg)
	included := make([]bool, len(au.canaries))
	for c, can := range au.canaries {
		included[c] = can.Included
	}
	recordScores(j, au.a.Method, au.rows, included, au.rounds, model != nil)
	rd := l.cfg.Round(l.dim, l.cfg.Draws())
	eps := make([]float64, len(au.rows))
	for k, it := range l.t.Iterations {
		eps[k] = l.eps[it][0]
		if math.IsNaN(eps[k]) {
			eps[k] = math.Inf(1)
		}
	}
	j.RecordAuditUpper(run.AuditUpper{Accountant: ledger.Bound(l.cfg.DP.Accountant, rd), Relation: rd.Mechanism.Relation.String(),
		Sampling: rd.Mechanism.Sampling.String(), Delta: l.cfg.DP.Delta, Epsilon: eps, Model: model})
}

// model is the mechanism of a round as the measured-noise statistic takes
// it: the projection x is shifted by C when the canary is drawn (rate q)
// under Gaussian noise zC. It holds for central DP with a fixed clip and a
// white-box view (one observation per round); nil otherwise — distributed
// DP's noise is a sum of discrete Gaussians, adaptive clipping moves C, the
// final view has no rounds to measure, and canaries more numerous than the
// model's coordinates cannot have nearly orthogonal directions, so that
// each canary's push would show on the others' projections and the units
// would not be independent.
func (au *auditor) model(cfg *fedavg.Config) *run.AuditModel {
	if au.rounds == nil || cfg.DP.Mode != fedavg.CentralDP || cfg.DP.Adaptive != nil || len(au.canaries) > len(au.step) {
		return nil
	}
	rd := cfg.Round(0, cfg.Draws())
	return &run.AuditModel{Shift: au.clip, Noise: au.sigma, Rate: au.rate, Sampling: rd.Mechanism.Sampling.String(),
		Relation: rd.Mechanism.Relation.String(), RoundsPerIteration: 1}
}

// recordScores gives the runner a run's canary scores after every row:
// the one canary's (many-run) or every canary's with its inclusion
// (one-run), a row no observation reached keeping the one before; with
// withRounds, the canaries' projections in every round, which the
// measured-noise statistic reads.
func recordScores(j *run.Job, method string, rows [][]float64, included []bool, rounds [][]float64, withRounds bool) {
	for k := range rows {
		if rows[k] == nil {
			rows[k] = rows[k-1]
		}
	}
	if method == scenarios.AuditManyRun {
		rec := run.AuditRecord{Scores: make([]float64, len(rows))}
		for k, r := range rows {
			rec.Scores[k] = r[0]
		}
		if withRounds {
			rec.Rounds = rounds[0]
		}
		j.RecordAudit(rec)
		return
	}
	rec := run.AuditRecord{Included: included, CanaryScores: rows}
	if withRounds {
		rec.CanaryRounds = rounds
	}
	j.RecordAudit(rec)
}
