package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"maple/rundir"
	"maple/scenarios"
)

// This file is the runner's side of privacy.audit (scenarios.Audit): what a
// family's run records for the audit, and how the records of a curve's runs
// become the lower bound on ε that the summary reports beside the
// accountant's upper bound (auditsummary.go). The family inserts the canary
// and scores the auditor's view; the runner decides which runs hold the
// canary of a many-run audit and does the statistics, so that every family's
// audit is read the same way.

// AuditRecord is what one run of an audited curve records.
type AuditRecord struct {
	// Scores is a many-run audit's score of the run after each row of its
	// metrics table: the auditor's statistic on its view up to that
	// iteration, higher meaning "the canary is in" (0 at iteration 0).
	Scores []float64 `json:"scores,omitempty"`
	// Included says, for each canary of a one-run audit, whether it was
	// included in the run, and CanaryScores[k][c] is the auditor's score
	// of canary c after row k of the metrics table.
	Included     []bool      `json:"included,omitempty"`
	CanaryScores [][]float64 `json:"canary_scores,omitempty"`
	// Rounds, for a family whose AuditUpper has a Model, is a many-run
	// audit's observation of each round (the view reduced to one number
	// per round of the model), and CanaryRounds[c] a one-run audit's of
	// canary c: what the measured-noise statistic reads.
	Rounds       []float64   `json:"rounds,omitempty"`
	CanaryRounds [][]float64 `json:"canary_rounds,omitempty"`
}

// AuditModel is the mechanism of one round as the measured-noise statistic
// (privacy/manyrun.GaussianShift) assumes it: the round's observation is
// shifted by Shift when the canary takes part, which the round's sampling
// makes happen with probability Rate, under Gaussian noise of the declared
// scale Noise; the statistic measures Shift/σ, and the accountant composes
// rounds of the Gaussian mechanism at the measured noise.
type AuditModel struct {
	Shift float64 `json:"shift"`
	Noise float64 `json:"noise"`
	Rate  float64 `json:"rate"`
	// Sampling and Relation name the accountant's (poisson or fixed;
	// add-remove or replace-one: a canary that is out is then shifted by
	// −Shift).
	Sampling string `json:"sampling"`
	Relation string `json:"relation"`
	// RoundsPerIteration is how many rounds one iteration of the metrics
	// table holds.
	RoundsPerIteration int `json:"rounds_per_iteration"`
}

// AuditUpper is the upper bound the audit is compared with: the ε the
// family's accountant gives after each row of the metrics table, at δ.
type AuditUpper struct {
	// Accountant names the accountant, Relation the neighbouring relation
	// it assumes and Sampling how it models the sampling.
	Accountant string `json:"accountant"`
	Relation   string `json:"relation"`
	Sampling   string `json:"sampling"`
	// Delta is the δ of the guarantee; the audit bounds ε at the same δ.
	Delta float64 `json:"delta"`
	// Epsilon is ε after each row of the metrics table (0 at iteration 0);
	// nil when the family has no accountant for the audited mechanism, and
	// the audit is then reported alone at Delta.
	Epsilon []float64 `json:"-"` // auditWire carries it
	// Model, if set, is the mechanism of a round, which lets the runner
	// measure its noise from the records' Rounds or CanaryRounds.
	Model *AuditModel `json:"model,omitempty"`
}

// AuditDetail is the key of an Outcome's details that carries the run's
// AuditRecord from an executor in another process; the slash keeps it
// apart from the families' keys.
const AuditDetail = "audit/record"

// Audit returns the curve's privacy.audit section, nil when it has none.
func (j *Job) Audit() *scenarios.Audit { return j.Curve.Scenario.Privacy.Audit }

// CanaryIn reports whether the canary of a many-run audit is in this run:
// the odd runs hold it and the even ones do not, so that the two samples
// differ in size by at most one.
func (j *Job) CanaryIn() bool { return j.Run%2 == 1 }

// RecordAudit keeps what the run records for the curve's audit. A family
// that declares an audit must call it in every run of an audited curve.
func (j *Job) RecordAudit(r AuditRecord) { j.Stats.audit = &r }

// RecordAuditUpper keeps the accountant's bound the audit is compared with
// (run 0's is reported).
func (j *Job) RecordAuditUpper(u AuditUpper) { j.Stats.auditUpper = &u }

// AuditRecords returns what the job recorded for its curve's audit, nil
// and nil before it recorded anything: what a test of a family's audit
// reads back of each run before the runner aggregates the runs.
func (j *Job) AuditRecords() (*AuditRecord, *AuditUpper) { return j.Stats.audit, j.Stats.auditUpper }

// checkAudit verifies, after a family's run, that it recorded what the
// curve's audit asks for: a family that accepts privacy.audit and ignores it
// is a programming error, which must not pass as a run without an audit.
func (j *Job) checkAudit() error {
	a := j.Audit()
	if a == nil {
		return nil
	}
	r := j.Stats.audit
	rows := len(j.Table.Iterations)
	switch {
	case r == nil:
		return errors.New("the family accepted privacy.audit but recorded no audit")
	case j.Stats.auditUpper == nil:
		return errors.New("the family accepted privacy.audit but recorded no δ to audit at")
	case j.Stats.auditUpper.Epsilon != nil && len(j.Stats.auditUpper.Epsilon) != rows:
		return fmt.Errorf("the audit's upper bound has %d rows, the metrics %d", len(j.Stats.auditUpper.Epsilon), rows)
	case a.Method == scenarios.AuditManyRun && len(r.Scores) != rows:
		return fmt.Errorf("the many-run audit recorded %d scores for %d rows", len(r.Scores), rows)
	case a.Method == scenarios.AuditOneRun && len(r.CanaryScores) != rows:
		return fmt.Errorf("the one-run audit recorded scores for %d rows, the metrics have %d", len(r.CanaryScores), rows)
	}
	if a.Method == scenarios.AuditOneRun {
		for k, s := range r.CanaryScores {
			if len(s) != len(r.Included) {
				return fmt.Errorf("the one-run audit scored %d canaries at row %d, of %d", len(s), k, len(r.Included))
			}
		}
	}
	if m := j.Stats.auditUpper.Model; m != nil {
		rounds := j.Table.Iterations[rows-1] * m.RoundsPerIteration
		switch {
		case m.RoundsPerIteration < 1:
			return fmt.Errorf("the audit's model has %d rounds per iteration", m.RoundsPerIteration)
		case a.Method == scenarios.AuditManyRun && len(r.Rounds) != rounds:
			return fmt.Errorf("the many-run audit observed %d rounds of %d", len(r.Rounds), rounds)
		case a.Method == scenarios.AuditOneRun && len(r.CanaryRounds) != len(r.Included):
			return fmt.Errorf("the one-run audit observed the rounds of %d canaries of %d", len(r.CanaryRounds), len(r.Included))
		}
		for c, x := range r.CanaryRounds {
			if len(x) != rounds {
				return fmt.Errorf("the one-run audit observed %d rounds of canary %d, of %d", len(x), c, rounds)
			}
		}
	}
	return nil
}

// encodeAudit adds the run's audit record and bound to an outcome's
// details, and decodeAudit takes them back out.
func (j *Job) encodeAudit(details map[string]json.RawMessage) error {
	if j.Stats.audit == nil {
		return nil
	}
	r := j.Stats.audit
	w := auditWire{Scores: bitsOf(r.Scores), Included: r.Included, Upper: j.Stats.auditUpper, Rounds: bitsOf(r.Rounds)}
	for _, s := range r.CanaryScores {
		w.CanaryScores = append(w.CanaryScores, bitsOf(s))
	}
	for _, s := range r.CanaryRounds {
		w.CanaryRounds = append(w.CanaryRounds, bitsOf(s))
	}
	if u := j.Stats.auditUpper; u != nil {
		w.UpperEpsilon = bitsOf(u.Epsilon)
	}
	b, err := json.Marshal(w)
	if err != nil {
		return err
	}
	details[AuditDetail] = b
	return nil
}

func (j *Job) decodeAudit(details map[string]json.RawMessage) error {
	b, ok := details[AuditDetail]
	if !ok {
		return nil
	}
	delete(details, AuditDetail)
	var w auditWire
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("curve %q, run %d: audit record: %w", j.Curve.Label, j.Run, err)
	}
	r := &AuditRecord{Scores: floatsOf(w.Scores), Included: w.Included, Rounds: floatsOf(w.Rounds)}
	for _, s := range w.CanaryScores {
		r.CanaryScores = append(r.CanaryScores, floatsOf(s))
	}
	for _, s := range w.CanaryRounds {
		r.CanaryRounds = append(r.CanaryRounds, floatsOf(s))
	}
	if w.Upper != nil {
		w.Upper.Epsilon = floatsOf(w.UpperEpsilon)
	}
	j.Stats.audit, j.Stats.auditUpper = r, w.Upper
	return nil
}

// auditWire is an outcome's audit record as JSON, its numbers as the bits
// of their IEEE 754 encoding: exact, and ±Inf (a vacuous bound) included.
type auditWire struct {
	Scores       []uint64    `json:"scores,omitempty"`
	Included     []bool      `json:"included,omitempty"`
	CanaryScores [][]uint64  `json:"canary_scores,omitempty"`
	Rounds       []uint64    `json:"rounds,omitempty"`
	CanaryRounds [][]uint64  `json:"canary_rounds,omitempty"`
	Upper        *AuditUpper `json:"upper,omitempty"`
	UpperEpsilon []uint64    `json:"upper_epsilon,omitempty"`
}

// bitsOf returns the IEEE 754 bits of x, and floatsOf the numbers back.
func bitsOf(x []float64) []uint64 {
	if x == nil {
		return nil
	}
	b := make([]uint64, len(x))
	for i, v := range x {
		b[i] = math.Float64bits(v)
	}
	return b
}

func floatsOf(b []uint64) []float64 {
	if b == nil {
		return nil
	}
	x := make([]float64, len(b))
	for i, v := range b {
		x[i] = math.Float64frombits(v)
	}
	return x
}

// AtRows returns f at the iteration of every row of t: a run's score after
// each row, say.
func AtRows(t *rundir.Table, f func(iteration int) float64) []float64 {
	out := make([]float64, len(t.Iterations))
	for k, it := range t.Iterations {
		out[k] = f(it)
	}
	return out
}

// EpsilonAtRows returns an accountant's ε after each row of t: eps at the
// row's iteration, and 0 at iteration 0, before anything is released.
func EpsilonAtRows(t *rundir.Table, eps func(iteration int) float64) []float64 {
	return AtRows(t, func(it int) float64 {
		if it == 0 {
			return 0
		}
		return eps(it)
	})
}
