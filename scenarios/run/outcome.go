package run

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"maple/rundir"
)

// Outcome is what a finished job produced, as plain data: what an executor
// that ran the job in another process carries back, so that the plan's
// outputs are written from it exactly as from a job run here. The trace, if
// any, travels separately (Job.TracePath).
type Outcome struct {
	// Table is the run's metrics table, encoded (rundir.Table.MarshalBinary).
	Table []byte
	// Messages and Duration are the run's message count and virtual time.
	Messages uint64
	Duration float64
	// Warnings are the run's warnings, in order.
	Warnings []string
	// Details are the facts the summary reports of the run, each encoded as
	// the JSON summary.json holds.
	Details map[string]json.RawMessage
}

// Outcome returns the results of a job that finished.
func (j *Job) Outcome() (*Outcome, error) {
	if j.Table == nil {
		return nil, fmt.Errorf("curve %q, run %d: no results", j.Curve.Label, j.Run)
	}
	table, err := j.Table.MarshalBinary()
	if err != nil {
		return nil, err
	}
	o := &Outcome{Table: table, Messages: j.Stats.messages, Duration: j.Stats.duration,
		Warnings: slices.Clone(j.Stats.Warnings), Details: map[string]json.RawMessage{}}
	for _, k := range slices.Sorted(maps.Keys(j.Stats.Details)) {
		if o.Details[k], err = json.Marshal(rundir.Finite(j.Stats.Details[k])); err != nil {
			return nil, fmt.Errorf("curve %q, run %d: details %q: %w", j.Curve.Label, j.Run, k, err)
		}
	}
	if err := j.encodeAudit(o.Details); err != nil {
		return nil, fmt.Errorf("curve %q, run %d: audit: %w", j.Curve.Label, j.Run, err)
	}
	return o, nil
}

// SetOutcome gives the job the results o of its run elsewhere, as if it
// had run here. (Its trace, if any, must be at TracePath.)
func (j *Job) SetOutcome(o *Outcome) error {
	t := &rundir.Table{}
	if err := t.UnmarshalBinary(o.Table); err != nil {
		return fmt.Errorf("curve %q, run %d: %w", j.Curve.Label, j.Run, err)
	}
	j.Table = t
	j.Stats = RunStats{messages: o.Messages, duration: o.Duration, Warnings: slices.Clone(o.Warnings), Details: map[string]any{}}
	details := maps.Clone(o.Details)
	if err := j.decodeAudit(details); err != nil {
		return err
	}
	for k, v := range details {
		j.Stats.Details[k] = v
	}
	return nil
}

// Position returns the job's index in the plan's list of jobs (Jobs), and
// CurveIndex the index of its curve in the plan.
func (j *Job) Position() int { return j.pos }

// CurveIndex returns the index of the job's curve in the plan.
func (j *Job) CurveIndex() int { return j.index }

// TracePath returns the file of the job's trace store, or "" when the plan
// is not traced.
func (j *Job) TracePath() string { return j.trace }
