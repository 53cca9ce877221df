package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"maple/figures"
	"maple/rundir"
	"maple/scenarios"
)

// audited is DP-FedAvg with central noise audited white-box: a many-run
// curve (four runs with the canary, four without: the fewest a many-run
// audit takes) and a one-run curve of about 60 canaries, small enough for
// a test. Its bounds are weak; the tests check how the page shows them.
const audited = `name: audited
description: DP-FedAvg audited white-box in many runs and in one
seed: 29
runs: 8
iterations: 10
data: {kind: regression, agents: 40, samples: 5, dim: 8, regenerate: once}
loss: {optimum: none}
algorithm: {kind: fedavg, step_size: 0.001, fedavg: {participation: poisson, participants: 4, local_steps: 1, batch: 5}}
privacy:
  dp: {mode: central, clip: 10, noise_multiplier: 1}
  audit: {method: many-run}
curves:
  - {label: many-run, set: {}}
  - label: one-run
    set:
      runs: 1
      data: {kind: regression, agents: 120, samples: 5, dim: 64, regenerate: once}
      privacy.audit: {method: one-run, canaries: 60}
`

// infiniteFrom is the row from which withInfiniteUpper makes the first
// audited curve's accountant report ε = +∞.
const infiniteFrom = 6

// withInfiniteUpper returns a copy of the run directory dir whose audits'
// accountant bounds nothing — ε = +∞, which summary.json writes as null —
// from row infiniteFrom on in the first audited curve and after row 0 in
// the others: what a ledger whose losses leave its grid, with no Rényi
// bound behind it, reports. The ratio is then absent, as maple run leaves
// it.
func withInfiniteUpper(t *testing.T, dir string) string {
	t.Helper()
	out := copyDir(t, dir)
	path := filepath.Join(out, rundir.SummaryFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber() // the numbers as written, bit for bit
	if err := d.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	from := infiniteFrom
	for _, c := range doc["curves"].([]any) {
		a, ok := c.(map[string]any)["audit"].(map[string]any)
		if !ok {
			continue
		}
		upper := a["upper"].([]any)
		for k := from; k < len(upper); k++ {
			upper[k] = nil
		}
		a["upper_final"] = nil
		delete(a, "ratio")
		from = 1
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(out, File))
	return out
}

// rowsOf returns the data rows of a table: its body's rows but the rows
// that hold what the bounds assume.
func rowsOf(table *element) [][]string {
	var out [][]string
	for _, tr := range table.all(func(x *element) bool { return x.name == "tr" }) {
		if tr.attr["class"] == "assumes" || len(tr.all(func(x *element) bool { return x.name == "th" })) > 0 {
			continue
		}
		var cells []string
		for _, td := range tr.all(func(x *element) bool { return x.name == "td" }) {
			cells = append(cells, td.textContent())
		}
		out = append(out, cells)
	}
	return out
}

// numbers returns a bound's values (NaN for null) at the iterations, none
// if the audit has no such bound.
func numbers(iterations []int, xs []rundir.Number) (its, vs []float64) {
	for k, x := range xs {
		its, vs = append(its, float64(iterations[k])), append(vs, float64(x))
	}
	return its, vs
}

// floats returns a line's numbers, NaN for null.
func floats(xs []jsNum) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}

// The report of a run directory with audits has the privacy audit: a row
// per audited curve with summary.json's bounds at the last iteration, what
// each bound assumes in words, and a chart per curve whose lines are, value
// for value, summary.json's upper bound and lower bounds at the rows where
// they are numbers, each bound in its own style.
func TestAuditBoundsByParsing(t *testing.T) {
	path := report(t, audited)
	doc := parse(t, path)
	selfContained(t, path, doc)
	sum := readSummary(t, filepath.Dir(path))
	if doc.byID("privacy-audit") == nil || doc.byID("bounds-table") == nil {
		t.Fatal("the report has no privacy audit")
	}
	if links := doc.all(func(x *element) bool { return x.name == "a" && x.attr["href"] == "#privacy-audit" }); len(links) != 1 {
		t.Errorf("%d links to the privacy audit, want one in the navigation", len(links))
	}
	rows := rowsOf(doc.byID("bounds-table"))
	if len(rows) != 2 {
		t.Fatalf("%d rows in the audit table, want the two audited curves", len(rows))
	}
	for i, c := range sum.Curves {
		a, cells := c.Audit, rows[i]
		if a == nil {
			t.Fatalf("curve %s has no audit", c.Label)
		}
		want := []string{c.Label, a.Method, a.Canary, a.View, "", "95 %, δ = 1e-05", epsilon(a.UpperFinal), a.Relation + "; sampling: " + a.Sampling,
			epsilon(a.LowerFinal), "—", epsilon(a.MeasuredFinal), ratio(a.Ratio)}
		if a.Method == scenarios.AuditManyRun {
			want[4] = fmt.Sprintf("%d runs in, %d out", a.RunsIn, a.RunsOut)
			want[9] = epsilon(a.AssumedFinal)
		} else {
			want[4] = fmt.Sprintf("%d canaries, %d in; %d of %d guesses right", a.Canaries, a.Included, a.Correct, a.Guesses)
		}
		if len(cells) != len(want) {
			t.Fatalf("row of %s: %q", c.Label, cells)
		}
		for k := range want {
			got := cells[k]
			if k == 10 {
				got, _, _ = strings.Cut(got, "z") // the value, then its noise multiplier
			}
			if got != want[k] {
				t.Errorf("%s, column %d: %q, want %q (summary.json)", c.Label, k, cells[k], want[k])
			}
		}
	}
	// What each bound assumes: the statistics' texts, as summary.json has
	// them, under each curve's row.
	details := doc.byID("bounds-table").all(func(x *element) bool { return x.name == "details" })
	if len(details) != 2 {
		t.Fatalf("%d statistics elements, want one per curve", len(details))
	}
	for i, c := range sum.Curves {
		text := details[i].textContent()
		for _, s := range []string{c.Audit.Accountant, c.Audit.Statistic, c.Audit.AssumedStatistic, c.Audit.MeasuredStatistic} {
			if !strings.Contains(text, s) {
				t.Errorf("%s: the statistics lack %.60q…", c.Label, s)
			}
		}
	}
	// The charts: in the page's order, each with its static figure and its
	// data, the four bounds in fixed styles.
	figs := doc.all(func(x *element) bool { return x.name == "figure" })
	data := chartData(t, doc)
	if len(figs) != len(data) {
		t.Fatalf("%d figures, %d charts' data", len(figs), len(data))
	}
	found := 0
	for i, f := range figs {
		if data[i].ID != f.attr["id"] {
			t.Errorf("figure %d is %s, its data %s", i, f.attr["id"], data[i].ID)
		}
		if !strings.HasPrefix(f.attr["id"], "chart-audit-") {
			continue
		}
		if f.attr["id"] != fmt.Sprintf("chart-audit-%d", found+1) || found >= len(sum.Curves) {
			t.Fatalf("audit chart %s out of order", f.attr["id"])
		}
		c := sum.Curves[found]
		a := c.Audit
		found++
		if len(f.all(func(x *element) bool { return x.name == "svg" })) == 0 {
			t.Errorf("%s has no static figure", f.attr["id"])
		}
		if h := f.all(func(x *element) bool { return x.name == "h3" }); len(h) != 1 || !strings.HasPrefix(h[0].textContent(), "ε of "+c.Label+": ") {
			t.Errorf("%s: heading %v", f.attr["id"], h)
		}
		views := data[i].Views
		if len(views) != 1 || views[0].X != "iteration" || len(views[0].Lines) != boundLines {
			t.Fatalf("%s: %+v; want the four bounds against the iteration", data[i].ID, views)
		}
		for j, xs := range [][]rundir.Number{a.Upper, a.Lower, a.Assumed, a.Measured} {
			l := views[0].Lines[j]
			its, vs := numbers(a.Iterations, xs)
			if fmt.Sprint(floats(l.X)) != fmt.Sprint(its) || fmt.Sprint(floats(l.M)) != fmt.Sprint(vs) {
				t.Errorf("%s, line %d (%s): %v at %v, want summary.json's %v at %v", data[i].ID, j, l.Label, l.M, l.X, vs, its)
			}
			if st := figures.StyleOf(j); l.Color != st.Hex() {
				t.Errorf("%s, line %d drawn in %s, want %s", data[i].ID, j, l.Color, st.Hex())
			}
		}
	}
	if found != 2 {
		t.Errorf("%d audit charts, want one per audited curve", found)
	}
}

// An accountant that bounds nothing (ε = +∞, null in summary.json, which
// writes an undefined ε alike) is shown as such: the table says +∞ or
// undefined and gives no ratio, the chart's upper line stops where the
// bound does and its legend and caption say where ε has no number; the
// page renders.
func TestAuditInfiniteUpperRenders(t *testing.T) {
	dir := withInfiniteUpper(t, runDirectory(t, audited))
	path, _, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, path)
	sum := readSummary(t, dir)
	rows := rowsOf(doc.byID("bounds-table"))
	if len(rows) != 2 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r[6] != "+∞ or undefined" || r[11] != "— (no finite upper bound)" {
			t.Errorf("row of %s: upper %q, ratio %q; want +∞ and no ratio", r[0], r[6], r[11])
		}
	}
	its := sum.Curves[0].Audit.Iterations
	for i, want := range []struct {
		drawn int
		where string
	}{
		{infiniteFrom, fmt.Sprintf("iterations %d–%d", its[infiniteFrom], its[len(its)-1])},
		{1, fmt.Sprintf("iterations %d–%d", its[1], its[len(its)-1])},
	} {
		id := fmt.Sprintf("chart-audit-%d", i+1)
		var spec *jsChart
		for _, c := range chartData(t, doc) {
			if c.ID == id {
				spec = &c
			}
		}
		if spec == nil {
			t.Fatalf("no %s", id)
		}
		upper := spec.Views[0].Lines[upperLine]
		finite := slices.IndexFunc(upper.M, func(x jsNum) bool { return math.IsNaN(float64(x)) })
		if len(upper.X) != len(its) || finite != want.drawn || slices.ContainsFunc(upper.M[finite:], func(x jsNum) bool { return !math.IsNaN(float64(x)) }) {
			t.Errorf("%s: the upper line has %v at %v; want %d numbers, then null", id, upper.M, upper.X, want.drawn)
		}
		if !strings.Contains(upper.Label, "+∞ or undefined at "+want.where+", not drawn") {
			t.Errorf("%s: upper line %q; want it to say where ε is +∞ (%s)", id, upper.Label, want.where)
		}
		caption := doc.byID(id).all(func(x *element) bool { return x.name == "figcaption" })
		if len(caption) != 1 || !strings.Contains(caption[0].textContent(), "At "+want.where+" summary.json has no number for the accountant's ε: it is +∞") {
			t.Errorf("%s: caption %v", id, caption)
		}
	}
}

// The comparison shows the audits of every run side by side: a row and a
// chart per audited curve of each run, named by its run.
func TestCompareShowsTheAudits(t *testing.T) {
	a := runDirectory(t, audited)
	b := withInfiniteUpper(t, a)
	out := filepath.Join(t.TempDir(), CompareFile)
	if _, err := WriteCompare([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	doc := parse(t, out)
	names := runNames([]string{a, b})
	rows := rowsOf(doc.byID("bounds-table"))
	if len(rows) != 4 || rows[0][0] != names[0] || rows[3][0] != names[1] || rows[3][1] != "one-run" || rows[3][7] != "+∞ or undefined" {
		t.Fatalf("comparison's audit rows %q", rows)
	}
	var labels []string
	for _, c := range chartData(t, doc) {
		if strings.HasPrefix(c.ID, "chart-audit-") {
			labels = append(labels, c.Y)
		}
	}
	if len(labels) != 4 || !strings.HasPrefix(labels[0], "ε of "+names[0]+", many-run") || !strings.HasPrefix(labels[3], "ε of "+names[1]+", one-run") {
		t.Errorf("comparison's audit charts %q", labels)
	}
}

// The audit part from summaries a run may hold: bounds evaluated at some
// rows only have null elsewhere (the script draws through the numbers and
// shows no value there); an upper
// bound that is +∞ at the end is left out and said to be; a lower bound
// above the upper one is flagged; series shorter than the iterations are
// flagged, not a crash; an audit without an accountant has no upper bound;
// a curve without an audit has no row.
func TestBoundsOf(t *testing.T) {
	nan := rundir.Number(math.NaN())
	r := &rundir.Run{Summary: rundir.Summary{Scenario: "s", Curves: []rundir.CurveSummary{
		{Label: "none"},
		{Label: "sparse", Audit: &rundir.Audit{Method: "many-run", Canary: "client", View: "white-box", Confidence: 0.9, Delta: 1e-6,
			RunsIn: 3, RunsOut: 2, Iterations: []int{0, 5, 10, 15, 20}, Lower: []rundir.Number{0, nan, 0.5, nan, 0.75},
			Upper: []rundir.Number{0, 1, 2, nan, nan}, Measured: []rundir.Number{0, nan, nan, nan, 1.5}, MeasuredNoise: 2,
			LowerFinal: 0.75, UpperFinal: nan, MeasuredFinal: 1.5, Relation: "replace-one"}},
		{Label: "above", Audit: &rundir.Audit{Method: "many-run", Confidence: 0.95, Iterations: []int{0, 5},
			Lower: []rundir.Number{0, 1.5}, Upper: []rundir.Number{0, 1}, LowerFinal: 1.5, UpperFinal: 1, Ratio: 1.5}},
		{Label: "short", Audit: &rundir.Audit{Method: "one-run", Canaries: 10, Iterations: []int{0, 5}, Lower: []rundir.Number{0}}},
	}}}
	set := newChartSet(scenarios.Output{})
	b, err := boundsOf([]*rundir.Run{r}, nil, "title", set)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rows) != 3 || len(b.Charts) != 3 || len(set.specs) != 3 {
		t.Fatalf("%d rows, %d charts; want one per audited curve", len(b.Rows), len(b.Charts))
	}
	sparse := set.specs[0].Views[0].Lines
	for j, want := range []string{"[0 1 2 NaN NaN]", "[0 NaN 0.5 NaN 0.75]", "[]", "[0 NaN NaN NaN 1.5]"} {
		if got := fmt.Sprint(floats(sparse[j].M)); got != want {
			t.Errorf("line %d (%s): %s, want %s", j, sparse[j].Label, got, want)
		}
		if want != "[]" && fmt.Sprint(floats(sparse[j].X)) != "[0 5 10 15 20]" {
			t.Errorf("line %d (%s) at %v, want every iteration", j, sparse[j].Label, sparse[j].X)
		}
	}
	if !strings.Contains(sparse[upperLine].Label, "(replace-one); +∞ or undefined at iterations 15–20, not drawn") {
		t.Errorf("upper line %q", sparse[upperLine].Label)
	}
	row := b.Rows[0]
	if row.Upper != "+∞ or undefined" || row.Ratio != "— (no finite upper bound)" || row.Strict != "0.75" || row.Assumed != "—" ||
		row.Measured != "1.5" || row.MeasuredNoise != "z ≤ 2" || row.Units != "3 runs in, 2 out" || row.Level != "90 %, δ = 1e-06" {
		t.Errorf("row %+v", row)
	}
	if c := b.Charts[0].Common; !strings.Contains(c, "The strict and measured-noise bounds are evaluated at some rows only") {
		t.Errorf("caption %q; want it to say which bounds are evaluated at some rows", c)
	}
	if b.Rows[2].Upper != "— (no accountant)" || !strings.Contains(b.Charts[2].Common, "no upper bound") {
		t.Errorf("without an accountant: %+v, caption %q", b.Rows[2], b.Charts[2].Common)
	}
	want := []string{
		"curve above: the strict lower bound exceeds the accountant's ε at 1 of the 2 rows where both are numbers (the most at iteration 5: 1.5 > 1)",
		"curve short: the audit's lower has 1 values for 2 iterations",
	}
	if len(b.Findings) != len(want) {
		t.Fatalf("findings %q", b.Findings)
	}
	for i, w := range want {
		if !strings.HasPrefix(b.Findings[i], w) {
			t.Errorf("finding %q, want %q…", b.Findings[i], w)
		}
	}
	if got := iterationRanges([]int{0, 2, 4, 6, 8, 10}, []int{1, 2, 3, 5}); got != "iterations 2–6 and 10" {
		t.Errorf("iterationRanges: %q", got)
	}
	if got := iterationRanges([]int{0, 2, 4}, []int{2}); got != "iteration 4" {
		t.Errorf("iterationRanges: %q", got)
	}
}
