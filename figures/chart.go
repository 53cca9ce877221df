package figures

import (
	"bytes"
	"math"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"maple/rundir"
)

// Chart is one figure of a run, independent of how it is drawn: what it
// plots, its axes and a line per curve. maple run draws each as a PNG and
// an SVG file (Write); the report draws the same charts, interactive, and
// the same SVG for readers without scripts.
type Chart struct {
	// Name is the figure's file name without extension:
	// METRIC[-by-AXIS][-GROUP] or steady-METRIC-vs-FIELD.
	Name string
	// Title is the figure's title, lines separated by "\n": the scenario's
	// description and Common.
	Title string
	// Common lists the label parts every line shares, which the legend
	// leaves out (with output.group_by, the group's field=value first).
	Common []string
	// Metric is the column drawn.
	Metric rundir.Column
	// Against names the x axis: the axis column a curve chart is drawn
	// against ("" for the iteration), or the field a sweep chart sweeps.
	Against string
	// XLabel and YLabel label the axes ("(logarithmic)" is added to a
	// logarithmic iteration axis when drawn).
	XLabel, YLabel string
	// Decibel is set when the values are drawn in dB: a mean-square
	// deviation, unless output.linear.
	Decibel bool
	// LogX and LogY make the axes logarithmic.
	LogX, LogY bool
	// Sweep marks a steady state against a swept parameter; XTicks are then
	// the swept values.
	Sweep  bool
	XTicks []float64
	// Group is the value of output.group_by the chart's curves set.
	Group string
	// Lines has a line per curve (per combination of the other settings
	// in a sweep chart), Lines[i] in StyleOf(i): a curve without values
	// keeps its place, so that the others keep their styles.
	Lines []Line
	// Legend is set when the figure names its lines: it has more than one
	// curve, or it is a sweep chart.
	Legend bool
}

// Line is a curve of a chart, its values on the linear scale.
type Line struct {
	// Label names the line in the legend.
	Label string
	// X are the abscissae, Mean the mean over the runs at each and SE its
	// standard error (nil with a single run: no band).
	X, Mean, SE []float64
	// Fit is a sweep line's least-squares power law at its first and last
	// x, and Slope its exponent.
	Fit   plotter.XYs
	Slope float64
}

// Points returns the line's points as drawn — in dB if db — and its band
// of ±1 standard error of the mean (cut 10 dB below the mean in dB where
// it reaches zero), leaving out the values that are not plottable.
func (l *Line) Points(db bool) (pts, lo, hi plotter.XYs) {
	for k, x := range l.X {
		m, y := l.Mean[k], l.Mean[k]
		if db {
			y = rundir.Decibel(m)
		}
		if !plottable(x) || !plottable(y) {
			continue
		}
		pts = append(pts, plotter.XY{X: x, Y: y})
		if l.SE == nil {
			continue
		}
		se := l.SE[k]
		bl, bh := m-se, m+se
		if db {
			bl, bh = rundir.Decibel(max(bl, m/10)), rundir.Decibel(bh)
		}
		if plottable(bl) && plottable(bh) {
			lo = append(lo, plotter.XY{X: x, Y: bl})
			hi = append(hi, plotter.XY{X: x, Y: bh})
		}
	}
	return pts, lo, hi
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// maxPlottable bounds the magnitude of the values a figure shows: the span
// of values beyond it can overflow, and gonum then places points at NaN
// coordinates, on which the rasterizer never finishes. Such values only come
// from a run that diverged (NaN and ±Inf are left out as well).
const maxPlottable = 1e300

// plottable reports whether v can be drawn.
func plottable(v float64) bool { return finite(v) && math.Abs(v) <= maxPlottable }

// draw lays the chart out as a gonum figure.
func (c *Chart) draw() (*figure, error) {
	xLabel := c.XLabel
	if c.LogX && !c.Sweep {
		xLabel += " (logarithmic)"
	}
	f := newFigure(c.Title, xLabel, c.YLabel)
	if c.Sweep {
		ticks := make(plot.ConstantTicks, 0, len(c.XTicks))
		for _, v := range c.XTicks {
			ticks = append(ticks, plot.Tick{Value: v, Label: cleanNumber(strconv.FormatFloat(v, 'g', -1, 64))})
		}
		f.X.Scale, f.Y.Scale = plot.LogScale{}, plot.LogScale{}
		f.X.Tick.Marker, f.Y.Tick.Marker = ticks, logTicks{}
		for i, l := range c.Lines {
			if len(l.X) < 2 {
				continue
			}
			pts, _, _ := l.Points(false)
			thumbs, err := f.addCurve(i, len(c.Lines), pts, nil, nil, true, true)
			if err != nil {
				return nil, err
			}
			if fitted(l) {
				fit, err := plotter.NewLine(l.Fit)
				if err != nil {
					return nil, err
				}
				fit.LineStyle = styleOf(i).line
				fit.LineStyle.Width = vg.Points(0.6)
				fit.LineStyle.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
				f.Add(fit)
			}
			f.legend.Add(l.Label, thumbs...)
		}
		return f, nil
	}
	if c.LogX {
		f.X.Scale = plot.LogScale{}
		f.X.Tick.Marker = logTicks{}
	}
	for i, l := range c.Lines {
		pts, lo, hi := l.Points(c.Decibel)
		if c.LogX {
			pts, lo, hi = positiveX(pts), positiveX(lo), positiveX(hi)
		}
		if len(pts) == 0 {
			continue
		}
		thumbs, err := f.addCurve(i, len(c.Lines), pts, lo, hi, c.LogX, false)
		if err != nil {
			return nil, err
		}
		if c.Legend {
			f.legend.Add(l.Label, thumbs...)
		}
	}
	return f, nil
}

// fitted reports whether a sweep line's power-law fit can be drawn: not when
// its points share one x, or the fit leaves the floating-point range.
func fitted(l Line) bool {
	return len(l.Fit) == 2 && finite(l.Slope) && finite(l.Fit[0].Y) && finite(l.Fit[1].Y)
}

// save writes the chart as NAME.png and NAME.svg in outDir.
func (c *Chart) save(outDir string) ([]string, error) {
	f, err := c.draw()
	if err != nil {
		return nil, err
	}
	var files []string
	for _, ext := range []string{".png", ".svg"} {
		if err := writeFile(filepath.Join(outDir, c.Name+ext), f.canvas(ext)); err != nil {
			return nil, err
		}
		files = append(files, c.Name+ext)
	}
	return files, nil
}

// SVG returns the chart drawn as the SVG document maple run writes as
// NAME.svg.
func (c *Chart) SVG() ([]byte, error) {
	f, err := c.draw()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := f.canvas(".svg").WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// canvas draws the figure on a PNG (ext ".png") or SVG canvas: the data
// area keeps its size and the legend, if any, is added to its right.
func (f *figure) canvas(ext string) vg.CanvasWriterTo {
	var lw vg.Length
	if r := f.legend.Rectangle(draw.Canvas{}); r.Max.X > r.Min.X {
		lw = r.Max.X - r.Min.X + 2*legendGap
	}
	w, h := plotWidth+lw, plotHeight
	for _, a := range []*plot.Axis{&f.X, &f.Y} {
		collapse(a)
	}
	var c vg.CanvasWriterTo
	if ext == ".png" {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI))}
	} else {
		c = vgsvg.New(w, h)
	}
	dc := draw.New(c)
	f.Draw(draw.Crop(dc, vg.Points(4), -lw, 0, 0))
	if lw > 0 {
		// Top-aligned with the data area, below the title.
		top := f.Title.TextStyle.Rectangle(f.Title.Text).Size().Y + f.Title.Padding + legendGap
		f.legend.Draw(draw.Crop(dc, plotWidth+legendGap, 0, 0, -top))
	}
	return c
}

// collapse prepares an axis whose values no round ticks can divide, so
// that its ticks end:
//
//   - a linear axis of unequal values equal to within rounding (a span of
//     at most 1e-9 of their magnitude, such as two curves equal to the last
//     bits) gets both ends at their middle, which gonum widens to ±1 as it
//     does for equal values;
//   - a linear axis of equal values so large that gonum's ± 1 leaves them
//     equal (beyond 2⁵³) spans ± 1‰ of them instead;
//   - a logarithmic axis of equal values v, which gonum's v ± 1 would take
//     to zero or below (v ≤ 1), spans half a decade either side instead.
//
// Every other axis is left as gonum sets it.
func collapse(a *plot.Axis) {
	lo, hi := a.Min, a.Max
	if !finite(lo) || !finite(hi) {
		return
	}
	if _, log := a.Scale.(plot.LogScale); log {
		if lo == hi && lo > 0 && !(lo-1 > 0) {
			a.Min, a.Max = lo/math.Sqrt(10), lo*math.Sqrt(10)
		}
		return
	}
	if lo != hi && hi-lo <= 1e-9*max(math.Abs(lo), math.Abs(hi)) {
		a.Min = lo + (hi-lo)/2
		a.Max = a.Min
	}
	if v := a.Min; a.Min == a.Max && (v-1 == v || v+1 == v) {
		a.Min, a.Max = v-math.Abs(v)/1000, v+math.Abs(v)/1000
	}
}
