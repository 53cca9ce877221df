package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "maple/families/all" // the runs need the families
	"maple/figures"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// The test scenarios, small enough for a test.
const (
	// tiny is decentralized learning with two privacy curves, an
	// eavesdropper and plotted figures.
	tiny = `name: tiny
runs: 3
iterations: 20
data: {kind: regression, agents: 6, samples: 20, dim: 2}
loss: {kind: least-squares, rho: 0.01}
algorithm: {kind: diffusion, step_size: 0.2, diffusion: {strategy: atc, audit: {victim: 1}}}
topology: {graph: ring, weights: metropolis}
privacy: {mechanism: laplace, variance: 0.01}
curves:
  - {label: none, set: {privacy.scheme: none}}
  - {label: random, set: {privacy.scheme: random}}
`
	// clocked is synchronous and asynchronous FedAvg with stragglers on the
	// virtual clock, output.x_axis time: their iterations take very
	// different times.
	clocked = `name: clocked
description: synchronous and asynchronous FedAvg on the virtual clock
seed: 3
runs: 2
data: {kind: regression, agents: 20, samples: [20, 40], dim: 2}
loss: {kind: least-squares, rho: 0.001}
algorithm: {kind: fedavg, step_size: 0.05, fedavg: {participants: 5, local_steps: 2, batch: 5}}
network:
  latency: 0.05
  step_time: {kind: fixed, value: 0.1}
  classes: [{name: straggler, fraction: 0.2, slowdown: 10}]
curves:
  - {label: synchronous, set: {iterations: 30}}
  - {label: FedAsync, set: {iterations: 600, algorithm.fedavg.server: {kind: fedasync, alpha: 0.6, staleness: polynomial, a: 0.5}}}
output: {every: 2, x_axis: time}
`
	// sweepy sweeps FedAvg's step size.
	sweepy = `name: sweepy
description: steady-state MSD against the step size
seed: 5
runs: 2
iterations: 200
data: {kind: regression, agents: 20, samples: 30, dim: 2}
loss: {kind: least-squares, rho: 0.001}
algorithm: {kind: fedavg, step_size: 0.04, fedavg: {participants: 5, local_steps: 2, batch: 5}}
sweep: {algorithm.step_size: [0.04, 0.02, 0.01]}
output: {every: 5, steady_state: 0.25}
`
)

// fixtures holds the run directories the tests share, each run once, in
// a directory TestMain removes.
var fixtures struct {
	sync.Mutex
	root string
	dirs map[string]string
}

func TestMain(m *testing.M) {
	root, err := os.MkdirTemp("", "maple-report-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtures.root, fixtures.dirs = root, map[string]string{}
	code := m.Run()
	closeBrowser()
	os.RemoveAll(root)
	os.Exit(code)
}

// runDirectory returns the run directory of scenario src (with its trace,
// and the provenance maple run records), running it the first time it is
// asked for; overrides are --set assignments.
func runDirectory(t *testing.T, src string, overrides ...string) string {
	t.Helper()
	fixtures.Lock()
	defer fixtures.Unlock()
	key := src + strings.Join(overrides, "\n")
	if dir, ok := fixtures.dirs[key]; ok {
		return dir
	}
	dir, err := os.MkdirTemp(fixtures.root, "run-")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := scenarios.Parse([]byte(src), "test.yaml", dir, overrides)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Execute(plan, dir, run.Options{Trace: true}); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteProvenance(dir, run.Version, []string{"maple", "run", "test.yaml", "--trace"}); err != nil {
		t.Fatal(err)
	}
	fixtures.dirs[key] = dir
	return dir
}

// report writes the report of the scenario's run directory and returns its
// path.
func report(t *testing.T, src string, overrides ...string) string {
	t.Helper()
	path, _, err := Write(runDirectory(t, src, overrides...))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// element is a parsed XHTML element.
type element struct {
	name     string
	attr     map[string]string
	text     string
	children []*element
}

// parse reads the report as XML — the report is well-formed XHTML, which is
// itself part of what is tested — into a tree.
func parse(t *testing.T, path string) *element {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	root := &element{name: "#document"}
	stack := []*element{root}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed: %v", path, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &element{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				key := a.Name.Local
				if a.Name.Space != "" {
					key = a.Name.Space + ":" + key
				}
				e.attr[key] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			stack[len(stack)-1].text += string(tok)
		}
	}
	return root
}

func (e *element) all(fn func(*element) bool) []*element {
	var out []*element
	var walk func(*element)
	walk = func(x *element) {
		if fn(x) {
			out = append(out, x)
		}
		for _, c := range x.children {
			walk(c)
		}
	}
	walk(e)
	return out
}

func (e *element) byID(id string) *element {
	found := e.all(func(x *element) bool { return x.attr["id"] == id })
	if len(found) == 0 {
		return nil
	}
	return found[0]
}

func (e *element) textContent() string {
	s := e.text
	for _, c := range e.children {
		s += c.textContent()
	}
	return s
}

// chartData returns the charts' data the page carries for its script.
func chartData(t *testing.T, doc *element) []jsChart {
	t.Helper()
	data := doc.byID("maple-data")
	if data == nil {
		t.Fatal("the page has no #maple-data")
	}
	var charts []jsChart
	if err := json.Unmarshal([]byte(data.textContent()), &charts); err != nil {
		t.Fatalf("#maple-data: %v", err)
	}
	return charts
}

// UnmarshalJSON implements json.Unmarshaler for the tests: null reads as
// NaN.
func (x *jsNum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*x = jsNum(math.NaN())
		return nil
	}
	var f float64
	err := json.Unmarshal(b, &f)
	*x = jsNum(f)
	return err
}

// selfContained checks that the page loads nothing from outside itself: no
// element refers to another resource, scripts are inline, CSS imports
// nothing.
func selfContained(t *testing.T, path string, doc *element) {
	t.Helper()
	for _, e := range doc.all(func(*element) bool { return true }) {
		switch e.name {
		case "link", "img", "iframe", "object", "embed", "image", "use":
			t.Errorf("report has a <%s> element", e.name)
		case "script":
			if typ := e.attr["type"]; typ != "" && typ != "application/json" {
				t.Errorf("a script of type %q", typ)
			}
		}
		for k, v := range e.attr {
			// Any namespace: SVG's xlink:href loads images too.
			if local := k[strings.LastIndexByte(k, ':')+1:]; (local == "src" || local == "href") && !strings.HasPrefix(v, "#") {
				t.Errorf("<%s %s=%q> refers outside the page", e.name, k, v)
			}
		}
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("@import")) {
		t.Error("report has a CSS @import")
	}
	for rest := string(raw); ; {
		i := strings.Index(rest, "url(")
		if i < 0 {
			break
		}
		rest = rest[i+len("url("):]
		if arg := strings.TrimLeft(rest, `'" `); !strings.HasPrefix(arg, "#") {
			t.Errorf("report has a CSS url(%.40s…) that refers outside the page", rest)
		}
	}
}

// The report parses as XHTML, loads nothing from outside the file and shows
// every section: the steady-state and final values with a row per curve, a
// chart per metric with its static figure and its data, the privacy budget
// of the noisy curve, the eavesdropper, the message statistics from the
// trace with the set-up round, and the provenance.
func TestReportByParsing(t *testing.T) {
	path := report(t, tiny)
	doc := parse(t, path)
	selfContained(t, path, doc)
	for _, id := range []string{"steady-table", "privacy-table", "audit-table", "message-types", "message-actors", "provenance-table",
		"scenario-yaml", "setup-note", "maple-data"} {
		if doc.byID(id) == nil {
			t.Errorf("report lacks #%s", id)
		}
	}
	rows := doc.byID("steady-table").all(func(x *element) bool { return x.name == "tr" })
	if len(rows) != 2+2 {
		t.Fatalf("steady-state table has %d rows, want two header rows and 2 curves", len(rows))
	}
	cells := rows[2].all(func(x *element) bool { return x.name == "td" })
	// curve, runs, then steady and final of msd_centroid, msd_average,
	// disagreement and audit_msd.
	if len(cells) != 2+2*4 || cells[0].textContent() != "none" || cells[len(cells)-2].textContent() != "−∞ dB (exact)" {
		t.Errorf("steady state of the noise-free curve: %d cells, %q; want the eavesdropper's exact recovery", len(cells), rows[2].textContent())
	}
	sum := readSummary(t, filepath.Dir(path))
	if got, want := cells[3].textContent(), strings.Replace(fmt.Sprintf("%.2f dB", float64(sum.Curves[0].Final["msd_centroid_db"])), "-", "−", 1); got != want {
		t.Errorf("final centroid MSD %q, want summary.json's %q", got, want)
	}
	charts := doc.all(func(x *element) bool { return x.name == "figure" })
	// Four metrics (centroid and average MSD, disagreement, audit), the
	// privacy budget, messages and bytes per round.
	if len(charts) != 7 {
		t.Errorf("%d charts, want 7", len(charts))
	}
	data := chartData(t, doc)
	if len(data) != len(charts) {
		t.Errorf("%d charts' data for %d charts", len(data), len(charts))
	}
	for i, c := range charts {
		if len(c.all(func(x *element) bool { return x.name == "svg" })) == 0 {
			t.Errorf("chart without its static figure: %s", c.textContent())
		}
		if i < len(data) && data[i].ID != c.attr["id"] {
			t.Errorf("chart %d is %s, its data %s", i, c.attr["id"], data[i].ID)
		}
	}
	privacy := doc.byID("privacy-table").all(func(x *element) bool { return x.name == "tr" })
	if len(privacy) != 2 || !strings.Contains(privacy[1].textContent(), "random") {
		t.Errorf("privacy budget rows: %d, want the random curve's", len(privacy))
	}
	prov := doc.byID("provenance-table").textContent()
	for _, want := range []string{"maple version" + run.Version, "git commit", "Go version", "command linemaple run test.yaml --trace", "scenario hash"} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}
	if types := doc.byID("message-types").textContent(); !strings.Contains(types, "StageShare") {
		t.Errorf("message statistics lack the shares:\n%s", types)
	}
	if scenario := doc.byID("scenario-yaml").textContent(); !strings.Contains(scenario, "name: tiny") {
		t.Errorf("scenario section: %q", scenario)
	}
}

func readSummary(t *testing.T, dir string) *rundir.Summary {
	t.Helper()
	r, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return &r.Summary
}

// The report draws the run's own figures: each chart's static figure is,
// byte for byte, the SVG file maple run wrote, drawn again from metrics.csv
// and summary.json; and a curve keeps its palette colour and dash in every
// chart (the figures' StyleOf of its index).
func TestChartsAreTheRunsFigures(t *testing.T) {
	for _, src := range []string{tiny, clocked, sweepy} {
		dir := runDirectory(t, src)
		r, err := rundir.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		charts, err := figures.Charts(options(r), r.Curves())
		if err != nil {
			t.Fatal(err)
		}
		matched := 0
		for _, ch := range charts {
			want, err := os.ReadFile(filepath.Join(dir, ch.Name+".svg"))
			if err != nil {
				t.Errorf("%s: the run has no figure %s.svg: %v", r.Summary.Scenario, ch.Name, err)
				continue
			}
			got, err := ch.SVG()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: %s drawn from the run directory differs from the run's %s.svg", r.Summary.Scenario, ch.Name, ch.Name)
			}
			matched++
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.svg"))
		if matched != len(files) {
			t.Errorf("%s: %d charts matched of the run's %d SVG figures", r.Summary.Scenario, matched, len(files))
		}
		for _, c := range chartData(t, parse(t, report(t, src))) {
			for _, v := range c.Views {
				for i, l := range v.Lines {
					st := figures.StyleOf(i)
					var dash []float64
					for _, d := range st.Dashes {
						dash = append(dash, d.Points())
					}
					if l.Color != st.Hex() || l.Band != st.BandCSS() || fmt.Sprint(l.Dash) != fmt.Sprint(dash) {
						t.Errorf("%s: line %d (%s) drawn %s %s %v, want its figure style %s %s %v", c.ID, i, l.Label, l.Color, l.Band, l.Dash,
							st.Hex(), st.BandCSS(), dash)
					}
				}
			}
		}
	}
}

// The band colour is a valid CSS colour with a real alpha: the palette's
// colour at BandAlpha/255.
func TestBandColour(t *testing.T) {
	if got := figures.StyleOf(0).BandCSS(); got != "rgba(0, 114, 178, 0.1882)" {
		t.Errorf("band colour %q", got)
	}
	if got := figures.StyleOf(1).Hex(); got != "#d55e00" {
		t.Errorf("line colour %q", got)
	}
}

// With output.x_axis time the charts are drawn against the virtual time
// first (the iteration is the second view), labelled in seconds; metrics
// that are zero throughout (no reply was dropped, late or lost) are one
// sentence, not charts nor columns of the table; the messages section shows
// only what summary.json holds.
func TestTimeAxisAndFlatMetrics(t *testing.T) {
	path := report(t, clocked)
	doc := parse(t, path)
	data := chartData(t, doc)
	var msd *jsChart
	for i := range data {
		if data[i].ID == "chart-msd" {
			msd = &data[i]
		}
	}
	if msd == nil || len(msd.Views) != 2 || msd.Views[0].X != "virtual time (s)" || msd.Views[1].X != "iteration" {
		t.Fatalf("the MSD chart: %+v; want its views against the virtual time, then the iteration", msd)
	}
	flat := doc.byID("flat")
	if flat == nil || flat.textContent() != "dropped (agents that did not answer, per round), late (replies after their round closed, per round) and "+
		"lost (messages lost on their links, per round): 0 at every recorded iteration of every curve, not drawn." {
		t.Errorf("flat metrics: %v", flat)
	}
	for _, c := range data {
		for _, name := range []string{"dropped", "late", "lost"} {
			if strings.Contains(c.ID, name) {
				t.Errorf("a chart of %s, which is 0 throughout", c.ID)
			}
		}
	}
	if head := doc.byID("steady-table").textContent(); strings.Contains(head, "dropped") {
		t.Errorf("the table has a column of zeros: %s", head)
	}
}

// A sweep's report has its steady state against the swept value: one point
// per curve, at its step size, whose value is summary.json's steady state.
func TestSweepReportHasSweepFigure(t *testing.T) {
	path := report(t, sweepy)
	doc := parse(t, path)
	if doc.byID("sweeps") == nil || doc.byID("chart-steady-msd-vs-step_size") == nil {
		t.Fatal("the report lacks the sweep section or its figure")
	}
	sum := readSummary(t, filepath.Dir(path))
	want := map[float64]float64{}
	for _, c := range sum.Curves {
		var mu float64
		fmt.Sscan(c.Settings[len(c.Settings)-1].Value, &mu)
		want[mu] = float64(c.SteadyState["msd"])
	}
	for _, c := range chartData(t, doc) {
		if c.ID != "chart-steady-msd-vs-step_size" {
			continue
		}
		l := c.Views[0].Lines
		if !c.Sweep || len(l) != 1 || len(l[0].X) != 3 || len(l[0].Fit) != 2 {
			t.Fatalf("sweep chart %+v", c)
		}
		for k, x := range l[0].X {
			if float64(l[0].M[k]) != want[float64(x)] {
				t.Errorf("steady state at μ = %v: %v, summary.json has %v", x, l[0].M[k], want[float64(x)])
			}
		}
		return
	}
	t.Error("no data for the sweep chart")
}

// maple report A B overlays the runs: every curve of both, labelled with its
// run; a table of both runs' values; the scenario fields that differ.
func TestCompareByParsing(t *testing.T) {
	a, b := runDirectory(t, sweepy), runDirectory(t, sweepy, "seed=6", "runs=3")
	out := filepath.Join(t.TempDir(), CompareFile)
	if _, err := WriteCompare([]string{a, b}, out); err != nil {
		t.Fatal(err)
	}
	doc := parse(t, out)
	selfContained(t, out, doc)
	diff := doc.byID("differences-table").textContent()
	if !strings.Contains(diff, "seed56") || !strings.Contains(diff, "runs23") || strings.Contains(diff, "iterations") {
		t.Errorf("differences: %q; want seed 5/6 and runs 2/3 only", diff)
	}
	rows := doc.byID("steady-table").all(func(x *element) bool { return x.name == "tr" })
	if len(rows) != 2+6 {
		t.Errorf("%d rows in the table, want two header rows and 3 curves of each run", len(rows))
	}
	names := runNames([]string{a, b})
	for _, c := range chartData(t, doc) {
		if c.ID != "chart-msd" {
			continue
		}
		l := c.Views[0].Lines
		if len(l) != 6 || !strings.HasPrefix(l[0].Label, names[0]+", ") || !strings.HasPrefix(l[3].Label, names[1]+", ") {
			t.Errorf("overlay lines %d: %q … %q", len(l), l[0].Label, l[len(l)-1].Label)
		}
		return
	}
	t.Error("no overlaid MSD chart")
}

// Runs are named by their directories' base names, by their paths where
// those repeat, and numbered where the paths repeat too.
func TestRunNames(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"runs/a", "runs/b/"}, []string{"a", "b"}},
		{[]string{"x/run", "y/run"}, []string{"x/run", "y/run"}},
		{[]string{"x/run", "x/run/"}, []string{"x/run", "x/run (2)"}},
	} {
		if got := runNames(c.in); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("runNames(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A directory that is not a complete run directory gets one error naming
// the file that is missing or wrong, for the command to print.
func TestBadRunDirectories(t *testing.T) {
	empty := t.TempDir()
	if _, _, err := Write(empty); err == nil || !strings.Contains(err.Error(), filepath.Join(empty, "scenario.yaml")) {
		t.Errorf("an empty directory: %v", err)
	}
	broken := t.TempDir()
	for name, data := range map[string]string{"scenario.yaml": "name: x\n", "summary.json": "{", "metrics.csv": ""} {
		if err := os.WriteFile(filepath.Join(broken, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := Write(broken); err == nil || !strings.Contains(err.Error(), filepath.Join(broken, "summary.json")) {
		t.Errorf("a broken summary.json: %v", err)
	}
	good := runDirectory(t, sweepy)
	if _, err := WriteCompare([]string{good, empty}, filepath.Join(t.TempDir(), "c.html")); err == nil || !strings.Contains(err.Error(), empty) {
		t.Errorf("comparing with an empty directory: %v", err)
	}
}

// copyDir copies the files of the run directory from into a new temporary
// directory and returns it.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// A run directory that is not what maple run wrote is refused, naming the
// file and line, and no page is written; one that stopped while drawing its
// figures gets its page, which says so among its warnings, and the flag is
// returned for the command to print. The -o path is named when the page
// cannot be written there.
func TestReportOfWhatMapleDidNotWrite(t *testing.T) {
	good := runDirectory(t, tiny)
	refused := []struct {
		name, file string
		change     func(string) string
		want       string
	}{
		{"metrics.csv cut inside a row", rundir.MetricsFile, func(s string) string { return s[:len(s)-3] }, "metrics.csv:43: the row is cut short"},
		{"a row nan,inf,-inf", rundir.MetricsFile, func(s string) string { return s + "random,21,nan,inf,-inf,nan,inf,-inf\n" }, "metrics.csv:44: "},
		{"summary.json {}", rundir.SummaryFile, func(string) string { return "{}" }, `summary.json: has no "scenario"`},
		{"summary.json null", rundir.SummaryFile, func(string) string { return "null" }, "summary.json: null"},
	}
	for _, c := range refused {
		dir := copyDir(t, good)
		path := filepath.Join(dir, c.file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.change(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(dir, File))
		if _, flags, err := Write(dir); err == nil || !strings.HasPrefix(err.Error(), filepath.Join(dir, c.want[:strings.IndexByte(c.want, ':')])) || !strings.Contains(err.Error(), c.want) || flags != nil {
			t.Errorf("%s: %v, flags %q; want a refusal naming %s", c.name, err, flags, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, File)); err == nil {
			t.Errorf("%s: a page was written", c.name)
		}
	}
	pending := copyDir(t, good)
	path := filepath.Join(pending, rundir.SummaryFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, bytes.Replace(b, []byte(`"scenario": "tiny",`), []byte(`"scenario": "tiny", "pending": "figures",`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	page, flags, err := Write(pending)
	if err != nil {
		t.Fatal(err)
	}
	if len(flags) != 1 || !strings.HasPrefix(flags[0], pending+`: summary.json is marked "pending": "figures": the run stopped while drawing its figures`) {
		t.Errorf("flags %q, want the pending figures", flags)
	}
	warnings := parse(t, page).all(func(e *element) bool {
		return e.name == "li" && e.attr["class"] == "" && strings.Contains(e.textContent(), "pending")
	})
	if len(warnings) != 1 {
		t.Errorf("the page's warnings say %d times that the figures are pending, want once", len(warnings))
	}
	if _, err := WriteTo(good, "/proc/nope.html"); err == nil || !strings.HasPrefix(err.Error(), "cannot write /proc/nope.html: ") {
		t.Errorf("writing the page to /proc/nope.html: %v; want an error naming it", err)
	}
}

// The report is a function of the run directory: written twice, the same
// bytes.
func TestReportIsReproducible(t *testing.T) {
	path := report(t, tiny)
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Write(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Error("the report differs from one writing to the next")
	}
}

// The privacy budget lists the noisy curves only: a noise-free curve reports
// no privacy; ε(i) is charted for the Laplace curve, whose bound composes
// linearly, and a Gaussian curve's (ε, δ) has its row and a note.
func TestPrivacyBudgetRows(t *testing.T) {
	r := &rundir.Run{Summary: rundir.Summary{Scenario: "p", Curves: []rundir.CurveSummary{
		{Label: "none", Iterations: 10, Runs: 1, Details: map[string]any{"privacy": map[string]any{"mechanism": "none"}}},
		{Label: "laplace", Iterations: 10, Runs: 1, Details: map[string]any{"privacy": map[string]any{"mechanism": "laplace", "formula": "thesis eq. 2.69", "epsilon_per_iteration": 2.0, "epsilon_final": 20.0}}},
		{Label: "gaussian", Iterations: 10, Runs: 1, Details: map[string]any{"privacy": map[string]any{"mechanism": "gaussian", "delta": 1e-5, "bound": "analytic Gaussian mechanism", "epsilon_final": 7.0}}},
	}}}
	var curves []rundir.Curve
	for _, c := range r.Summary.Curves {
		curves = append(curves, rundir.Curve{Spec: &scenarios.CurveSpec{Label: c.Label}, Runs: 1})
	}
	set := newChartSet(scenarios.Output{})
	pv, err := privacyBudget(r, curves, set)
	if err != nil {
		t.Fatal(err)
	}
	if len(pv.Rows) != 2 || pv.Rows[0].Label != "laplace" || pv.Rows[1].Label != "gaussian" || !strings.Contains(pv.Rows[1].Formula, "(ε, δ) at δ = ") {
		t.Errorf("rows %+v", pv.Rows)
	}
	if !strings.Contains(pv.Note, "gaussian") || len(pv.Charts) != 1 || len(set.specs) != 1 {
		t.Fatalf("note %q, %d charts", pv.Note, len(pv.Charts))
	}
	lines := set.specs[0].Views[0].Lines
	if len(lines) != 3 || len(lines[0].X) != 0 || len(lines[2].X) != 0 || len(lines[1].X) != 10 || lines[1].M[9] != 20 {
		t.Errorf("the ε(i) chart should draw the Laplace curve only, 2·i at i = 1…10: %+v", lines)
	}
}

// The eavesdropper's section lists the diffusion eavesdroppers only: the
// details.audit of a family that describes its privacy audit there (the
// Gamma mechanism's θ(ε) rows, say) is not an eavesdropper, and has no row
// (it had one, "agent <nil> → <nil>").
func TestEavesdropperRowsOnly(t *testing.T) {
	s := &rundir.Summary{Curves: []rundir.CurveSummary{
		{Label: "eavesdropped", Details: map[string]any{"audit": map[string]any{"victim": 1.0, "links": []any{0.0, 2.0}, "predicted_msd_db": -3.0}}},
		{Label: "gamma", Details: map[string]any{"audit": map[string]any{"lemma1_epsilon": []any{nil, 6.0}, "note": "…"}}},
	}}
	rows := auditRows(s)
	if len(rows) != 1 || rows[0].Label != "eavesdropped" || rows[0].Links != "agent 1 → [0 2]" || rows[0].Predicted != "−3.00 dB" {
		t.Errorf("eavesdropper rows %+v; want the diffusion curve's only", rows)
	}
}

// The embedded charting library is the pinned release: its files match
// report/uplot/SHA256SUMS, which scripts/fetch-uplot checks the npm
// package against. And nothing in the page's script ends its CDATA section
// or its element early.
func TestEmbeddedLibraryIsPinned(t *testing.T) {
	sums, err := os.ReadFile("uplot/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	embedded := map[string]string{"uPlot.iife.min.js": uplotJS, "uPlot.min.css": uplotCSS}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		sum, name, _ := strings.Cut(line, "  ")
		data, ok := embedded[name]
		if !ok {
			b, err := os.ReadFile(filepath.Join("uplot", name))
			if err != nil {
				t.Fatal(err)
			}
			data = string(b)
		}
		got := sha256.Sum256([]byte(data))
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("uplot/%s does not match SHA256SUMS", name)
		}
	}
	body := string(script)[len("//<![CDATA[") : len(script)-len("//]]>")]
	for _, bad := range []string{"]]>", "</script", "<!--"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page's script contains %q", bad)
		}
	}
}

// metrics.csv is one table with the union of the curves' columns: a curve
// whose cells of a metric are all empty does not have that metric, while an
// empty dB cell (the dB of an exact zero) among filled ones reads as NaN.
// The blocks with their own headers of older runs read the same.
func TestReadMetricsUnionOfColumns(t *testing.T) {
	dir := t.TempDir()
	union := "curve,iteration,msd,msd_std,msd_db,noise,noise_std,noise_db\n" +
		"clear,0,0,0,,,,\n" +
		"clear,1,0.1,0.01,-10,,,\n" +
		"noisy,0,1,0.1,0,0,0,\n" +
		"noisy,1,0.1,0.01,-10,0.01,0.001,-20\n"
	blocks := "curve,iteration,msd,msd_std,msd_db\n" +
		"clear,0,0,0,\n" +
		"clear,1,0.1,0.01,-10\n" +
		"curve,iteration,msd,msd_std,msd_db,noise,noise_std,noise_db\n" +
		"noisy,0,1,0.1,0,0,0,\n" +
		"noisy,1,0.1,0.01,-10,0.01,0.001,-20\n"
	for name, src := range map[string]string{"union": union, "blocks": blocks} {
		path := filepath.Join(dir, name+".csv")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		curves, err := rundir.ReadMetrics(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(curves) != 2 {
			t.Fatalf("%s: %d curves, want 2", name, len(curves))
		}
		clear, noisy := curves[0], curves[1]
		if fmt.Sprint(clear.Order) != "[msd]" || fmt.Sprint(noisy.Order) != "[msd noise]" {
			t.Errorf("%s: metrics %v and %v, want [msd] and [msd noise]", name, clear.Order, noisy.Order)
		}
		if _, ok := clear.Columns["noise_db"]; ok {
			t.Errorf("%s: the clear curve has the noise columns", name)
		}
		if db := clear.Columns["msd_db"]; len(db) != 2 || !math.IsNaN(db[0]) || db[1] != -10 {
			t.Errorf("%s: msd_db of the clear curve %v, want [NaN -10]", name, db)
		}
		r := &rundir.Run{Metrics: curves}
		if got := fmt.Sprint(r.MetricNames()); got != "[msd noise]" {
			t.Errorf("%s: the report's metrics %s, want [msd noise]", name, got)
		}
		if cols := r.Curves()[0].Cols; len(cols) != 1 || cols[0].Name != "msd" || !cols[0].Decibel {
			t.Errorf("%s: the clear curve's columns %+v", name, cols)
		}
	}
}
