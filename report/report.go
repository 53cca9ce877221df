// Package report writes the report of a run directory: one self-contained
// report.html that needs no network to view — the scenario, the curves with
// confidence bands across the Monte-Carlo runs, the steady-state table, the
// privacy budget per round, the eavesdropper audit, the message statistics,
// the warnings and the provenance of the run. Charts are inline SVG drawn
// with gonum/plot; the page has no script and loads nothing.
package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"maple/actors/trace"
	"maple/actors/trace/stats"
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
// path.
func Write(dir string) (string, error) {
	r, err := rundir.Read(dir)
	if err != nil {
		return "", err
	}
	pg, err := build(r)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, pg); err != nil {
		return "", err
	}
	path := filepath.Join(dir, File)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// page is what the template shows.
type page struct {
	Title, Description string
	Provenance         [][2]string
	Warnings           []string
	SteadyColumns      []string
	SteadyRows         []steadyRow
	Charts             []namedChart
	BandNote           string
	Privacy            []privacyRow
	PrivacyChart       *chart
	Audit              []auditRow
	Messages           *messages
	Scenario           string
}

type steadyRow struct {
	Label  string
	Runs   int
	Values []string
}

type namedChart struct {
	Heading string
	*chart
}

type privacyRow struct {
	Label, Formula, Sigma, Norm, PerRound, Final, Target string
}

type auditRow struct {
	Label, Links, Predicted, Measured, Epsilon string
}

// messages are the message statistics: from the trace when the run has one,
// else the counts of summary.json.
type messages struct {
	Source  string
	Types   []stats.RoundType
	Actors  []stats.Actor
	Omitted int // actors left out of the table
	PerRun  [][2]string
}

// build assembles the page.
func build(r *rundir.Run) (*page, error) {
	s := &r.Summary
	pg := &page{Title: s.Scenario, Description: s.Description, Scenario: string(r.Scenario)}
	pg.Provenance = provenanceRows(r)
	if r.Provenance == nil {
		pg.Warnings = append(pg.Warnings, "the run directory has no provenance.json (written by maple run since this version): the git commit, Go version and command line are unknown")
	} else if r.Provenance.ScenarioSHA256 != r.Hash {
		pg.Warnings = append(pg.Warnings, "scenario.yaml changed after the run: its hash differs from the one recorded in provenance.json")
	}
	byLabel := map[string]*rundir.CurveSummary{}
	for i := range s.Curves {
		byLabel[s.Curves[i].Label] = &s.Curves[i]
	}
	pg.Warnings = append(pg.Warnings, curveWarnings(s)...)
	if len(r.Metrics) == 0 {
		return nil, fmt.Errorf("%s: metrics.csv has no rows", r.Dir)
	}
	pg.SteadyColumns = r.MetricNames()
	for _, c := range s.Curves {
		row := steadyRow{Label: c.Label, Runs: c.Runs}
		for _, m := range pg.SteadyColumns {
			row.Values = append(row.Values, steadyValue(&c, m))
		}
		pg.SteadyRows = append(pg.SteadyRows, row)
	}
	charts, note, err := curveCharts(r, byLabel)
	if err != nil {
		return nil, err
	}
	pg.Charts, pg.BandNote = charts, note
	if note == "" {
		pg.Warnings = append(pg.Warnings, "metrics.csv has no per-iteration standard deviations (a run of an older maple): the curves are drawn without confidence bands")
	}
	if pg.Privacy, pg.PrivacyChart, err = privacyBudget(s); err != nil {
		return nil, err
	}
	pg.Audit = auditRows(s)
	if pg.Messages, err = messageStats(r); err != nil {
		return nil, err
	}
	return pg, nil
}

func provenanceRows(r *rundir.Run) [][2]string {
	s := &r.Summary
	rows := [][2]string{{"maple version", s.Version}, {"engine", s.Engine}, {"scenario seed", strconv.FormatUint(s.Seed, 10)}}
	if len(s.Curves) > 0 && len(s.Curves[0].RunSeeds) > 0 {
		seeds := s.Curves[0].RunSeeds
		shown := strings.Join(seeds[:min(3, len(seeds))], ", ")
		if len(seeds) > 3 {
			shown += fmt.Sprintf(" … (%d runs)", len(seeds))
		}
		rows = append(rows, [2]string{"run seeds", shown})
	}
	rows = append(rows, [2]string{"scenario hash (SHA-256 of scenario.yaml)", r.Hash})
	if p := r.Provenance; p != nil {
		commit := p.Revision
		if commit == "" {
			commit = "unknown (built outside a git work tree)"
		} else if p.Modified {
			commit += " (with uncommitted changes)"
		}
		if p.RevisionTime != "" {
			commit += ", " + p.RevisionTime
		}
		rows = append(rows, [2]string{"git commit", commit}, [2]string{"Go version", p.GoVersion + " " + p.Platform},
			[2]string{"command line", strings.Join(p.Command, " ")})
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

// steadyValue renders a curve's steady state of metric m: in dB for
// mean-square deviations, "−∞ dB (exact)" for a zero.
func steadyValue(c *rundir.CurveSummary, m string) string {
	if c.Diverged {
		return fmt.Sprintf("diverged (iteration %d)", c.DivergedAt)
	}
	lin, hasLin := c.SteadyState[m]
	if db, ok := c.SteadyState[m+"_db"]; ok {
		switch {
		case known(db):
			return fmt.Sprintf("%.2f dB", float64(db))
		case hasLin && lin == 0:
			return "−∞ dB (exact)"
		}
		return "—"
	}
	if !hasLin || !known(lin) {
		return "—"
	}
	return strconv.FormatFloat(float64(lin), 'g', 4, 64)
}

// known reports whether a number of summary.json was written as a value,
// not as null (summary.json writes NaN and ±∞ as null, read back as NaN).
func known(x rundir.Number) bool { return !math.IsNaN(float64(x)) }

// curveCharts draws one chart per metric (and value of the group-by field),
// every curve with its 95% confidence band when metrics.csv has standard
// deviations.
func curveCharts(r *rundir.Run, byLabel map[string]*rundir.CurveSummary) ([]namedChart, string, error) {
	type group struct {
		value  string
		curves []*rundir.CurveMetrics
	}
	var groups []group
	for i := range r.Metrics {
		c := &r.Metrics[i]
		value := ""
		if cs := byLabel[c.Label]; cs != nil && r.GroupBy != "" {
			for _, st := range cs.Settings {
				if st.Field == r.GroupBy {
					value = st.Value
				}
			}
		}
		k := slices.IndexFunc(groups, func(g group) bool { return g.value == value })
		if k < 0 {
			groups = append(groups, group{value: value})
			k = len(groups) - 1
		}
		groups[k].curves = append(groups[k].curves, c)
	}
	var charts []namedChart
	note := ""
	for _, m := range r.MetricNames() {
		for _, g := range groups {
			var ss []series
			db := false
			for _, c := range g.curves {
				runs := 1
				if cs := byLabel[c.Label]; cs != nil {
					runs = cs.Runs
				}
				s, isDB, banded := curveSeries(c, m, runs)
				if s == nil {
					continue
				}
				db = db || isDB
				if banded {
					note = "Bands are 95% confidence intervals of the mean over the Monte-Carlo runs, ±1.96·s/√runs with s the per-iteration standard deviation across runs (for dB curves, the interval of the linear mean, converted, its lower end clipped 20 dB below the mean)."
				}
				s.label = legendLabel(c.Label, r.GroupBy, g.value)
				ss = append(ss, *s)
			}
			if len(ss) == 0 {
				continue
			}
			heading := m
			if g.value != "" {
				heading += " — " + lastPart(r.GroupBy) + "=" + g.value
			}
			yLabel := m
			if db {
				yLabel += " (dB)"
			}
			ch, err := svgChart(heading, "iteration", yLabel, ss)
			if err != nil {
				return nil, "", err
			}
			charts = append(charts, namedChart{Heading: heading, chart: ch})
		}
	}
	return charts, note, nil
}

// curveSeries returns the series of metric m of curve c: in dB when the
// CSV has its dB column, with a band when it has its standard deviation.
func curveSeries(c *rundir.CurveMetrics, m string, runs int) (s *series, db, banded bool) {
	lin, ok := c.Columns[m]
	if !ok {
		return nil, false, false
	}
	s = &series{x: c.Iterations, y: lin}
	dbCol, db := c.Columns[m+"_db"]
	if db {
		s.y = dbCol
	}
	z := 1.96 / math.Sqrt(float64(runs))
	switch std, dbStd := c.Columns[m+"_std"], c.Columns[m+"_db_std"]; {
	case runs < 2:
	case db && dbStd != nil:
		s.lo, s.hi = make([]float64, len(lin)), make([]float64, len(lin))
		for k := range lin {
			s.lo[k], s.hi[k] = dbCol[k]-z*dbStd[k], dbCol[k]+z*dbStd[k]
		}
		banded = true
	case std != nil:
		s.lo, s.hi = make([]float64, len(lin)), make([]float64, len(lin))
		for k := range lin {
			lo, hi := lin[k]-z*std[k], lin[k]+z*std[k]
			if db {
				floor := lin[k] / 100
				lo, hi = 10*math.Log10(max(lo, floor)), 10*math.Log10(hi)
			}
			s.lo[k], s.hi[k] = lo, hi
		}
		banded = true
	}
	return s, db, banded
}

// legendLabel drops the group-by setting (stated in the heading) from a
// curve label made of ", "-joined parts.
func legendLabel(label, groupBy, value string) string {
	if groupBy == "" {
		return label
	}
	drop := lastPart(groupBy) + "=" + value
	var kept []string
	for _, part := range strings.Split(label, ", ") {
		if part != drop {
			kept = append(kept, part)
		}
	}
	if len(kept) == 0 {
		return label
	}
	return strings.Join(kept, ", ")
}

func lastPart(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// privacyBudget tabulates the accountant's ε of every curve with privacy
// noise and draws ε(i) round by round where it grows linearly in i (the
// Laplace bounds: ε(i) = i·ε per iteration; Gaussian noise is reported as
// (ε, δ) at the last iteration only).
func privacyBudget(s *rundir.Summary) ([]privacyRow, *chart, error) {
	var rows []privacyRow
	var ss []series
	for _, c := range s.Curves {
		p, ok := c.Details["privacy"].(map[string]any)
		if !ok || p["mechanism"] == "none" {
			continue // no noise: the curve reports no privacy
		}
		row := privacyRow{Label: c.Label, Formula: str(p["formula"]), Sigma: num(p["sigma"]), Norm: str(p["norm"]),
			PerRound: num(p["epsilon_per_iteration"]), Final: num(p["epsilon_final"]), Target: num(p["sigma_for_target"])}
		per, linear := p["epsilon_per_iteration"].(float64)
		if !linear {
			// Gaussian noise: (ε, δ) from the composed mechanism, which
			// does not grow linearly in i.
			row.Formula = fmt.Sprintf("%s noise, (ε, δ) at δ = %s: %s", str(p["mechanism"]), num(p["delta"]), str(p["bound"]))
			rows = append(rows, row)
			continue
		}
		rows = append(rows, row)
		x := make([]float64, c.Iterations+1)
		y := make([]float64, c.Iterations+1)
		for i := range x {
			x[i], y[i] = float64(i), float64(i)*per
		}
		ss = append(ss, series{label: c.Label, x: x, y: y})
	}
	if len(rows) == 0 {
		return nil, nil, nil
	}
	if len(ss) == 0 {
		return rows, nil, nil
	}
	ch, err := svgChart("privacy budget ε(i)", "iteration i", "ε(i)", ss)
	return rows, ch, err
}

// auditRows sets each eavesdropper's measured reconstruction error beside
// its prediction and the accountant's ε.
func auditRows(s *rundir.Summary) []auditRow {
	var rows []auditRow
	for _, c := range s.Curves {
		a, ok := c.Details["audit"].(map[string]any)
		if !ok {
			continue
		}
		row := auditRow{Label: c.Label, Links: fmt.Sprintf("agent %v → %v", a["victim"], a["links"]),
			Predicted: "−∞ dB (exact)", Measured: steadyValue(&c, "audit_msd"), Epsilon: "no privacy noise"}
		if v, ok := a["predicted_msd_db"].(float64); ok {
			row.Predicted = fmt.Sprintf("%.2f dB", v)
		}
		if p, ok := c.Details["privacy"].(map[string]any); ok && p["mechanism"] != "none" {
			row.Epsilon = num(p["epsilon_final"])
		}
		rows = append(rows, row)
	}
	return rows
}

// maxActorRows bounds the per-actor table; the rest are counted.
const maxActorRows = 60

// messageStats summarizes the trace, or without one the summary's counts.
func messageStats(r *rundir.Run) (*messages, error) {
	t, err := rundir.OpenTrace(r.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		m := &messages{Source: "summary.json (the run has no trace: run it with --trace for per-type and per-actor statistics)"}
		for _, c := range r.Summary.Curves {
			// summary.json leaves out a zero count (omitempty).
			if c.MessagesPerRun != 0 && known(c.MessagesPerRun) {
				vt := "0"
				if known(c.VirtualTime) {
					vt = strconv.FormatFloat(float64(c.VirtualTime), 'g', 6, 64)
				}
				m.PerRun = append(m.PerRun, [2]string{c.Label, fmt.Sprintf("%.0f messages, %s s virtual time per run", float64(c.MessagesPerRun), vt)})
			}
		}
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	defer t.Close()
	st, err := stats.Collect(t, trace.Filter{})
	if err != nil {
		return nil, err
	}
	m := &messages{Source: fmt.Sprintf("%s: %d messages in %d runs, virtual duration %s s", filepath.Base(t.Path), st.Records, st.Runs,
		strconv.FormatFloat(st.Duration, 'g', 6, 64)), Types: st.Types, Actors: st.Actors}
	if len(m.Actors) > maxActorRows {
		m.Omitted = len(m.Actors) - maxActorRows
		m.Actors = m.Actors[:maxActorRows]
	}
	return m, nil
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
