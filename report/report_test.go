package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "maple/families/all" // the runs need the diffusion family
	"maple/internal/browser"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// tiny is a decentralized scenario with two privacy curves and an
// eavesdropper, small enough for a test.
const tiny = `name: tiny
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

// runDirectory executes src with a trace and records provenance, as maple
// run does.
func runDirectory(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	plan, err := scenarios.Parse([]byte(src), "tiny.yaml", dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Execute(plan, dir, run.Options{Trace: true}); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteProvenance(dir, run.Version, []string{"maple", "run", "tiny.yaml", "--trace"}); err != nil {
		t.Fatal(err)
	}
	return dir
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
			t.Fatalf("report.html is not well-formed: %v", err)
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

// The report parses as XHTML, loads nothing from outside the file and shows
// every section: the steady-state table with a row per curve, a chart per
// metric, the privacy budget of the noisy curve, the eavesdropper, the
// message statistics from the trace, and the provenance. The check by
// parsing runs everywhere; the browser check below runs where Chromium is
// installed.
func TestReportByParsing(t *testing.T) {
	dir := runDirectory(t, tiny)
	path, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	doc := parse(t, path)
	for _, e := range doc.all(func(*element) bool { return true }) {
		switch e.name {
		case "script", "link", "img", "iframe", "object", "embed":
			t.Errorf("report has a <%s> element", e.name)
		}
		for k, v := range e.attr {
			// Any namespace: SVG's xlink:href loads images too.
			if local := k[strings.LastIndexByte(k, ':')+1:]; (local == "src" || local == "href") && !strings.HasPrefix(v, "#") && !strings.HasPrefix(v, "data:") {
				t.Errorf("<%s %s=%q> refers outside the page", e.name, k, v)
			}
		}
	}
	// CSS can load too: @import, and url(…) other than inline data (the
	// charts' embedded fonts) or a fragment.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "@import") {
		t.Error("report has a CSS @import")
	}
	for rest := string(raw); ; {
		i := strings.Index(rest, "url(")
		if i < 0 {
			break
		}
		rest = rest[i+len("url("):]
		if arg := strings.TrimLeft(rest, `'" `); !strings.HasPrefix(arg, "data:") && !strings.HasPrefix(arg, "#") {
			t.Errorf("report has a CSS url(%.40s…) that refers outside the page", rest)
		}
	}
	for _, id := range []string{"steady-table", "privacy-table", "audit-table", "message-types", "message-actors", "provenance-table", "scenario-yaml"} {
		if doc.byID(id) == nil {
			t.Errorf("report lacks #%s", id)
		}
	}
	rows := doc.byID("steady-table").all(func(x *element) bool { return x.name == "tr" })
	if len(rows) != 1+2 {
		t.Errorf("steady-state table has %d rows, want a header and 2 curves", len(rows))
	}
	if got := rows[1].textContent(); !strings.Contains(got, "none") || !strings.Contains(got, "−∞ dB (exact)") {
		t.Errorf("steady state of the noise-free curve: %q, want the eavesdropper's exact recovery", got)
	}
	charts := doc.all(func(x *element) bool { return x.name == "figure" })
	// Four metrics (centroid and average MSD, disagreement, audit) and the
	// privacy budget.
	if len(charts) != 5 {
		t.Errorf("%d charts, want 5", len(charts))
	}
	for _, c := range charts {
		if len(c.all(func(x *element) bool { return x.name == "svg" })) == 0 {
			t.Errorf("chart without SVG: %s", c.textContent())
		}
	}
	privacy := doc.byID("privacy-table").all(func(x *element) bool { return x.name == "tr" })
	if len(privacy) != 2 || !strings.Contains(privacy[1].textContent(), "random") {
		t.Errorf("privacy budget rows: %d, want the random curve's", len(privacy))
	}
	prov := doc.byID("provenance-table").textContent()
	for _, want := range []string{"maple version" + run.Version, "git commit", "Go version", "command linemaple run tiny.yaml --trace", "scenario hash"} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}
	if types := doc.byID("message-types").textContent(); !strings.Contains(types, "StageShare") {
		t.Errorf("message statistics lack the shares:\n%s", types)
	}
	scenario := doc.byID("scenario-yaml").textContent()
	if !strings.Contains(scenario, "name: tiny") {
		t.Errorf("scenario section: %q", scenario)
	}
}

// With standard deviations in metrics.csv every curve of at least two runs
// gets its 95% band: mean ± 1.96 s/√runs, converted to dB for dB columns.
func TestBandsFromStandardDeviations(t *testing.T) {
	c := &rundir.CurveMetrics{Label: "c", Iterations: []float64{0, 1}, Columns: map[string][]float64{
		"msd": {1, 0.1}, "msd_db": {0, -10}, "msd_std": {0.5, 0.05}, "err": {0.4, 0.3}, "err_std": {0.1, 0.2},
	}}
	s, db, banded := curveSeries(c, "msd", 4)
	if !db || !banded {
		t.Fatalf("msd: db %v banded %v", db, banded)
	}
	// Half-width 1.96·0.5/2 = 0.49 around 1: [0.51, 1.49] in dB.
	if math.Abs(s.lo[0]-10*math.Log10(0.51)) > 1e-12 || math.Abs(s.hi[0]-10*math.Log10(1.49)) > 1e-12 {
		t.Errorf("msd band at 0: [%v, %v]", s.lo[0], s.hi[0])
	}
	s, db, banded = curveSeries(c, "err", 4)
	if db || !banded || math.Abs(s.lo[1]-(0.3-0.196)) > 1e-12 || math.Abs(s.hi[1]-(0.3+0.196)) > 1e-12 {
		t.Errorf("err: db %v banded %v band [%v, %v]", db, banded, s.lo[1], s.hi[1])
	}
	if _, _, banded := curveSeries(c, "err", 1); banded {
		t.Error("a single run has no band")
	}
}

// The report opened in headless Chromium, from the file, with the network
// off: every chart renders with a size, and the page requested nothing.
func TestReportInBrowser(t *testing.T) {
	path := browser.Require(t, "the report was checked by parsing only (TestReportByParsing)")
	dir := runDirectory(t, tiny)
	file, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := browser.Start(path, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Navigate("file://" + abs); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Title     string
		Charts    int
		Rendered  int
		Rows      int
		Resources int
	}
	err = s.Eval(`(() => {
		const charts = [...document.querySelectorAll("figure.chart > svg")];
		return {
			Title: document.querySelector("h1").textContent,
			Charts: charts.length,
			Rendered: charts.filter(c => c.getBoundingClientRect().width > 100 && c.getBoundingClientRect().height > 50).length,
			Rows: document.querySelectorAll("#steady-table tbody tr").length,
			Resources: performance.getEntriesByType("resource").length,
		};
	})()`, &got)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "tiny" || got.Charts != 5 || got.Rendered != 5 || got.Rows != 2 || got.Resources != 0 {
		t.Errorf("in the browser: %+v; want title tiny, 5 charts all rendered, 2 steady-state rows, no resource loaded", got)
	}
}

// The privacy budget lists the noisy curves only: a noise-free curve reports
// no privacy, and a Gaussian curve's (ε, δ) has its row but no linear ε(i).
func TestPrivacyBudgetRows(t *testing.T) {
	s := &rundir.Summary{Curves: []rundir.CurveSummary{
		{Label: "none", Iterations: 10, Details: map[string]any{"privacy": map[string]any{"mechanism": "none"}}},
		{Label: "laplace", Iterations: 10, Details: map[string]any{"privacy": map[string]any{"mechanism": "laplace", "formula": "thesis eq. 2.69", "epsilon_per_iteration": 2.0, "epsilon_final": 20.0}}},
		{Label: "gaussian", Iterations: 10, Details: map[string]any{"privacy": map[string]any{"mechanism": "gaussian", "delta": 1e-5, "bound": "analytic Gaussian mechanism", "epsilon_final": 7.0}}},
	}}
	rows, ch, err := privacyBudget(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Label != "laplace" || rows[1].Label != "gaussian" || !strings.Contains(rows[1].Formula, "(ε, δ) at δ = ") {
		t.Errorf("rows %+v", rows)
	}
	if ch == nil || len(ch.Legend) != 1 || ch.Legend[0].Label != "laplace" {
		t.Errorf("the ε(i) chart should draw the Laplace curve only: %+v", ch)
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
		if s, _, _ := curveSeries(&clear, "noise", 2); s != nil {
			t.Errorf("%s: the clear curve has a noise series", name)
		}
	}
}
