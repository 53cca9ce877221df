package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"maple/figures"
	"maple/internal/browser"
	"maple/rundir"
)

// The tests below open the reports in headless Chromium, one browser shared
// by all of them, a tab each. They check what only a browser shows: the
// colours of the drawn pixels, the axes of the interactive charts, hovering
// and toggling, the requests the page makes, the page without scripts and
// at a phone's width.

var shared struct {
	once sync.Once
	s    *browser.Session
	err  error
}

// browserSessionTimeout bounds the shared browser's life, so that a hung
// browser fails the tests instead of blocking them; it is no measure of
// speed (the browser tests take seconds).
const browserSessionTimeout = 10 * time.Minute

// tab opens the report file path in a new tab of the shared browser.
func tab(t *testing.T, path string, o browser.TabOptions) *browser.Tab {
	t.Helper()
	exe := browser.Require(t, "the report was checked by parsing only (TestReportByParsing and the others)")
	shared.once.Do(func() { shared.s, shared.err = browser.Start(exe, browserSessionTimeout) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	if o.Width == 0 {
		o.Width, o.Height = 1200, 900
	}
	tb, err := shared.s.NewTab(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	t.Cleanup(func() {
		for _, e := range tb.Exceptions() {
			t.Errorf("the page's script threw: %s", e)
		}
	})
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Navigate("file://" + abs); err != nil {
		t.Fatal(err)
	}
	return tb
}

// closeBrowser stops the shared browser, if it was started.
func closeBrowser() {
	if shared.s != nil {
		shared.s.Close()
	}
}

func eval(t *testing.T, tb *browser.Tab, js string, dst any) {
	t.Helper()
	if err := tb.Eval(js, dst); err != nil {
		t.Fatalf("%v\nin\n%s", err, js)
	}
}

// frames waits for the browser to draw twice (uPlot draws in an animation
// frame).
const frames = `await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));`

// legendAt moves the mouse to (x, y) on the page and returns the values
// that chart id's legend shows once it has redrawn: the iteration first,
// then each line's.
func legendAt(t *testing.T, tb *browser.Tab, id string, x, y float64) []string {
	t.Helper()
	if err := tb.Mouse(x, y); err != nil {
		t.Fatal(err)
	}
	var shown []string
	eval(t, tb, `(async () => {`+frames+`
		const st = mapleCharts[`+strconv.Quote(id)+`];
		return [...st.legend.querySelectorAll(".u-series")].map(r => r.querySelector(".u-value").textContent);
	})()`, &shown)
	return shown
}

// blend is colour c at BandAlpha over white, as an 8-bit canvas or screen
// holds it.
func blend(st figures.Style) [3]float64 {
	a := float64(figures.BandAlpha) / 0xFF
	c := st.Colour
	return [3]float64{float64(c.R)*a + 255*(1-a), float64(c.G)*a + 255*(1-a), float64(c.B)*a + 255*(1-a)}
}

// colourTolerance is how far a drawn pixel may be from the expected colour
// in each channel: the alpha is rounded to 8 bits (48/255) and so is each
// composited channel, an error of at most 1 + 255/255/2 < 2; 3 leaves room
// for the rounding of the colour space conversion.
const colourTolerance = 3

// countJS counts, in the canvas of chart id, the pixels of the plotting
// area that show within colourTolerance of each of the colours (a JSON
// array of RGB triples).
func countJS(id string, colours any) string {
	js, _ := json.Marshal(colours)
	return `(async () => {` + frames + `
		const u = mapleCharts[` + strconv.Quote(id) + `].u, c = u.ctx.canvas;
		const d = u.ctx.getImageData(0, 0, c.width, c.height).data;
		const b = u.bbox, want = ` + string(js) + `, n = want.map(() => 0);
		for (let y = Math.ceil(b.top); y < b.top + b.height; y++)
			for (let x = Math.ceil(b.left); x < b.left + b.width; x++) {
				// The canvas is transparent: the pixel as shown, over the
				// page's white.
				const i = 4 * (y * c.width + x), a = d[i+3] / 255;
				const px = [0, 1, 2].map(ch => d[i+ch] * a + 255 * (1 - a));
				want.forEach((w, k) => {
					if (px.every((v, ch) => Math.abs(v - w[ch]) <= ` + strconv.Itoa(colourTolerance) + `)) n[k]++;
				});
			}
		return n;
	})()`
}

// bandArea is the area in pixels of line j's band in chart id, from the
// chart's own scales: the sum over the pixel columns of the band's height.
func bandAreaJS(id string, j int) string {
	return `(() => {
		const st = mapleCharts[` + strconv.Quote(id) + `], u = st.u;
		const main = st.role.findIndex(r => r && r.line === ` + strconv.Itoa(j) + ` && r.of == null);
		let area = 0;
		const xs = u.data[0], hi = u.data[main + 1], lo = u.data[main + 2];
		for (let k = 1; k < xs.length; k++) {
			if (hi[k] == null || hi[k-1] == null) continue;
			const w = u.valToPos(xs[k], "x", true) - u.valToPos(xs[k-1], "x", true);
			const h0 = u.valToPos(lo[k-1], "y", true) - u.valToPos(hi[k-1], "y", true);
			const h1 = u.valToPos(lo[k], "y", true) - u.valToPos(hi[k], "y", true);
			area += w * (h0 + h1) / 2;
		}
		return area;
	})()`
}

// A band's pixels carry its curve's colour: with the other curve hidden (by
// clicking its legend entry, as a reader would), the pixels of the band's
// colour — the curve's at BandAlpha over white — cover most of the band's
// area; hiding the curve too leaves none. (The defect: fills such as
// #39427900 were invalid or fully transparent.)
func TestBandCarriesItsCurvesColour(t *testing.T) {
	tb := tab(t, report(t, tiny), browser.TabOptions{})
	const id = "chart-msd_centroid"
	toggle(t, tb, id, 0)
	want := [][3]float64{blend(figures.StyleOf(1))}
	var n []int
	eval(t, tb, countJS(id, want), &n)
	var area float64
	eval(t, tb, bandAreaJS(id, 1), &area)
	// The band's own line (1.7 px wide), its markers and the grid lines
	// (1 px every 50 px or more) cover part of it; they leave well over
	// half of its area in its colour.
	if area < 1000 || float64(n[0]) < 0.5*area {
		t.Errorf("the band of curve 1 (area %.0f px): %d pixels of its colour %v", area, n[0], want[0])
	}
	toggle(t, tb, id, 1)
	eval(t, tb, countJS(id, want), &n)
	if n[0] != 0 {
		t.Errorf("%d pixels of the band's colour with its curve hidden", n[0])
	}
}

// toggle clicks the legend entry of line j of chart id and checks that the
// line and its band were hidden or shown accordingly.
func toggle(t *testing.T, tb *browser.Tab, id string, j int) {
	t.Helper()
	var at struct {
		X, Y float64
		Show bool
	}
	eval(t, tb, `(() => {
		const st = mapleCharts[`+strconv.Quote(id)+`];
		const s = st.role.findIndex(r => r && r.line === `+strconv.Itoa(j)+` && r.of == null);
		const row = st.legend.querySelectorAll(".u-series")[s];
		row.scrollIntoView({block: "center"});
		const r = row.querySelector("th").getBoundingClientRect();
		return {X: r.left + r.width / 2, Y: r.top + r.height / 2, Show: st.u.series[s].show};
	})()`, &at)
	if err := tb.Click(at.X, at.Y); err != nil {
		t.Fatal(err)
	}
	var shown []bool
	eval(t, tb, `(() => {
		const st = mapleCharts[`+strconv.Quote(id)+`];
		return st.u.series.map((s, i) => i).filter(i => st.role[i] && st.role[i].line === `+strconv.Itoa(j)+`).map(i => st.u.series[i].show);
	})()`, &shown)
	for _, s := range shown {
		if s == at.Show {
			t.Fatalf("clicking the legend of line %d of %s left its series (and band) shown=%v: %v", j, id, at.Show, shown)
		}
	}
}

// Clicking a curve's legend entry hides it: its line's colour leaves the
// canvas; clicking again brings it back.
func TestToggleHidesTheCurve(t *testing.T) {
	tb := tab(t, report(t, tiny), browser.TabOptions{})
	const id = "chart-disagreement"
	c := figures.StyleOf(1).Colour
	want := [][3]float64{{float64(c.R), float64(c.G), float64(c.B)}}
	var before, hidden, again []int
	eval(t, tb, countJS(id, want), &before)
	toggle(t, tb, id, 1)
	eval(t, tb, countJS(id, want), &hidden)
	toggle(t, tb, id, 1)
	eval(t, tb, countJS(id, want), &again)
	// A dashed line (6 on, 3 off) 1.7 px wide across a plot at least 400 px
	// wide has some 400 pixels of its colour.
	if before[0] < 100 || hidden[0] != 0 || again[0] != before[0] {
		t.Errorf("pixels of curve 1's colour: %d shown, %d hidden, %d shown again", before[0], hidden[0], again[0])
	}
}

// Hovering over a point shows its value in the legend: the iteration and
// the curve's value there, in dB, as metrics.csv has it (to the five
// significant digits shown).
func TestHoverShowsTheValue(t *testing.T) {
	path := report(t, tiny)
	tb := tab(t, path, browser.TabOptions{})
	r, err := rundir.Read(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	const id, j, k = "chart-msd_centroid", 1, 7 // curve "random", iteration 7
	want := r.Metrics[j].Columns["msd_centroid_db"][k]
	var at struct{ X, Y float64 }
	eval(t, tb, `(() => {
		const st = mapleCharts[`+strconv.Quote(id)+`], u = st.u;
		u.root.scrollIntoView({block: "center"});
		const s = st.role.findIndex(r => r && r.line === `+strconv.Itoa(j)+` && r.of == null);
		const k = u.data[0].indexOf(`+strconv.Itoa(k)+`);
		const o = u.over.getBoundingClientRect();
		return {X: o.left + u.valToPos(u.data[0][k], "x"), Y: o.top + u.valToPos(u.data[s][k], "y")};
	})()`, &at)
	shown := legendAt(t, tb, id, at.X, at.Y)
	if len(shown) < 3 || shown[0] != strconv.Itoa(k) {
		t.Fatalf("legend after hovering iteration %d: %q", k, shown)
	}
	got, err := strconv.ParseFloat(strings.ReplaceAll(shown[1+3*j], "−", "-"), 64)
	// Five significant digits: a relative error below 5e-5.
	if err != nil || math.Abs(got-want) > 5e-5*math.Abs(want) {
		t.Errorf("hovering iteration %d shows %q for curve %d, metrics.csv has %v dB", k, shown[1+3*j], j, want)
	}
}

// With output.x_axis time the chart shows the curves against the virtual
// time: its x axis spans exactly the recorded times of the curves, which
// run for comparable times whatever their iteration counts. (The defect:
// against the iteration, the synchronous run's 30 rounds took 5% of an
// axis of 600.)
func TestTimeAxisSpansTheVirtualTime(t *testing.T) {
	path := report(t, clocked)
	tb := tab(t, path, browser.TabOptions{})
	r, err := rundir.Read(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	var ends []float64
	for _, c := range r.Metrics {
		times := c.Columns["time"]
		lo, hi = min(lo, times[0]), max(hi, times[len(times)-1])
		ends = append(ends, times[len(times)-1])
	}
	var got struct {
		Label    string
		Min, Max float64
		Width    float64
	}
	eval(t, tb, `(() => {
		const u = mapleCharts["chart-msd"].u;
		return {Label: u.axes[0].label, Min: u.scales.x.min, Max: u.scales.x.max, Width: u.bbox.width};
	})()`, &got)
	if got.Label != "virtual time (s)" || got.Min != lo || got.Max != hi || got.Width < 300 {
		t.Errorf("the MSD chart's x axis: %+v; want virtual time (s) from %v to %v", got, lo, hi)
	}
	for i, end := range ends {
		if end < 0.5*hi {
			t.Errorf("curve %d ends at %v s, before half the axis: the scenario no longer compares like with like", i, end)
		}
	}
}

// A sweep's report draws the steady state against the swept value: the
// chart renders, on logarithmic axes, one point per step size.
func TestSweepFigureRenders(t *testing.T) {
	tb := tab(t, report(t, sweepy), browser.TabOptions{})
	var got struct {
		Width, Height float64
		LogX, LogY    bool
		Points        int
	}
	eval(t, tb, `(() => {
		const u = mapleCharts["chart-steady-msd-vs-step_size"].u;
		const r = u.root.getBoundingClientRect();
		return {Width: r.width, Height: r.height, LogX: u.scales.x.distr === 3, LogY: u.scales.y.distr === 3,
			Points: u.data[1].filter(v => v != null).length};
	})()`, &got)
	if got.Width < 300 || got.Height < 150 || !got.LogX || !got.LogY || got.Points != 3 {
		t.Errorf("sweep chart %+v; want it drawn log-log with 3 points", got)
	}
}

// The page requests nothing but itself: no script, style sheet, font or
// image from anywhere, and it works offline. Checked on the requests the
// browser made for the page, the report of one run and the comparison.
func TestNoNetworkRequest(t *testing.T) {
	out := filepath.Join(t.TempDir(), CompareFile)
	if _, err := WriteCompare([]string{runDirectory(t, sweepy), runDirectory(t, sweepy, "seed=6", "runs=3")}, out); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{report(t, tiny), report(t, audited), out} {
		tb := tab(t, path, browser.TabOptions{})
		var charts int
		eval(t, tb, `Object.keys(mapleCharts).length`, &charts)
		abs, _ := filepath.Abs(path)
		if reqs := tb.Requests(); len(reqs) != 1 || reqs[0] != "file://"+abs || charts == 0 {
			t.Errorf("%s: %d interactive charts, requests %q; want the page alone", filepath.Base(path), charts, reqs)
		}
	}
}

// With scripts disabled the page shows every chart as its static SVG
// figure, in place, with the bands in their curves' colours.
func TestChartsWithoutScripts(t *testing.T) {
	tb := tab(t, report(t, tiny), browser.TabOptions{NoScripts: true})
	var got struct {
		Charts, Rendered, Canvases int
		JS                         bool
	}
	eval(t, tb, `(() => {
		const svgs = [...document.querySelectorAll("figure.chart .static > svg")];
		return {Charts: document.querySelectorAll("figure.chart").length, Canvases: document.querySelectorAll("canvas").length,
			Rendered: svgs.filter(s => s.getBoundingClientRect().width > 300 && s.getBoundingClientRect().height > 150).length,
			JS: document.documentElement.classList.contains("js")};
	})()`, &got)
	if got.Charts != 7 || got.Rendered != 7 || got.Canvases != 0 || got.JS {
		t.Errorf("without scripts: %+v; want 7 charts, each its SVG drawn, no canvas", got)
	}
	var box struct{ X, Y, W, H float64 }
	eval(t, tb, `(() => {
		const s = document.querySelector("#chart-msd_centroid .static > svg");
		s.scrollIntoView({block: "start"});
		const r = s.getBoundingClientRect();
		return {X: r.left, Y: r.top, W: r.width, H: r.height};
	})()`, &box)
	shot, err := tb.Screenshot(false)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		n := countColour(img, image.Rect(int(box.X), int(box.Y), int(box.X+box.W), int(box.Y+box.H)), blend(figures.StyleOf(i)))
		// Each band spans the data area's width (≥ 300 px) and more than a
		// pixel's height where the three runs disagree.
		if n < 300 {
			t.Errorf("static figure: %d pixels of curve %d's band colour %v", n, i, blend(figures.StyleOf(i)))
		}
	}
}

// countColour counts the pixels of img in r within colourTolerance of c.
func countColour(img image.Image, r image.Rectangle, c [3]float64) int {
	n := 0
	r = r.Intersect(img.Bounds())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if math.Abs(float64(cr>>8)-c[0]) <= colourTolerance && math.Abs(float64(cg>>8)-c[1]) <= colourTolerance &&
				math.Abs(float64(cb>>8)-c[2]) <= colourTolerance {
				n++
			}
		}
	}
	return n
}

// At a phone's width (480 px) nothing overflows the page: wide tables
// scroll in their own box (the privacy audit's with its statistics open),
// charts and legends fit.
func TestNarrowViewport(t *testing.T) {
	for _, path := range []string{report(t, tiny), report(t, clocked), report(t, audited)} {
		tb := tab(t, path, browser.TabOptions{Width: 480, Height: 900})
		var got struct {
			Page, Table, Box, Widest float64
		}
		eval(t, tb, `(async () => {
			document.querySelectorAll("details").forEach(d => d.open = true); `+frames+`
			const t = document.querySelector("#steady-table");
			const charts = [...document.querySelectorAll("figure.chart")].map(f => f.getBoundingClientRect().right);
			return {Page: document.documentElement.scrollWidth, Table: t.scrollWidth,
				Box: Math.max(...[...document.querySelectorAll(".scroll")].map(b => b.clientWidth)), Widest: Math.max(...charts)};
		})()`, &got)
		if got.Page > 480 || got.Box > 480 || got.Widest > 480 {
			t.Errorf("%s at 480 px: %+v; want nothing wider than 480 px but the table's content", filepath.Base(filepath.Dir(path)), got)
		}
	}
}

// The controls redraw the chart: the y scale (linear, logarithmic, dB) and
// the smoothing transform the values as documented, the x axis switches to
// the iteration, the wheel zooms in around the cursor, Shift+drag pans and
// a double-click shows everything again.
func TestControlsRedrawTheChart(t *testing.T) {
	tb := tab(t, report(t, clocked), browser.TabOptions{})
	var got struct {
		Linear, Log, DB, Smooth []float64
		M                       []float64
		Distr                   []int
		XLabel                  string
		XMax, Last              float64
		Zoomed, Panned, Reset   [2]float64
		Full                    [2]float64
	}
	eval(t, tb, `(async () => {
		const st = mapleCharts["chart-msd"], fig = document.getElementById("chart-msd");
		const set = async (sel, v) => { const e = fig.querySelectorAll(".controls select")[sel]; e.value = v; e.dispatchEvent(new Event("change")); `+frames+` };
		const series = () => { const u = st.u, s = st.role.findIndex(r => r && r.line === 0 && r.of == null); return u.data[s].filter(v => v != null).slice(0, 3); };
		const out = {Distr: []};
		out.M = st.spec.views[0].lines[0].m.slice(0, 3);
		await set(0, "linear"); out.Linear = series(); out.Distr.push(st.u.scales.y.distr);
		await set(0, "log"); out.Log = series(); out.Distr.push(st.u.scales.y.distr);
		await set(0, "db"); out.DB = series(); out.Distr.push(st.u.scales.y.distr);
		await set(0, "linear");
		const slider = fig.querySelector(".controls input[type=range]");
		slider.value = "0.5"; slider.dispatchEvent(new Event("input")); `+frames+`
		out.Smooth = series();
		slider.value = "0"; slider.dispatchEvent(new Event("input"));
		await set(1, "1");
		out.XLabel = st.u.axes[0].label; out.XMax = st.u.scales.x.max;
		out.Last = Math.max(...st.spec.views[1].lines.map(l => l.x[l.x.length - 1]));
		const u = st.u, o = u.over.getBoundingClientRect(), cx = o.left + o.width / 2, cy = o.top + o.height / 2;
		out.Full = [u.scales.x.min, u.scales.x.max];
		u.over.dispatchEvent(new WheelEvent("wheel", {deltaY: -100, clientX: cx, clientY: cy, bubbles: true, cancelable: true})); `+frames+`
		out.Zoomed = [u.scales.x.min, u.scales.x.max];
		u.over.dispatchEvent(new MouseEvent("mousedown", {clientX: cx, clientY: cy, shiftKey: true, bubbles: true}));
		document.dispatchEvent(new MouseEvent("mousemove", {clientX: cx - o.width / 10, clientY: cy, shiftKey: true, bubbles: true}));
		document.dispatchEvent(new MouseEvent("mouseup", {clientX: cx - o.width / 10, clientY: cy, bubbles: true})); `+frames+`
		out.Panned = [u.scales.x.min, u.scales.x.max];
		u.over.dispatchEvent(new MouseEvent("dblclick", {clientX: cx, clientY: cy, bubbles: true})); `+frames+`
		out.Reset = [u.scales.x.min, u.scales.x.max];
		return out;
	})()`, &got)
	if len(got.M) != 3 || len(got.Linear) != 3 || len(got.Log) != 3 || len(got.DB) != 3 || len(got.Smooth) != 3 {
		t.Fatalf("values %+v", got)
	}
	for k, m := range got.M {
		if got.Linear[k] != m || got.Log[k] != m || math.Abs(got.DB[k]-10*math.Log10(m)) > 1e-12*math.Abs(got.DB[k]) {
			t.Errorf("point %d of mean %v: linear %v, log %v, dB %v", k, m, got.Linear[k], got.Log[k], got.DB[k])
		}
	}
	if fmt.Sprint(got.Distr) != "[1 3 1]" {
		t.Errorf("y distributions %v, want linear, logarithmic, linear (dB)", got.Distr)
	}
	// Exponential smoothing of weight ½, corrected for its start: the first
	// value is kept, the second is (¼·y₀ + ½·y₁)/(1 − ¼).
	y := got.Linear
	if got.Smooth[0] != y[0] || math.Abs(got.Smooth[1]-(0.25*y[0]+0.5*y[1])/0.75) > 1e-12*math.Abs(got.Smooth[1]) {
		t.Errorf("smoothed %v from %v", got.Smooth, y)
	}
	if got.XLabel != "iteration" || got.XMax != got.Last {
		t.Errorf("against the iteration: label %q, x up to %v, want %v", got.XLabel, got.XMax, got.Last)
	}
	width := func(r [2]float64) float64 { return r[1] - r[0] }
	if math.Abs(width(got.Zoomed)-0.8*width(got.Full)) > 1e-9*width(got.Full) {
		t.Errorf("the wheel zoomed %v to %v, want 0.8 of the width", got.Full, got.Zoomed)
	}
	if math.Abs(width(got.Panned)-width(got.Zoomed)) > 1e-9*width(got.Full) || !(got.Panned[0] > got.Zoomed[0]) {
		t.Errorf("Shift+drag to the left moved %v to %v, want the same width further right", got.Zoomed, got.Panned)
	}
	if got.Reset != got.Full {
		t.Errorf("a double-click showed %v, want everything, %v", got.Reset, got.Full)
	}
}

// The chart of an audit draws its bounds as the browser shows them: a
// series per bound, named as in the data; the accountant's ε where it is a
// number and nothing where it is +∞ — no pixel of its colour right of its
// last finite point, its legend saying so and showing no value there when
// hovered.
func TestAuditChartShowsTheBounds(t *testing.T) {
	dir := withInfiniteUpper(t, runDirectory(t, audited))
	path, _, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb := tab(t, path, browser.TabOptions{})
	a := readSummary(t, dir).Curves[0].Audit
	const id = "chart-audit-1"
	last := float64(a.Iterations[infiniteFrom-1])
	c := figures.StyleOf(upperLine).Colour
	var got struct {
		Labels, Want []string
		Upper, X     []*float64
		Left, Right  int
	}
	eval(t, tb, `(async () => {`+frames+`
		const st = mapleCharts[`+strconv.Quote(id)+`], u = st.u;
		u.root.scrollIntoView({block: "center"});
		const ctx = u.ctx, cv = ctx.canvas, d = ctx.getImageData(0, 0, cv.width, cv.height).data, b = u.bbox;
		// The last finite point's marker reaches a few pixels beyond it.
		const cut = u.valToPos(`+strconv.FormatFloat(last, 'g', -1, 64)+`, "x", true) + 8 * devicePixelRatio;
		const want = [`+fmt.Sprintf("%d, %d, %d", c.R, c.G, c.B)+`];
		let left = 0, right = 0;
		for (let y = Math.ceil(b.top); y < b.top + b.height; y++)
			for (let x = Math.ceil(b.left); x < b.left + b.width; x++) {
				const i = 4 * (y * cv.width + x), al = d[i+3] / 255;
				const px = [0, 1, 2].map(ch => d[i+ch] * al + 255 * (1 - al));
				if (px.every((v, ch) => Math.abs(v - want[ch]) <= `+strconv.Itoa(colourTolerance)+`)) { if (x > cut) right++; else left++; }
			}
		const s = st.role.findIndex(r => r && r.line === `+strconv.Itoa(upperLine)+` && r.of == null);
		return {Labels: u.series.slice(1).map(x => x.label), Want: st.spec.views[0].lines.filter(l => l.x.length > 0).map(l => l.label),
			Upper: u.data[s], X: u.data[0], Left: left, Right: right};
	})()`, &got)
	if fmt.Sprint(got.Labels) != fmt.Sprint(got.Want) || len(got.Labels) != boundLines {
		t.Errorf("series %q, want the four bounds %q", got.Labels, got.Want)
	}
	if !strings.Contains(got.Labels[upperLine], fmt.Sprintf("+∞ or undefined at iterations %d–%d, not drawn", a.Iterations[infiniteFrom], a.Iterations[len(a.Iterations)-1])) {
		t.Errorf("the upper bound's legend %q does not say where ε is +∞", got.Labels[upperLine])
	}
	if len(got.X) != len(a.Iterations) || len(got.Upper) != len(a.Iterations) {
		t.Fatalf("x %d values, upper %d; want the %d iterations", len(got.X), len(got.Upper), len(a.Iterations))
	}
	for k, u := range got.Upper {
		switch {
		case k < infiniteFrom && (u == nil || *u != float64(a.Upper[k])):
			t.Errorf("upper bound at iteration %d: %v, want summary.json's %v", a.Iterations[k], u, a.Upper[k])
		case k >= infiniteFrom && u != nil:
			t.Errorf("upper bound at iteration %d drawn at %v where it is +∞", a.Iterations[k], *u)
		}
	}
	// A 1.7 px line across more than half of a plot at least 400 px wide
	// has over a hundred pixels of its colour; right of its last point,
	// none.
	if got.Left < 100 || got.Right != 0 {
		t.Errorf("pixels of the upper bound's colour: %d up to iteration %v, %d beyond; want its line, then nothing", got.Left, last, got.Right)
	}
	// Hover the last iteration but one: the last is on the plot's edge.
	hover := a.Iterations[len(a.Iterations)-2]
	var at struct{ X, Y float64 }
	eval(t, tb, `(() => {
		const u = mapleCharts[`+strconv.Quote(id)+`].u, o = u.over.getBoundingClientRect();
		return {X: o.left + u.valToPos(`+strconv.Itoa(hover)+`, "x"), Y: o.top + o.height / 2};
	})()`, &at)
	shown := legendAt(t, tb, id, at.X, at.Y)
	if len(shown) != 1+boundLines || shown[0] != strconv.Itoa(hover) || shown[1+upperLine] != "—" || shown[1+strictLine] == "—" {
		t.Errorf("legend at iteration %d: %q; want the strict bound's value and none for the upper bound, which is +∞ there", hover, shown)
	}
}
