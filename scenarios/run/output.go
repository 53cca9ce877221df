package run

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"maple/figures"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// writeOutputs averages the runs and writes scenario.yaml, metrics.csv,
// summary.json and the plots, each atomically. With plots, summary.json is
// written twice: before them, marked pending (rundir.PendingFigures), so
// that a failure in drawing loses no number, and again without the mark
// once they are in place. With partial (an
// interrupted execution), jobs holds the runs that finished; curves without
// any are left out and the summary says so.
//
// Once opts.Abort is closed it stops before the next file with errAbandoned,
// returning the files written so far.
func writeOutputs(plan *scenarios.Plan, jobs []*Job, outDir string, opts *Options, partial bool) ([]string, *rundir.Summary, error) {
	resolved, err := ResolvedScenario(plan)
	if err != nil {
		return nil, nil, err
	}
	var written []string
	write := func(name string, data []byte) error {
		if aborted(opts) {
			return errAbandoned
		}
		if err := rundir.WriteFileAtomic(filepath.Join(outDir, name), data); err != nil {
			return err
		}
		if !slices.Contains(written, name) {
			written = append(written, name)
		}
		return nil
	}
	files := []string{rundir.ScenarioFile, rundir.MetricsFile, rundir.SummaryFile}
	if err := write(rundir.ScenarioFile, resolved); err != nil {
		return written, nil, err
	}
	all := make([]curveResult, len(plan.Curves))
	for i, c := range plan.Curves {
		all[i].Spec = c
		all[i].Cols = Columns(c.Scenario)
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
		c.Runs = len(c.jobs)
		c.Mean = rundir.Mean(tables)
		c.Std = rundir.Std(tables, c.Mean)
		curves = append(curves, c)
	}
	if aborted(opts) {
		return written, nil, errAbandoned
	}
	averaged := results(curves)
	if err := rundir.WriteMetrics(filepath.Join(outDir, rundir.MetricsFile), averaged); err != nil {
		return written, nil, err
	}
	written = append(written, rundir.MetricsFile)
	summary := summarize(plan, curves, opts)
	if partial {
		summary.MarkPartial(plan, len(jobs))
	}
	writeSummary := func() error {
		js, err := json.MarshalIndent(summary, "", "  ")
		if err != nil {
			return err
		}
		return write(rundir.SummaryFile, append(js, '\n'))
	}
	if plan.Base.Output.Plot {
		// The numbers are written before the figures, so that no failure
		// in drawing can lose them; the summary says that the figures are
		// pending until they are drawn.
		summary.Pending = rundir.PendingFigures
		if err := writeSummary(); err != nil {
			return written, nil, err
		}
		ctx, stop := abortContext(opts)
		plots, err := rundir.StageFiles(outDir, func(stage string) ([]string, error) {
			return drawFigures(ctx, stage, plan, averaged)
		})
		stop()
		written = append(written, plots...)
		if aborted(opts) {
			return written, nil, errAbandoned
		}
		if err != nil {
			return written, nil, fmt.Errorf("drawing the figures: %w (metrics.csv and summary.json are written)", err)
		}
		files = append(files, plots...)
		summary.Pending = ""
	}
	if err := writeSummary(); err != nil {
		return written, nil, err
	}
	return files, summary, nil
}

// drawFigures draws the figures (a variable so that a test can make drawing
// fail).
var drawFigures = figures.Write

// abortContext returns a context that is done once opts.Abort is closed,
// for the work that writing outputs does between files (the figures), and
// a function that releases it.
func abortContext(opts *Options) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := make(chan struct{})
	go func() {
		select {
		case <-opts.Abort:
			cancel()
		case <-stop:
		}
	}()
	return ctx, func() { close(stop); cancel() }
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

// ResolvedScenario returns the scenario.yaml of a run directory of plan:
// its base scenario with every default filled in, paths made absolute and
// the command-line overrides applied (a comment lists them). It loads again,
// from anywhere, as the same plan.
func ResolvedScenario(plan *scenarios.Plan) ([]byte, error) {
	resolved, err := plan.Marshal(inputs.WithAbsolutePaths(plan.Base, plan.Dir))
	if err != nil || len(plan.Overrides) == 0 {
		return resolved, err
	}
	var head strings.Builder
	head.WriteString("# Resolved with these command-line overrides applied:\n")
	for _, o := range plan.Overrides {
		fmt.Fprintf(&head, "#   --set %s=%s\n", o.Field, o.Value)
	}
	return append([]byte(head.String()), resolved...), nil
}

// curveResult gathers a curve's runs and their result.
type curveResult struct {
	rundir.Curve
	jobs []*Job
}

// results returns the results of curves.
func results(curves []curveResult) []rundir.Curve {
	out := make([]rundir.Curve, len(curves))
	for i, c := range curves {
		out[i] = c.Curve
	}
	return out
}

// runTables returns the metrics tables of a curve's runs, in run order.
func runTables(jobs []*Job) []*rundir.Table {
	tables := make([]*rundir.Table, len(jobs))
	for i, j := range jobs {
		tables[i] = j.Table
	}
	return tables
}

// summarize builds the summary of every curve.
func summarize(plan *scenarios.Plan, curves []curveResult, opts *Options) *rundir.Summary {
	s := &rundir.Summary{
		Scenario: plan.Base.Name, Description: plan.Base.Description,
		Version: Version, Engine: string(opts.Engine), Seed: plan.Base.Seed, Overrides: plan.Overrides,
	}
	for _, c := range curves {
		sc := c.Spec.Scenario
		cs := rundir.CurveSummary{
			Label: c.Spec.Label, Settings: c.Spec.Settings, Runs: len(c.jobs), Iterations: sc.Iterations,
			Final: map[string]rundir.Number{}, SteadyState: map[string]rundir.Number{},
		}
		last := len(c.Mean.Iterations) - 1
		for k, col := range c.Cols {
			final := c.Value(last, k, false)
			steady := rundir.SteadyState(c.Mean, k, sc.Output.SteadyState)
			cs.Final[col.Name] = rundir.Number(final)
			cs.SteadyState[col.Name] = rundir.Number(steady)
			if col.Decibel {
				cs.Final[col.Name+"_db"] = rundir.Number(rundir.Decibel(final))
				cs.SteadyState[col.Name+"_db"] = rundir.Number(rundir.Decibel(steady))
				if change, from, to, ok := rundir.FitTrend(runTables(c.jobs), c.Mean, k); ok {
					cs.Trending = append(cs.Trending, rundir.Trend{Metric: col.Name + "_db", Change: rundir.Number(change), From: from, To: to})
				}
			}
		}
		for _, j := range c.jobs {
			if it, ok := j.Table.DivergedAt(); ok {
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
			cs.RunSeeds = append(cs.RunSeeds, fmt.Sprintf("%#016x", j.RunSeed))
			messages += float64(j.Stats.messages)
			duration += j.Stats.duration
			for _, w := range j.Stats.Warnings {
				if !seen[w] {
					seen[w] = true
					cs.Warnings = append(cs.Warnings, w)
				}
			}
		}
		cs.MessagesPerRun = rundir.Number(messages / float64(len(c.jobs)))
		cs.VirtualTime = rundir.Number(duration / float64(len(c.jobs)))
		cs.Details, _ = rundir.Finite(c.jobs[0].Stats.Details).(map[string]any)
		if a := sc.Privacy.Audit; a != nil {
			audit, err := auditOf(a, c.jobs, c.Mean.Iterations)
			if err != nil {
				cs.Warnings = append(cs.Warnings, "privacy.audit: no bound: "+err.Error())
			}
			cs.Audit = audit
		}
		cs.Claim = plan.Base.Output.Claims[c.Spec.Label]
		s.Curves = append(s.Curves, cs)
	}
	compareWithBaseline(plan, s.Curves, curves)
	s.Columns = rundir.UnionColumns(results(curves))
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
func compareWithBaseline(plan *scenarios.Plan, summaries []rundir.CurveSummary, curves []curveResult) {
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
		cs.Baseline, cs.Gain = label, map[string]rundir.Number{}
		for _, col := range curves[i].Cols {
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
