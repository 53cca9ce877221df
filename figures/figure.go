package figures

import (
	"image/png"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"codeberg.org/go-fonts/dejavu/dejavusans"
	"golang.org/x/image/font/opentype"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figures are drawn for people reading them in print and on screen:
//
//   - Each curve differs from the others in colour, dash pattern and marker
//     at once, so that curves that coincide (local graph-homomorphic noise
//     and no noise, exactly) stay visible: their markers are placed at
//     staggered iterations. The colours are the Okabe–Ito palette (Okabe &
//     Ito 2008, "Color universal design"), distinguishable with the common
//     colour-vision deficiencies; its yellow comes last, as it is faint on
//     white.
//   - The legend sits to the right of the data, never over it; label parts
//     every curve of a figure shares move to the title instead.
//   - Tick labels carry no trailing zeros and a true minus sign (−25, 0.5),
//     about six per axis.
//   - The title is the scenario's description (its name if it has none).
//   - When every curve's transient is over within the first tenth of the
//     iterations, the iteration axis is logarithmic, so the transient is not
//     squeezed against the axis.
//   - Text is set in DejaVu Sans, which has every glyph the labels use (the
//     norm bars ‖·‖ among them).
//   - A band around each curve shows ±1 standard error of the Monte-Carlo
//     mean (metrics.csv has the standard deviation across runs).
//   - For every numeric parameter the curves vary (a sweep, or curves that
//     each set it), a second figure plots the steady state against it on
//     log-log axes, with the fitted slope of each line in the legend.

// markersPerCurve is how many markers a curve carries.
const markersPerCurve = 10

// Figure geometry: the data area, the resolution of PNGs and the font sizes.
const (
	plotWidth  = 6.5 * vg.Inch
	plotHeight = 4 * vg.Inch
	pngDPI     = 150
	titleSize  = vg.Length(12)
	labelSize  = vg.Length(11)
	tickSize   = vg.Length(10)
	legendGap  = vg.Length(12)
)

// fonts is the text handler of every figure: DejaVu Sans, read once.
var fonts = sync.OnceValue(func() text.Handler {
	f, err := opentype.Parse(dejavusans.TTF)
	if err != nil {
		panic("figures: the embedded DejaVu Sans font does not parse: " + err.Error())
	}
	return text.Plain{Fonts: font.NewCache(font.Collection{{Font: typeface, Face: f}})}
})

var typeface = font.Font{Typeface: "DejaVu", Variant: "Sans"}

// styleText sets the typeface, size and handler of a text style.
func styleText(s *text.Style, size vg.Length) {
	s.Font = font.From(typeface, size)
	s.Handler = fonts()
}

// figure is a plot and its legend, drawn beside it.
type figure struct {
	*plot.Plot
	legend plot.Legend
}

// newFigure returns an empty figure with maple's text styles and ticks.
func newFigure(title, xLabel, yLabel string) *figure {
	p := plot.New()
	p.TextHandler = fonts()
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text, p.Y.Label.Text = xLabel, yLabel
	styleText(&p.Title.TextStyle, titleSize)
	p.Title.Text = wrap(title, p.Title.TextStyle, plotWidth-vg.Points(20))
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		styleText(&a.Label.TextStyle, labelSize)
		styleText(&a.Tick.Label, tickSize)
		a.Tick.Marker = linearTicks{}
		a.Padding = vg.Points(4)
	}
	p.Add(plotter.NewGrid())
	l := plot.NewLegend()
	styleText(&l.TextStyle, tickSize)
	l.Top, l.Left = true, true
	l.ThumbnailWidth = vg.Points(28)
	l.Padding = vg.Points(3)
	return &figure{Plot: p, legend: l}
}

// wrap breaks the lines of s at spaces so that each fits width in style
// sty (a single word wider than that stays on its own line).
func wrap(s string, sty text.Style, width vg.Length) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		cur := ""
		for _, w := range strings.Fields(line) {
			switch next := cur + " " + w; {
			case cur == "":
				cur = w
			case sty.Width(next) <= width:
				cur = next
			default:
				out = append(out, cur)
				cur = w
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

func writeFile(path string, c vg.CanvasWriterTo) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeTo(out, c); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// pngEncoder compresses at zlib's best speed: half the time of the default
// level (20 against 38 ms for a 975×600 chart, most of drawing one) for
// files about 5 % larger.
var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed}

// writeTo writes c's image: a PNG canvas through pngEncoder, any other
// (SVG) as it writes itself.
func writeTo(w io.Writer, c vg.CanvasWriterTo) error {
	if p, ok := c.(vgimg.PngCanvas); ok {
		return pngEncoder.Encode(w, p.Image())
	}
	_, err := c.WriteTo(w)
	return err
}

// addCurve draws one curve: a band (if lo and hi are set), the line, and
// markers — at every point if every is set (a few measured values), else
// markersPerCurve of them staggered by the curve's index i among n, so that
// coinciding curves show all their markers (evenly spaced on a logarithmic
// axis if logX). It returns the line and markers for the legend.
func (f *figure) addCurve(i, n int, pts, lo, hi plotter.XYs, logX, every bool) ([]plot.Thumbnailer, error) {
	st := styleOf(i)
	if len(lo) > 1 {
		ring := append(decimate(lo, logX), reversed(decimate(hi, logX))...)
		band, err := plotter.NewPolygon(ring)
		if err != nil {
			return nil, err
		}
		band.Color, band.LineStyle.Width = st.fill, 0
		f.Add(band)
	}
	line, err := plotter.NewLine(decimate(pts, logX))
	if err != nil {
		return nil, err
	}
	line.LineStyle = st.line
	at := pts
	if !every {
		at = markerPoints(pts, i, n, logX)
	}
	marks, err := plotter.NewScatter(at)
	if err != nil {
		return nil, err
	}
	marks.GlyphStyle = st.glyph
	f.Add(line, marks)
	return []plot.Thumbnailer{line, marks}, nil
}

// Lines of more than maxLinePoints points are decimated to lineBuckets
// slices of the x axis, about two per pixel of a PNG's data area: the
// rasterizer's cost grows faster than linearly with the points of a path
// (a curve of 10⁵ points took 14 s, one of 10⁶ more than 5 minutes), and a
// figure cannot show more than its pixels anyway.
const (
	maxLinePoints = 8192
	lineBuckets   = 2048
)

// decimate returns pts unchanged if it has at most maxLinePoints points, else
// the points that draw the same line at the figure's resolution: in each of
// lineBuckets equal slices of the x range (of log x if logX), the first,
// last, lowest and highest point, in their original order.
func decimate(pts plotter.XYs, logX bool) plotter.XYs {
	if len(pts) <= maxLinePoints {
		return pts
	}
	pos := func(x float64) float64 {
		if logX {
			return math.Log(x)
		}
		return x
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range pts {
		lo, hi = min(lo, pos(p.X)), max(hi, pos(p.X))
	}
	type bucket struct{ first, last, low, high int }
	buckets := make([]bucket, lineBuckets)
	for i := range buckets {
		buckets[i] = bucket{-1, -1, -1, -1}
	}
	for i, p := range pts {
		k := 0
		if hi > lo {
			k = min(int((pos(p.X)-lo)/(hi-lo)*lineBuckets), lineBuckets-1)
		}
		b := &buckets[k]
		if b.first < 0 {
			*b = bucket{i, i, i, i}
			continue
		}
		b.last = i
		if p.Y < pts[b.low].Y {
			b.low = i
		}
		if p.Y > pts[b.high].Y {
			b.high = i
		}
	}
	keep := make([]bool, len(pts))
	for _, b := range buckets {
		if b.first >= 0 {
			keep[b.first], keep[b.last], keep[b.low], keep[b.high] = true, true, true, true
		}
	}
	var out plotter.XYs
	for i, p := range pts {
		if keep[i] {
			out = append(out, p)
		}
	}
	return out
}

func reversed(xys plotter.XYs) plotter.XYs {
	out := slices.Clone(xys)
	slices.Reverse(out)
	return out
}

// markerPoints picks markersPerCurve points of pts, evenly spaced along the
// x axis (in log x if logX) and shifted by i/n of the spacing.
func markerPoints(pts plotter.XYs, i, n int, logX bool) plotter.XYs {
	if len(pts) == 0 {
		return nil
	}
	pos := func(x float64) float64 {
		if logX {
			return math.Log(x)
		}
		return x
	}
	lo, hi := pos(pts[0].X), pos(pts[len(pts)-1].X)
	if logX && len(pts) > 1 {
		// Early on, recorded iterations are sparse on a logarithmic axis:
		// start where their spacing, d/x, is below half the markers' own,
		// so that every curve's markers land on distinct iterations.
		d := pts[1].X - pts[0].X
		lo = max(lo, math.Log(2*float64(n*markersPerCurve)*d/(hi-lo)))
	}
	var out plotter.XYs
	k := 0
	for m := range markersPerCurve {
		target := lo + (hi-lo)*(float64(m)+(float64(i)+0.5)/float64(n))/markersPerCurve
		for k+1 < len(pts) && math.Abs(pos(pts[k+1].X)-target) <= math.Abs(pos(pts[k].X)-target) {
			k++
		}
		if len(out) == 0 || out[len(out)-1] != pts[k] {
			out = append(out, pts[k])
		}
	}
	return out
}

// cleanNumber rewrites a formatted number: "-25.00" becomes "−25", "0.50"
// "0.5", "1.500e-05" "1.5e−05"; integers keep their zeros.
func cleanNumber(s string) string {
	if s == "" {
		return s
	}
	mant, exp, hasExp := strings.Cut(s, "e")
	if strings.Contains(mant, ".") {
		mant = strings.TrimSuffix(strings.TrimRight(mant, "0"), ".")
	}
	if mant == "-0" {
		mant = "0"
	}
	s = mant
	if hasExp {
		s += "e" + exp
	}
	return strings.ReplaceAll(s, "-", "−")
}

// maxTicks bounds the ticks of an axis. An axis of ordinary data has a few
// dozen (six labelled, four or five unlabelled between each pair; nine per
// decade on a logarithmic axis of up to 60 decades); the bound only stops
// an axis that no round step can divide — a range a few ULPs wide, or
// hundreds of decades — from getting millions.
const maxTicks = 1000

// linearTicks labels a linear axis at about six round values: multiples of
// 1, 2, 2.5 or 5 times a power of ten, with unlabelled ticks between them.
// (gonum's DefaultTicks aims at three labels, too few to read values off.)
// A range it cannot divide so — not finite, or too narrow for the ticks to
// be distinct floating-point numbers — gets its two ends (endTicks).
type linearTicks struct{}

// Ticks implements plot.Ticker.
func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !finite(lo) || !finite(hi) || !(hi > lo) {
		return endTicks(lo, hi)
	}
	raw := (hi - lo) / 6
	if math.IsInf(raw, 0) {
		raw = hi/6 - lo/6 // hi − lo overflows: ±MaxFloat64
	}
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step, minor := 10*mag, 2*mag
	for _, m := range []struct{ step, minor float64 }{{1, 0.2}, {2, 0.5}, {2.5, 0.5}, {5, 1}} {
		if m.step*mag >= raw {
			step, minor = m.step*mag, m.minor*mag
			break
		}
	}
	first, last := math.Ceil(lo/minor), math.Floor(hi/minor)
	// Beyond 2⁵² consecutive multiples of minor are no longer distinct
	// (the counter i would stop advancing), and a subnormal minor has
	// lost its precision.
	if !(minor >= 0x1p-1022) || !finite(first) || !finite(last) || math.Abs(first) > 0x1p52 || math.Abs(last) > 0x1p52 || last-first >= maxTicks {
		return endTicks(lo, hi)
	}
	decimals := max(0, -int(math.Floor(math.Log10(minor)+1e-9)))
	var ticks []plot.Tick
	for i := first; i*minor <= hi; i++ {
		v := i * minor
		t := plot.Tick{Value: v}
		if q := v / step; math.Abs(q-math.Round(q)) < 1e-9 {
			t.Label = cleanNumber(strconv.FormatFloat(math.Round(q)*step, 'f', decimals, 64))
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// endTicks labels the ends of a range that no round step divides, in their
// shortest exact form (one tick when they are equal, none when they are not
// finite).
func endTicks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for i, v := range []float64{lo, hi} {
		if finite(v) && (i == 0 || v != lo) {
			ticks = append(ticks, plot.Tick{Value: v, Label: cleanNumber(strconv.FormatFloat(v, 'g', -1, 64))})
		}
	}
	return ticks
}

// logTicks labels a logarithmic axis at 1, 2 and 5 times the powers of ten
// when it spans at most two decades, at the powers of ten otherwise, with
// unlabelled ticks at every integer multiple in between. A range that is
// not positive and finite gets its ends (endTicks); one wider than
// maxTicks/9 decades, the powers of ten of every k-th decade.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !finite(hi) || !(hi >= lo) {
		return endTicks(lo, hi)
	}
	first, last := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	if decades := last - first + 1; 9*decades > maxTicks {
		var ticks []plot.Tick
		k := (decades + maxTicks - 1) / maxTicks
		for e := first; e <= last; e += k {
			v := math.Pow10(e)
			if v < lo || v > hi {
				continue
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: cleanNumber(strconv.FormatFloat(v, 'g', -1, 64))})
		}
		return ticks
	}
	var ticks []plot.Tick
	for e := first; e <= last; e++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow10(e)
			if math.IsInf(v, 0) {
				break // beyond the floating-point range (hi near its top)
			}
			t := plot.Tick{Value: v}
			if m == 1 || last-first <= 2 && (m == 2 || m == 5) {
				t.Label = cleanNumber(strconv.FormatFloat(v, 'g', -1, 64))
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
