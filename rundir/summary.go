package rundir

import (
	"encoding/json"
	"errors"
	"math"

	"maple/scenarios"
)

// Summary is the content of summary.json: per curve, the final and
// steady-state metrics, the run seeds, and what the runs reported.
type Summary struct {
	// Scenario and Description are the scenario's name and description.
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	// Version is maple's version and Engine the engine that ran the plan.
	Version string `json:"version"`
	Engine  string `json:"engine"`
	// Seed is the scenario seed the run seeds derive from.
	Seed uint64 `json:"seed"`
	// Overrides are the command-line overrides (--set) the scenario was run
	// with; scenario.yaml has them applied.
	Overrides []scenarios.Setting `json:"overrides,omitempty"`
	// Curves summarizes each curve, in plan order.
	Curves []CurveSummary `json:"curves"`
	// Partial is set when the execution was interrupted: the curves then
	// average the runs that finished (each curve's first runs, up to the
	// first that did not), RunsCompleted of RunsPlanned, and MissingCurves
	// lists the curves none of whose runs finished.
	Partial       bool     `json:"partial,omitempty"`
	RunsCompleted int      `json:"runs_completed,omitempty"`
	RunsPlanned   int      `json:"runs_planned,omitempty"`
	MissingCurves []string `json:"missing_curves,omitempty"`
	// Columns describe the metrics of metrics.csv, in its column order: the
	// label of each, whether it is a mean-square deviation (with a dB form)
	// and whether it is a cumulative axis the others are drawn against.
	// Runs of maple before the report read them leave it out.
	Columns []Column `json:"columns,omitempty"`
	// Pending names what the run directory still lacks: PendingFigures
	// between the first writing of summary.json, with every number, and
	// the figures. A summary.json without it marks a complete directory.
	Pending string `json:"pending,omitempty"`
}

// PendingFigures is Summary.Pending while the figures are being drawn: a
// summary.json that still says so belongs to a run that stopped while
// drawing them (its numbers are complete).
const PendingFigures = "figures"

// CurveSummary summarizes the runs of one curve.
type CurveSummary struct {
	// Label names the curve and Settings are the fields that define it.
	Label    string              `json:"label"`
	Settings []scenarios.Setting `json:"settings,omitempty"`
	// Runs is the number of Monte-Carlo runs averaged; in a partial summary
	// RunsPlanned is the number the scenario asked for.
	Runs        int `json:"runs"`
	RunsPlanned int `json:"runs_planned,omitempty"`
	// RunSeeds are the seeds of the runs, in hexadecimal: run r of every
	// curve derives all its random streams from RunSeeds[r].
	RunSeeds []string `json:"run_seeds"`
	// Iterations is the number of iterations of each run.
	Iterations int `json:"iterations"`
	// Final holds the metrics at the last iteration and SteadyState their
	// mean over the last output.steady_state fraction of recorded
	// iterations, averaged over runs (dB columns: dB of the linear mean).
	Final       map[string]Number `json:"final"`
	SteadyState map[string]Number `json:"steady_state"`
	// Diverged is set when a metric of some run stopped being finite;
	// DivergedAt is then the first recorded iteration at which that
	// happened in any run, and DivergedRuns how many runs diverged.
	Diverged     bool `json:"diverged,omitempty"`
	DivergedAt   int  `json:"diverged_at,omitempty"`
	DivergedRuns int  `json:"diverged_runs,omitempty"`
	// Trending lists the dB metrics still changing over the last 10 % of
	// the iterations: the run may have ended before the steady state, and
	// SteadyState then describes a curve still on its way.
	Trending []Trend `json:"trending,omitempty"`
	// MessagesPerRun and VirtualTime are the mean message count and virtual
	// duration of a run (actor engine only).
	MessagesPerRun Number `json:"messages_per_run,omitempty"`
	VirtualTime    Number `json:"virtual_time,omitempty"`
	// Baseline is the curve output.baseline makes this one's reference, and
	// Gain the steady-state difference baseline − curve for each metric (dB
	// columns as msd_db; not the cumulative axis columns): positive when this
	// curve is lower — better for an MSD or an error, worse for an accuracy.
	Baseline string            `json:"baseline,omitempty"`
	Gain     map[string]Number `json:"gain,omitempty"`
	// Claim is what output.claims says the paper states about this curve.
	Claim string `json:"claim,omitempty"`
	// Warnings are the distinct warnings of all runs.
	Warnings []string `json:"warnings,omitempty"`
	// Details are family-specific facts of run 0 (the optimum, the
	// topology, privacy accounting, …).
	Details map[string]any `json:"details,omitempty"`
	// Audit is the empirical lower bound on ε of a curve with
	// privacy.audit, beside its accountant's upper bound.
	Audit *Audit `json:"audit,omitempty"`
}

// Audit is what a curve's privacy audit found: an empirical lower bound on
// ε at each row of the metrics table, beside the accountant's upper bound
// (docs/privacy.md, "Audits").
type Audit struct {
	// Method is one-run or many-run, Canary the neighbour inserted, View
	// what the auditor saw.
	Method string `json:"method"`
	Canary string `json:"canary"`
	View   string `json:"view"`
	// Confidence is the probability with which each lower bound holds, and
	// Delta the δ at which ε is bounded.
	Confidence float64 `json:"confidence"`
	Delta      float64 `json:"delta"`
	// RunsIn and RunsOut are a many-run audit's runs with and without the
	// canary.
	RunsIn  int `json:"runs_in,omitempty"`
	RunsOut int `json:"runs_out,omitempty"`
	// Canaries, Included, Guesses and Correct describe a one-run audit at
	// the last row: its canaries over all runs, how many were included, how
	// many the auditor guessed on and how many guesses were right.
	Canaries int `json:"canaries,omitempty"`
	Included int `json:"included,omitempty"`
	Guesses  int `json:"guesses,omitempty"`
	Correct  int `json:"correct,omitempty"`
	// Iterations are the rows' iterations; Lower is the lower bound after
	// each; Upper the accountant's ε after each (absent without an
	// accountant), named by Accountant, Relation and Sampling.
	Iterations []int    `json:"iterations"`
	Lower      []Number `json:"lower"`
	Upper      []Number `json:"upper,omitempty"`
	Accountant string   `json:"accountant,omitempty"`
	Relation   string   `json:"relation,omitempty"`
	Sampling   string   `json:"sampling,omitempty"`
	// Statistic says how Lower was computed: a bound that assumes nothing
	// of the mechanism.
	Statistic string `json:"statistic"`
	// Assumed, for a many-run audit at δ > 0, is the lower bound after each
	// row under an assumption on the shape of the mechanism's trade-off
	// curve, which AssumedStatistic states; it can exceed the true ε of a
	// mechanism that violates it. AssumedFinal is its last row.
	Assumed          []Number `json:"assumed,omitempty"`
	AssumedStatistic string   `json:"assumed_statistic,omitempty"`
	AssumedFinal     Number   `json:"assumed_final,omitempty"`
	// Measured, for a family that models its rounds (the measured-noise
	// statistic), is the lower bound after each evaluated row from the
	// noise measured on every round's observation: the ε the accountant
	// gives the declared mechanism at the least noise the observations
	// allow, MeasuredNoise that noise multiplier, MeasuredStatistic how
	// and under what assumption, MeasuredFinal its last row.
	Measured          []Number `json:"measured,omitempty"`
	MeasuredNoise     Number   `json:"measured_noise_multiplier,omitempty"`
	MeasuredStatistic string   `json:"measured_statistic,omitempty"`
	MeasuredFinal     Number   `json:"measured_final,omitempty"`
	// LowerFinal and UpperFinal are the bounds after the last row, and
	// Ratio LowerFinal/UpperFinal.
	LowerFinal Number `json:"lower_final"`
	UpperFinal Number `json:"upper_final,omitempty"`
	Ratio      Number `json:"ratio,omitempty"`
}

// Trend is a dB metric that still changes at the end of a run: by Change dB
// (the fitted line's change) between iterations From and To.
type Trend struct {
	Metric string `json:"metric"`
	Change Number `json:"change_db"`
	From   int    `json:"from"`
	To     int    `json:"to"`
}

// Number is a float64 that encodes NaN and ±Inf (a diverged run) as null,
// which JSON cannot otherwise express.
type Number float64

// MarshalJSON implements json.Marshaler.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON implements json.Unmarshaler: null, a value that was not
// finite, reads as NaN.
func (n *Number) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Number(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			te.Offset = -1 // an offset in b, not in the document: unknown
		}
		return err
	}
	*n = Number(f)
	return nil
}

// MarkPartial records in the summary that the execution was interrupted
// after completed of its runs.
func (s *Summary) MarkPartial(plan *scenarios.Plan, completed int) {
	s.Partial = true
	s.RunsCompleted = completed
	done := map[string]*CurveSummary{}
	for i := range s.Curves {
		done[s.Curves[i].Label] = &s.Curves[i]
	}
	for _, c := range plan.Curves {
		s.RunsPlanned += c.Scenario.Runs
		if cs, ok := done[c.Label]; ok {
			cs.RunsPlanned = c.Scenario.Runs
		} else {
			s.MissingCurves = append(s.MissingCurves, c.Label)
		}
	}
}

// Finite returns v with every float64 that is NaN or ±Inf — an ε no
// accountant can bound, a diverged value — replaced by a Number, which
// encodes it as null, looking into maps, slices and slices of slices of
// the kinds families put in a summary's details: JSON has no such numbers,
// and encoding/json refuses the whole summary for one of them. Other
// values are returned as they are.
func Finite(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Number(x)
		}
	case []float64:
		for _, f := range x {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				n := make([]Number, len(x))
				for i, f := range x {
					n[i] = Number(f)
				}
				return n
			}
		}
	case [][]float64:
		return finiteSlice(x)
	case []any:
		return finiteSlice(x)
	case []map[string]any:
		return finiteSlice(x)
	case map[string]any:
		return finiteMap(x)
	case map[string]float64:
		return finiteMap(x)
	}
	return v
}

// finiteSlice returns Finite of every element of x.
func finiteSlice[T any](x []T) []any {
	out := make([]any, len(x))
	for i, e := range x {
		out[i] = Finite(e)
	}
	return out
}

// finiteMap returns Finite of every value of x.
func finiteMap[T any](x map[string]T) map[string]any {
	out := make(map[string]any, len(x))
	for k, e := range x {
		out[k] = Finite(e)
	}
	return out
}
