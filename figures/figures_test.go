package figures

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"maple/rundir"
)

// strokes renders "‖" in style sty at dpi, rotated like a vertical axis
// label if rotate, and counts the dark strokes a line through its middle
// crosses.
func strokes(sty text.Style, dpi int, rotate bool) int {
	img := vgimg.NewWith(vgimg.UseWH(30, 30), vgimg.UseDPI(dpi))
	c := draw.New(img)
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	sty.Color = color.Black
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	if rotate {
		sty.Rotation = math.Pi / 2
	}
	c.FillText(sty, vg.Point{X: 15, Y: 15}, "‖")
	im := img.Image()
	b := im.Bounds()
	n, dark := 0, false
	for i := 0; i < b.Dx(); i++ {
		x, y := b.Min.X+i, (b.Min.Y+b.Max.Y)/2
		if rotate {
			x, y = (b.Min.X+b.Max.X)/2, b.Min.Y+i
		}
		r, _, _, _ := im.At(x, y).RGBA()
		if d := r < 0x8000; d != dark {
			if d {
				n++
			}
			dark = d
		}
	}
	return n
}

// The norm bars ‖·‖ of the metric labels render as two strokes, upright and
// rotated as on the vertical axis. gonum's default (Liberation Serif at
// 96 dpi) merged them into one, so that ‖w‖ read as "lwl".
func TestNormBarsRenderAsTwoStrokes(t *testing.T) {
	for _, size := range []vg.Length{tickSize, labelSize, titleSize} {
		var sty text.Style
		styleText(&sty, size)
		for _, rotate := range []bool{false, true} {
			if n := strokes(sty, pngDPI, rotate); n != 2 {
				t.Errorf("size %v, rotated %v: ‖ renders as %d strokes", size, rotate, n)
			}
		}
	}
	old := text.Style{Font: font.From(plot.DefaultFont, 12), Handler: plot.DefaultTextHandler}
	if n := strokes(old, 96, true); n != 1 {
		t.Logf("gonum's default now renders ‖ as %d strokes", n)
	}
}

func TestCleanNumber(t *testing.T) {
	for in, want := range map[string]string{
		"-25.00": "−25", "0.50": "0.5", "100": "100", "1.500e-05": "1.5e−05", "-0.00": "0", "2.5": "2.5", "": "",
	} {
		if got := cleanNumber(in); got != want {
			t.Errorf("cleanNumber(%q) = %q, want %q", in, got, want)
		}
	}
}

// Linear ticks: about six labelled multiples of a round step, without
// trailing zeros.
func TestLinearTicks(t *testing.T) {
	var labels []string
	for _, tk := range (linearTicks{}).Ticks(-37, 5) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "−30 −20 −10 0" {
		t.Errorf("labels %q", got)
	}
	labels = labels[:0]
	for _, tk := range (linearTicks{}).Ticks(0.15, 0.42) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0.15 0.2 0.25 0.3 0.35 0.4" {
		t.Errorf("labels %q", got)
	}
}

// Curves differ in colour, dash pattern and marker; curves that coincide
// carry their markers at different iterations.
func TestCurvesStayDistinguishable(t *testing.T) {
	seen := map[string]bool{}
	for i := range 40 {
		st := styleOf(i)
		key := fmt.Sprintf("%v/%v/%T", st.line.Color, st.line.Dashes, st.glyph.Shape)
		if seen[key] {
			t.Errorf("curve %d repeats the style %s", i, key)
		}
		seen[key] = true
		if i > 0 && i < len(okabeIto) && st.line.Color == styleOf(i-1).line.Color {
			t.Errorf("curves %d and %d share a colour", i-1, i)
		}
	}
	var pts plotter.XYs
	for it := range 1001 {
		pts = append(pts, plotter.XY{X: float64(it), Y: -30})
	}
	for _, logX := range []bool{false, true} {
		xs := pts
		if logX {
			xs = pts[1:]
		}
		a, b := markerPoints(xs, 0, 2, logX), markerPoints(xs, 1, 2, logX)
		if len(a) != markersPerCurve || len(b) != markersPerCurve {
			t.Fatalf("log %v: %d and %d markers, want %d", logX, len(a), len(b), markersPerCurve)
		}
		for _, p := range a {
			if slices.Contains(b, p) {
				t.Errorf("log %v: both coinciding curves put a marker at iteration %v", logX, p.X)
			}
		}
	}
}

func TestSplitLabels(t *testing.T) {
	common, rest := splitLabels([]string{"none, strategy=atc, runs=3", "random, strategy=atc, runs=3", "strategy=atc, runs=3"})
	if strings.Join(common, "|") != "strategy=atc|runs=3" || strings.Join(rest, "|") != "none|random|strategy=atc, runs=3" {
		t.Errorf("common %q, rest %q", common, rest)
	}
}

// A power law y = 3·x^−1 fits to slope −1 exactly (up to rounding).
func TestLogLogFit(t *testing.T) {
	pts := plotter.XYs{{X: 0.05, Y: 60}, {X: 0.1, Y: 30}, {X: 0.2, Y: 15}, {X: 0.4, Y: 7.5}}
	if slope, fit := logLogFit(pts); math.Abs(slope+1) > 1e-12 || math.Abs(fit[1].Y-7.5) > 1e-12 {
		t.Errorf("slope %v, fit %v", slope, fit)
	}
}

// The iteration axis turns logarithmic when every transient is over within
// the first tenth of the iterations, and only then.
func TestTransientShort(t *testing.T) {
	curve := func(tau float64) plotter.XYs {
		var pts plotter.XYs
		for it := range 1001 {
			pts = append(pts, plotter.XY{X: float64(it), Y: -30 * (1 - math.Exp(-float64(it)/tau))})
		}
		return pts
	}
	if !transientShort([]plotter.XYs{curve(10), curve(30)}, 1000) {
		t.Error("transients over by iteration 70 of 1000 should make the axis logarithmic")
	}
	if transientShort([]plotter.XYs{curve(10), curve(100)}, 1000) {
		t.Error("a transient lasting until iteration 230 of 1000 keeps the axis linear")
	}
}

// Long titles break at spaces to fit the data area.
func TestWrapTitle(t *testing.T) {
	var sty text.Style
	styleText(&sty, titleSize)
	title := "Paper 001 Fig. 4: consensus/CTA/ATC × none/R/GH/LGH, P=30, μ=0.4, σ_g²=0.01, and a few more words\nstrategy=atc"
	got := wrap(title, sty, plotWidth)
	lines := strings.Split(got, "\n")
	if len(lines) < 3 || lines[len(lines)-1] != "strategy=atc" || strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(title), " ") {
		t.Fatalf("wrapped %q", got)
	}
	for _, l := range lines {
		if sty.Width(l) > plotWidth {
			t.Errorf("line %q is wider than the data area", l)
		}
	}
}

// A line's band is ±1 standard error of the mean; in dB both ends are
// converted, the lower one cut at a tenth of the mean (10 dB below it) where
// the band reaches zero. Values that are not finite are left out, the band
// with them; a line without standard errors (one run) has no band.
func TestLinePointsAndBand(t *testing.T) {
	l := Line{X: []float64{0, 1, 2, 3}, Mean: []float64{1, 0.1, 0, math.NaN()}, SE: []float64{0.5, 0.2, 0.1, 0.1}}
	pts, lo, hi := l.Points(false)
	if len(pts) != 3 || len(lo) != 3 || lo[0].Y != 0.5 || hi[0].Y != 1.5 || math.Abs(lo[1].Y-(0.1-0.2)) > 1e-15 {
		t.Errorf("linear: points %v, band %v–%v", pts, lo, hi)
	}
	pts, lo, hi = l.Points(true)
	// 0 has no dB value: only iterations 0 and 1 remain.
	if len(pts) != 2 || pts[1].Y != rundir.Decibel(0.1) || len(lo) != 2 {
		t.Fatalf("dB: points %v, band %v–%v", pts, lo, hi)
	}
	if lo[0].Y != rundir.Decibel(0.5) || hi[0].Y != rundir.Decibel(1.5) {
		t.Errorf("dB band at 0: [%v, %v], want [%v, %v]", lo[0].Y, hi[0].Y, rundir.Decibel(0.5), rundir.Decibel(1.5))
	}
	m, se := l.Mean[1], l.SE[1]
	if lo[1].Y != rundir.Decibel(m/10) || hi[1].Y != rundir.Decibel(m+se) {
		t.Errorf("dB band at 1 reaching below zero: [%v, %v], want its lower end cut at −20 dB", lo[1].Y, hi[1].Y)
	}
	l.SE = nil
	if _, lo, hi := l.Points(true); lo != nil || hi != nil {
		t.Error("a line without standard errors has a band")
	}
}

// A linear axis whose values are equal to within rounding collapses to
// their middle (which gonum widens by ±1, as for equal values); a
// logarithmic axis of equal values at most 1 spans half a decade either
// side; other axes are left to gonum. Charts of two curves a few ULPs apart,
// and of a sweep whose steady states are all equal and small, then draw.
func TestCollapseNearlyEqualAxis(t *testing.T) {
	v := -31.449
	near := math.Nextafter(math.Nextafter(v, 0), 0)
	a := plot.Axis{Min: v, Max: near}
	collapse(&a)
	if a.Min != a.Max || a.Min < v || a.Min > near {
		t.Errorf("linear axis [%v, %v] collapsed to [%v, %v]", v, near, a.Min, a.Max)
	}
	a = plot.Axis{Min: 1e-3, Max: 1e-3, Scale: plot.LogScale{}}
	collapse(&a)
	if math.Abs(a.Min*math.Sqrt(10)/1e-3-1) > 1e-15 || math.Abs(a.Max/math.Sqrt(10)/1e-3-1) > 1e-15 {
		t.Errorf("log axis at 0.001 collapsed to [%v, %v], want half a decade either side", a.Min, a.Max)
	}
	for _, keep := range []plot.Axis{{Min: 1e-3, Max: math.Nextafter(1e-3, 1), Scale: plot.LogScale{}}, {Min: 28.5, Max: 28.5, Scale: plot.LogScale{}},
		{Min: v, Max: v}, {Min: -31.5, Max: -31.4}} {
		a := keep
		if collapse(&a); a.Min != keep.Min || a.Max != keep.Max {
			t.Errorf("axis [%v, %v] (%T) changed to [%v, %v]", keep.Min, keep.Max, keep.Scale, a.Min, a.Max)
		}
	}
	ch := Chart{Title: "t", XLabel: "iteration", YLabel: "y", Legend: true,
		Lines: []Line{{Label: "a", X: []float64{2}, Mean: []float64{v}}, {Label: "b", X: []float64{2}, Mean: []float64{near}}}}
	if _, err := ch.SVG(); err != nil {
		t.Fatal(err)
	}
	sweep := Chart{Title: "t", XLabel: "θ", Sweep: true, LogX: true, LogY: true, XTicks: []float64{0.1, 1}, Legend: true,
		Lines: []Line{{Label: "slope 0", X: []float64{0.1, 1}, Mean: []float64{1e-3, 1e-3}, Fit: plotter.XYs{{X: 0.1, Y: 1e-3}, {X: 1, Y: 1e-3}}}}}
	if _, err := sweep.SVG(); err != nil {
		t.Fatal(err)
	}
}
