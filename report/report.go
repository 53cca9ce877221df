// Package report writes the report of run directories: one self-contained
// page, report.html, that needs no network to view. For one run it shows
// the scenario, the steady-state and final values of every curve, the
// figures maple run draws — the same charts, in the same styles, honouring
// the scenario's output section, with the sweep figures — made interactive,
// the privacy budget per round, the privacy audits' lower bounds on ε
// beside the accountant's upper bound, the eavesdropper, the message and
// byte counts per round from the trace, the warnings and the provenance of
// the run. For several runs it overlays their curves metric by metric, with
// a table of their steady states and of the scenario fields that differ,
// and their privacy audits side by side.
//
// The charts are drawn twice: as the static SVG figures of package figures,
// which the page shows without scripts, and, when scripts run, with uPlot
// (embedded, report/uplot), from the same data. docs/report.md describes
// the page.
package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"maple/rundir"
)

// File is the report's name in the run directory.
const File = "report.html"

//go:embed report.html.tmpl
var pageTemplate string

var tmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"g": func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) },
}).Parse(pageTemplate))

// Write writes dir/report.html for the run directory dir and returns its
// path and what the page flags about the directory (see WriteTo).
func Write(dir string) (path string, flags []string, err error) {
	path = filepath.Join(dir, File)
	flags, err = WriteTo(dir, path)
	return path, flags, err
}

// WriteTo writes the report of the run directory dir to the file path. A
// directory that is not what maple run writes is refused (rundir.Read); one
// that is well formed but incomplete — a run stopped while drawing its
// figures, a directory of an older maple — gets its page, which says so
// among its warnings, and those flags are returned, each naming dir, for the
// caller to tell the user.
func WriteTo(dir, path string) ([]string, error) {
	r, err := rundir.Read(dir)
	if err != nil {
		return nil, err
	}
	pg, err := single(r)
	if err != nil {
		return nil, err
	}
	if err := render(path, pg); err != nil {
		return nil, err
	}
	return dirFlags(r), nil
}

// dirFlags returns the run directory's flags, each prefixed with its path.
func dirFlags(r *rundir.Run) []string {
	var out []string
	for _, f := range r.Flags {
		out = append(out, r.Dir+": "+f)
	}
	return out
}

// render executes the template for pg and writes the page to path
// atomically.
func render(path string, pg *page) error {
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, pg); err != nil {
		return err
	}
	return rundir.WriteFileAtomic(path, buf.Bytes())
}

// page is what the template shows.
type page struct {
	Title, Description string
	// Facts is a line about what was run.
	Facts string
	// Runs describes the run directories of a comparison (nil for one run)
	// and Differences the scenario fields that differ between them.
	Runs        []runRow
	Differences [][]string
	Results     results
	Charts      []chartView
	// Flat says which metrics are zero throughout, and are not drawn.
	Flat     string
	Sweeps   []chartView
	BandNote string
	Privacy  *privacy
	// Bounds is the privacy audit: the accountant's upper bound on ε
	// beside the audits' lower bounds, and Audit the eavesdroppers.
	Bounds   *bounds
	Audit    []auditRow
	Messages *messages
	Warnings []string
	// Provenance is a table: a header row and a row per field.
	Provenance [][]string
	Scenario   string
	// Data are the charts' data, the script and the style sheets.
	Data   template.JS
	Script template.JS
	Style  template.CSS
}

// single assembles the page of one run directory.
func single(r *rundir.Run) (*page, error) {
	s := &r.Summary
	pg := &page{Title: s.Scenario, Description: s.Description, Scenario: string(r.Scenario)}
	pg.Facts = facts(r)
	pg.Provenance = provenanceRows([]*rundir.Run{r})
	pg.Warnings = append(slices.Clone(r.Flags), curveWarnings(s)...)
	curves := r.Curves()
	set := newChartSet(r.Output)
	var err error
	if pg.Charts, pg.Sweeps, pg.Flat, err = set.metricCharts(options(r), curves); err != nil {
		return nil, err
	}
	flat := set.flat
	pg.Results = resultTable([]*rundir.Run{r}, nil, flat)
	pg.BandNote = bandNote(curves)
	if pg.Privacy, err = privacyBudget(r, curves, set); err != nil {
		return nil, err
	}
	if pg.Bounds, err = boundsOf([]*rundir.Run{r}, nil, options(r).Title, set); err != nil {
		return nil, err
	}
	if pg.Bounds != nil {
		pg.Warnings = append(pg.Warnings, pg.Bounds.Findings...)
	}
	pg.Audit = auditRows(s)
	if pg.Messages, err = messageStats(r, curves, set); err != nil {
		return nil, err
	}
	if err := pg.finish(set); err != nil {
		return nil, err
	}
	return pg, nil
}

// finish adds the charts' data, the script and the style sheet.
func (pg *page) finish(set *chartSet) error {
	data, err := set.json()
	if err != nil {
		return err
	}
	pg.Data, pg.Script, pg.Style = data, script, style
	return nil
}

// facts is the line under the title: curves, runs, iterations and engine.
func facts(r *rundir.Run) string {
	s := &r.Summary
	runs, iterations := map[int]bool{}, map[int]bool{}
	for _, c := range s.Curves {
		runs[c.Runs], iterations[c.Iterations] = true, true
	}
	var parts []string
	parts = append(parts, plural(len(s.Curves), "curve", "curves"))
	if len(runs) == 1 && len(s.Curves) > 0 {
		each := plural(s.Curves[0].Runs, "Monte-Carlo run", "Monte-Carlo runs")
		if len(s.Curves) > 1 {
			each += " each"
		}
		parts = append(parts, each)
	}
	if len(iterations) == 1 && len(s.Curves) > 0 {
		parts = append(parts, plural(s.Curves[0].Iterations, "iteration", "iterations"))
	}
	if s.Engine != "" {
		parts = append(parts, s.Engine+" engine")
	}
	if s.Partial {
		parts = append(parts, fmt.Sprintf("interrupted: %d of %d runs finished", s.RunsCompleted, s.RunsPlanned))
	}
	return strings.Join(parts, " · ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// provenanceRows tabulates what produced each run: a row per field, a
// column per run.
func provenanceRows(runs []*rundir.Run) [][]string {
	fields := []string{"maple version", "engine", "scenario seed", "run seeds", "scenario hash (SHA-256 of scenario.yaml)",
		"git commit", "Go version", "command line"}
	rows := make([][]string, len(fields))
	for i, f := range fields {
		rows[i] = []string{f}
	}
	for _, r := range runs {
		s := &r.Summary
		seeds := "—"
		if len(s.Curves) > 0 && len(s.Curves[0].RunSeeds) > 0 {
			all := s.Curves[0].RunSeeds
			seeds = strings.Join(all[:min(3, len(all))], ", ")
			if len(all) > 3 {
				seeds += fmt.Sprintf(" … (%d runs)", len(all))
			}
		}
		commit, goVersion, command := "unknown (no provenance.json)", "—", "—"
		if p := r.Provenance; p != nil {
			commit = p.Revision
			if commit == "" {
				commit = "unknown (built outside a git work tree)"
			} else if p.Modified {
				commit += " (with uncommitted changes)"
			}
			if p.RevisionTime != "" {
				commit += ", " + p.RevisionTime
			}
			goVersion, command = p.GoVersion+" "+p.Platform, strings.Join(p.Command, " ")
		}
		values := []string{s.Version, s.Engine, strconv.FormatUint(s.Seed, 10), seeds, r.Hash, commit, goVersion, command}
		for i, v := range values {
			rows[i] = append(rows[i], v)
		}
	}
	return rows
}

// curveWarnings lists the runs' warnings, each once with its curves, and
// the curves that diverged.
func curveWarnings(s *rundir.Summary) []string {
	var order []string
	curves := map[string][]string{}
	for _, c := range s.Curves {
		for _, w := range c.Warnings {
			if _, ok := curves[w]; !ok {
				order = append(order, w)
			}
			curves[w] = append(curves[w], c.Label)
		}
	}
	var out []string
	for _, w := range order {
		out = append(out, fmt.Sprintf("%s (curves: %s)", w, strings.Join(curves[w], "; ")))
	}
	for _, c := range s.Curves {
		if c.Diverged {
			out = append(out, fmt.Sprintf("curve %s diverged at iteration %d in %d of %d runs", c.Label, c.DivergedAt, c.DivergedRuns, c.Runs))
		}
	}
	return out
}

// results is the table of steady-state and final values: a row per curve
// (per run and curve in a comparison), two cells per metric.
type results struct {
	Metrics []rundir.Column
	Rows    []resultRow
}

type resultRow struct {
	Run, Label string
	Runs       int
	// Values alternate the steady state and the final value of each metric.
	Values []string
}

// resultTable tabulates the summaries' values of every metric but the flat
// ones; names label the runs of a comparison.
func resultTable(runs []*rundir.Run, names []string, flat map[string]bool) results {
	var t results
	for _, r := range runs {
		for _, m := range r.MetricNames() {
			if flat[m] || slices.ContainsFunc(t.Metrics, func(c rundir.Column) bool { return c.Name == m }) {
				continue
			}
			col := rundir.Column{Name: m, Label: m}
			if k := slices.IndexFunc(r.Summary.Columns, func(c rundir.Column) bool { return c.Name == m }); k >= 0 {
				col = r.Summary.Columns[k]
			}
			t.Metrics = append(t.Metrics, col)
		}
	}
	for i, r := range runs {
		for _, c := range r.Summary.Curves {
			row := resultRow{Label: c.Label, Runs: c.Runs}
			if names != nil {
				row.Run = names[i]
			}
			for _, m := range t.Metrics {
				row.Values = append(row.Values, value(&c, c.SteadyState, m.Name), value(&c, c.Final, m.Name))
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// value renders a curve's value of metric m from the summary's values vs
// (its steady state or its final values): in dB for mean-square deviations,
// "−∞ dB (exact)" for a zero, "—" where the curve has no such value.
func value(c *rundir.CurveSummary, vs map[string]rundir.Number, m string) string {
	if c.Diverged {
		return fmt.Sprintf("diverged (iteration %d)", c.DivergedAt)
	}
	lin, hasLin := vs[m]
	if db, ok := vs[m+"_db"]; ok {
		switch {
		case known(db):
			return strings.Replace(fmt.Sprintf("%.2f dB", float64(db)), "-", "−", 1)
		case hasLin && lin == 0:
			return "−∞ dB (exact)"
		}
		return "—"
	}
	if !hasLin || !known(lin) {
		return "—"
	}
	return strings.ReplaceAll(strconv.FormatFloat(float64(lin), 'g', 4, 64), "-", "−")
}

// known reports whether a number of summary.json was written as a value,
// not as null (summary.json writes NaN and ±∞ as null, read back as NaN).
func known(x rundir.Number) bool { return !math.IsNaN(float64(x)) }

// bandNote says what the bands are, if any curve has one.
func bandNote(curves []rundir.Curve) string {
	for _, c := range curves {
		if c.Runs >= 2 {
			return "Each curve is the mean over its Monte-Carlo runs; its band is ±1 standard error of that mean, s/√runs with s the standard deviation across runs at each recorded iteration (cut 10 dB below the mean where it reaches zero), as in the PNG and SVG figures."
		}
	}
	return ""
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "—"
}

func num(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'g', 5, 64)
	}
	return "—"
}
