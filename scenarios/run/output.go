package run

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

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
	Engine  Engine `json:"engine"`
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
}

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
	Final       map[string]number `json:"final"`
	SteadyState map[string]number `json:"steady_state"`
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
	MessagesPerRun number `json:"messages_per_run,omitempty"`
	VirtualTime    number `json:"virtual_time,omitempty"`
	// Baseline is the curve output.baseline makes this one's reference, and
	// Gain the steady-state difference baseline − curve for each metric (dB
	// columns as msd_db; not the cumulative axis columns): positive when this
	// curve is lower — better for an MSD or an error, worse for an accuracy.
	Baseline string            `json:"baseline,omitempty"`
	Gain     map[string]number `json:"gain,omitempty"`
	// Claim is what output.claims says the paper states about this curve.
	Claim string `json:"claim,omitempty"`
	// Warnings are the distinct warnings of all runs.
	Warnings []string `json:"warnings,omitempty"`
	// Details are family-specific facts of run 0 (the optimum, the
	// topology, privacy accounting, …).
	Details map[string]any `json:"details,omitempty"`
}

// Trend is a dB metric that still changes at the end of a run: by Change dB
// (the fitted line's change) between iterations From and To.
type Trend struct {
	Metric string `json:"metric"`
	Change number `json:"change_db"`
	From   int    `json:"from"`
	To     int    `json:"to"`
}

// number is a float64 that encodes NaN and ±Inf (a diverged run) as null,
// which JSON cannot otherwise express.
type number float64

// MarshalJSON implements json.Marshaler.
func (n number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// writeOutputs averages the runs and writes scenario.yaml, metrics.csv,
// the plots and, last, summary.json, each atomically. With partial (an
// interrupted execution), jobs holds the runs that finished; curves without
// any are left out and the summary says so.
//
// Once opts.Abort is closed it stops before the next file with errAbandoned,
// returning the files written so far.
func writeOutputs(plan *scenarios.Plan, jobs []*job, outDir string, opts *Options, partial bool) ([]string, *Summary, error) {
	resolved, err := yaml.Marshal(withAbsolutePaths(plan.Base, plan.Dir))
	if err != nil {
		return nil, nil, err
	}
	if len(plan.Overrides) > 0 {
		var head strings.Builder
		head.WriteString("# Resolved with these command-line overrides applied:\n")
		for _, o := range plan.Overrides {
			fmt.Fprintf(&head, "#   --set %s=%s\n", o.Field, o.Value)
		}
		resolved = append([]byte(head.String()), resolved...)
	}
	var written []string
	write := func(name string, data []byte) error {
		if aborted(opts) {
			return errAbandoned
		}
		if err := writeFileAtomic(filepath.Join(outDir, name), data); err != nil {
			return err
		}
		written = append(written, name)
		return nil
	}
	files := []string{"scenario.yaml", "metrics.csv", "summary.json"}
	if err := write("scenario.yaml", resolved); err != nil {
		return written, nil, err
	}
	all := make([]curveResult, len(plan.Curves))
	for i, c := range plan.Curves {
		all[i].spec = c
		all[i].cols = columns(c.Scenario)
	}
	for _, j := range jobs {
		all[j.index].jobs = append(all[j.index].jobs, j)
	}
	var curves []curveResult
	for _, c := range all {
		if len(c.jobs) == 0 {
			continue // an interrupted execution finished none of its runs
		}
		tables := runTables(c.jobs)
		c.mean = mean(tables)
		c.std = std(tables, c.mean)
		curves = append(curves, c)
	}
	if aborted(opts) {
		return written, nil, errAbandoned
	}
	if err := writeMetrics(filepath.Join(outDir, "metrics.csv"), curves); err != nil {
		return written, nil, err
	}
	written = append(written, "metrics.csv")
	summary := summarize(plan, curves, opts)
	if partial {
		summary.markPartial(plan, len(jobs))
	}
	js, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	if plan.Base.Output.Plot {
		plots, err := stageFiles(outDir, func(stage string) ([]string, error) {
			return writePlots(stage, plan, curves)
		})
		written = append(written, plots...)
		if err != nil {
			return written, nil, err
		}
		files = append(files, plots...)
	}
	if err := write("summary.json", append(js, '\n')); err != nil {
		return written, nil, err
	}
	return files, summary, nil
}

// aborted reports whether opts.Abort is closed.
func aborted(opts *Options) bool {
	select {
	case <-opts.Abort:
		return true
	default:
		return false
	}
}

// markPartial records in the summary that the execution was interrupted
// after completed of its runs.
func (s *Summary) markPartial(plan *scenarios.Plan, completed int) {
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

// withAbsolutePaths returns a copy of sc whose data and topology file paths,
// including those set by curves and sweeps, are absolute, resolved against
// dir (the original scenario's directory): the run directory's scenario.yaml
// then runs again from anywhere.
func withAbsolutePaths(sc *scenarios.Scenario, dir string) *scenarios.Scenario {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if a, err := filepath.Abs(filepath.Join(dir, p)); err == nil {
			return a
		}
		return p
	}
	out := *sc
	if l := sc.Data.LIBSVM; l != nil {
		c := *l
		c.File = abs(c.File)
		out.Data.LIBSVM = &c
	}
	if t := sc.Topology; t != nil {
		c := *t
		c.File, c.Matrix = abs(c.File), abs(c.Matrix)
		out.Topology = &c
	}
	out.Network.Availability = abs(sc.Network.Availability)
	if st := sc.Network.StepTime; st != nil {
		c := *st
		c.File = abs(c.File)
		out.Network.StepTime = &c
	}
	out.Curves = make([]scenarios.Curve, len(sc.Curves))
	for i, c := range sc.Curves {
		out.Curves[i] = scenarios.Curve{Label: c.Label, Set: map[string]any{}}
		for f, v := range c.Set {
			if s, ok := v.(string); ok && pathFields[f] {
				v = abs(s)
			}
			out.Curves[i].Set[f] = v
		}
	}
	if len(sc.Curves) == 0 {
		out.Curves = nil
	}
	out.Sweep = make(scenarios.Sweep, len(sc.Sweep))
	for i, a := range sc.Sweep {
		out.Sweep[i] = scenarios.SweepAxis{Field: a.Field, Values: a.Values}
		if pathFields[a.Field] {
			out.Sweep[i].Values = make([]*yaml.Node, len(a.Values))
			for k, v := range a.Values {
				n := *v
				if n.Kind == yaml.ScalarNode {
					n.Value = abs(n.Value)
				}
				out.Sweep[i].Values[k] = &n
			}
		}
	}
	if len(sc.Sweep) == 0 {
		out.Sweep = nil
	}
	return &out
}

// pathFields are the scenario fields that name files, relative to the
// scenario's directory.
var pathFields = map[string]bool{"data.libsvm.file": true, "topology.file": true, "topology.matrix": true,
	"network.availability": true, "network.step_time.file": true}

// curveResult gathers a curve's runs, their mean and their standard
// deviation.
type curveResult struct {
	spec *scenarios.CurveSpec
	cols []Column
	jobs []*job
	mean *table
	std  *table
}

// value returns column col of row r of the mean, in dB if db is set.
func (c *curveResult) value(r, col int, db bool) float64 {
	v := c.mean.get(r, col)
	if db {
		return decibel(v)
	}
	return v
}

// csvHeader lists the CSV columns of cols: each metric, its standard
// deviation across runs, and its dB form for mean-square deviations.
func csvHeader(cols []Column) []string {
	h := []string{"curve", "iteration"}
	for _, c := range cols {
		h = append(h, c.Name, c.Name+"_std")
		if c.Decibel {
			h = append(h, c.Name+"_db")
		}
	}
	return h
}

// writeMetrics writes metrics.csv: one table whose columns are the union of
// the curves' columns, in order of first appearance. Curves of one plan
// usually share their columns; a curve without some column (a noise-free
// curve has no noise metric, say) leaves its cells empty.
func writeMetrics(path string, curves []curveResult) error {
	var union []Column
	index := map[string]int{}
	for _, c := range curves {
		for _, col := range c.cols {
			if _, ok := index[col.Name]; !ok {
				index[col.Name] = len(union)
				union = append(union, col)
			}
		}
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(csvHeader(union)); err != nil {
		return err
	}
	for _, c := range curves {
		// at[u] is the curve's column of union column u, or -1.
		at := make([]int, len(union))
		for u := range at {
			at[u] = -1
		}
		for k, col := range c.cols {
			at[index[col.Name]] = k
		}
		for r, it := range c.mean.iterations {
			row := []string{c.spec.Label, strconv.Itoa(it)}
			for u, col := range union {
				k := at[u]
				if k < 0 {
					row = append(row, "", "")
					if col.Decibel {
						row = append(row, "")
					}
					continue
				}
				row = append(row, formatFloat(c.value(r, k, false)), formatFloat(c.std.get(r, k)))
				if col.Decibel {
					row = append(row, decibelCell(c.value(r, k, false)))
				}
			}
			if err := w.Write(row); err != nil {
				return err
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return writeFileAtomic(path, buf.Bytes())
}

// decibelCell writes the dB form of a linear mean-square value v: empty when
// v is finite but not positive (exactly 0 when every agent starts at the same
// model, say), whose logarithm is −∞ or undefined, so that metrics.csv holds
// no -Inf; ±Inf and NaN only where v itself is not finite (a diverged run).
func decibelCell(v float64) string {
	if v <= 0 {
		return ""
	}
	return formatFloat(decibel(v))
}

// formatFloat writes the shortest representation that reads back exactly.
func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// runTables returns the metrics tables of a curve's runs, in run order.
func runTables(jobs []*job) []*table {
	tables := make([]*table, len(jobs))
	for i, j := range jobs {
		tables[i] = j.table
	}
	return tables
}

// summarize builds the summary of every curve.
func summarize(plan *scenarios.Plan, curves []curveResult, opts *Options) *Summary {
	s := &Summary{
		Scenario: plan.Base.Name, Description: plan.Base.Description,
		Version: Version, Engine: opts.Engine, Seed: plan.Base.Seed, Overrides: plan.Overrides,
	}
	for _, c := range curves {
		sc := c.spec.Scenario
		cs := CurveSummary{
			Label: c.spec.Label, Settings: c.spec.Settings, Runs: len(c.jobs), Iterations: sc.Iterations,
			Final: map[string]number{}, SteadyState: map[string]number{},
		}
		last := len(c.mean.iterations) - 1
		for k, col := range c.cols {
			final := c.value(last, k, false)
			steady := steadyState(c.mean, k, sc.Output.SteadyState)
			cs.Final[col.Name] = number(final)
			cs.SteadyState[col.Name] = number(steady)
			if col.Decibel {
				cs.Final[col.Name+"_db"] = number(decibel(final))
				cs.SteadyState[col.Name+"_db"] = number(decibel(steady))
				if change, from, to, ok := trend(runTables(c.jobs), c.mean, k); ok {
					cs.Trending = append(cs.Trending, Trend{Metric: col.Name + "_db", Change: number(change), From: from, To: to})
				}
			}
		}
		for _, j := range c.jobs {
			if it, ok := j.table.divergedAt(); ok {
				if !cs.Diverged || it < cs.DivergedAt {
					cs.DivergedAt = it
				}
				cs.Diverged = true
				cs.DivergedRuns++
			}
		}
		seen := map[string]bool{}
		var messages, duration float64
		for _, j := range c.jobs {
			cs.RunSeeds = append(cs.RunSeeds, fmt.Sprintf("%#016x", j.runSeed))
			messages += float64(j.stats.messages)
			duration += j.stats.duration
			for _, w := range j.stats.warnings {
				if !seen[w] {
					seen[w] = true
					cs.Warnings = append(cs.Warnings, w)
				}
			}
		}
		cs.MessagesPerRun = number(messages / float64(len(c.jobs)))
		cs.VirtualTime = number(duration / float64(len(c.jobs)))
		cs.Details = c.jobs[0].stats.details
		cs.Claim = plan.Base.Output.Claims[c.spec.Label]
		s.Curves = append(s.Curves, cs)
	}
	compareWithBaseline(plan, s.Curves, curves)
	return s
}

// baselineOf returns the label of the curve that output.baseline makes the
// reference of the curve labelled label: the listed curve named baseline
// with the same sweep values (the label's part after its listed curve's).
func baselineOf(plan *scenarios.Plan, label string) (string, bool) {
	base := plan.Base.Output.Baseline
	if base == "" {
		return "", false
	}
	prefix := ""
	for _, c := range plan.Base.Curves {
		if (label == c.Label || strings.HasPrefix(label, c.Label+", ")) && len(c.Label) > len(prefix) {
			prefix = c.Label
		}
	}
	if prefix == "" {
		return "", false
	}
	return base + label[len(prefix):], true
}

// compareWithBaseline fills the Baseline and Gain of every curve that has a
// baseline other than itself.
func compareWithBaseline(plan *scenarios.Plan, summaries []CurveSummary, curves []curveResult) {
	index := map[string]int{}
	for i, c := range summaries {
		index[c.Label] = i
	}
	for i := range summaries {
		cs := &summaries[i]
		label, ok := baselineOf(plan, cs.Label)
		b, found := index[label]
		if !ok || !found || b == i {
			continue
		}
		cs.Baseline, cs.Gain = label, map[string]number{}
		for _, col := range curves[i].cols {
			if col.Axis {
				continue
			}
			key := col.Name
			if col.Decibel {
				key += "_db"
			}
			if base, ok := summaries[b].SteadyState[key]; ok {
				cs.Gain[key] = base - cs.SteadyState[key]
			}
		}
	}
}
