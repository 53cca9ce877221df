package figures

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"maple/rundir"
	"maple/scenarios"
)

// Write draws the figures of a plan: one per metric column, or, with
// output.group_by, one per metric and value of that field; and for every
// numeric sweep one per metric of the steady state against the swept value.
// It returns the file names written (PNG and SVG of each). Once ctx is done
// it stops before the next figure and returns ctx's error.
func Write(ctx context.Context, outDir string, plan *scenarios.Plan, curves []rundir.Curve) ([]string, error) {
	if len(curves) == 0 {
		return nil, nil
	}
	title := plan.Base.Description
	if title == "" {
		title = plan.Base.Name
	}
	groupBy := plan.Base.Output.GroupBy
	style := plotStyle{linear: plan.Base.Output.Linear, from: plan.Base.Output.PlotFrom}
	var files []string
	for _, g := range groupCurves(curves, groupBy) {
		suffix, heading := "", ""
		if g.value != "" {
			suffix, heading = "-"+fileSafe(g.value), lastPart(groupBy)+"="+g.value
		}
		written, err := writeFigures(ctx, outDir, title, heading, g.value, suffix, plan.Base.Name, style, g.curves)
		if err != nil {
			return nil, err
		}
		files = append(files, written...)
	}
	for _, field := range numericSettings(curves) {
		written, err := writeSweepFigures(ctx, outDir, title, field, curves)
		if err != nil {
			return nil, err
		}
		files = append(files, written...)
	}
	return files, nil
}

// plotStyle is how figures are drawn (output.linear, output.plot_from): with
// linear, mean-square deviations on a linear axis instead of in dB; the
// iterations before from left out (they stay in metrics.csv).
type plotStyle struct {
	linear bool
	from   int
}

// curveGroup is the curves one figure shows.
type curveGroup struct {
	value  string
	curves []rundir.Curve
}

// groupCurves splits the curves by the value they set field to, in order of
// first appearance. Without a field, or when no curve sets it, there is one
// group.
func groupCurves(curves []rundir.Curve, field string) []curveGroup {
	var groups []curveGroup
	index := map[string]int{}
	for _, c := range curves {
		value := settingOf(c, field)
		i, ok := index[value]
		if !ok {
			i = len(groups)
			index[value] = i
			groups = append(groups, curveGroup{value: value})
		}
		groups[i].curves = append(groups[i].curves, c)
	}
	return groups
}

// settingOf returns the value a curve sets field to, or "".
func settingOf(c rundir.Curve, field string) string {
	value := ""
	for _, s := range c.Spec.Settings {
		if field != "" && s.Field == field {
			value = s.Value
		}
	}
	return value
}

// fileSafe turns a setting's value into a file-name part: [1, 3] becomes
// 1-3 and a/b becomes a-b.
func fileSafe(v string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '[', ']', '{', '}', ' ':
			return -1
		case ',', '/', ':':
			return '-'
		}
		return r
	}, v)
}

// splitLabels splits the ", "-joined parts of labels into those every
// label has (in the first label's order) and what remains of each label.
// A label left empty keeps its full text.
func splitLabels(labels []string) (common []string, rest []string) {
	split := make([][]string, len(labels))
	for i, l := range labels {
		split[i] = strings.Split(l, ", ")
	}
	shared := func(part string) bool {
		for _, s := range split {
			if !slices.Contains(s, part) {
				return false
			}
		}
		return true
	}
	if len(labels) > 0 {
		for _, part := range split[0] {
			if shared(part) {
				common = append(common, part)
			}
		}
	}
	for i, s := range split {
		kept := slices.DeleteFunc(slices.Clone(s), func(p string) bool { return slices.Contains(common, p) })
		if len(kept) == 0 {
			rest = append(rest, labels[i])
		} else {
			rest = append(rest, strings.Join(kept, ", "))
		}
	}
	return common, rest
}

func lastPart(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// series is one curve of a metric, ready to draw.
type series struct {
	pts, lo, hi plotter.XYs
}

// curveSeries extracts metric k of a curve against the iteration (axis < 0)
// or against the mean of column axis (a cumulative count, Column.Axis): the
// mean and, with more than one run, the band of ±1 standard error. The
// initial model's test error (100%: it scores every sample 0) would flatten
// the figure and is left out (it stays in metrics.csv); a dB band reaching
// zero is cut 10 dB below the mean. Values that are not plottable (a
// diverged run's) are left out too.
func curveSeries(c rundir.Curve, k, axis int, db bool, from int) series {
	var s series
	runs := float64(c.Runs)
	for r, it := range c.Mean.Iterations {
		if it == 0 && !c.Cols[k].Decibel || it < from {
			continue
		}
		x, m, y := float64(it), c.Mean.Get(r, k), c.Value(r, k, db)
		if axis >= 0 {
			x = c.Value(r, axis, false)
		}
		if !plottable(x) || !plottable(y) {
			continue
		}
		s.pts = append(s.pts, plotter.XY{X: x, Y: y})
		if runs < 2 {
			continue
		}
		se := c.Std.Get(r, k) / math.Sqrt(runs)
		lo, hi := m-se, m+se
		if db {
			lo, hi = rundir.Decibel(max(lo, m/10)), rundir.Decibel(hi)
		}
		if plottable(lo) && plottable(hi) {
			s.lo = append(s.lo, plotter.XY{X: x, Y: lo})
			s.hi = append(s.hi, plotter.XY{X: x, Y: hi})
		}
	}
	return s
}

// maxPlottable bounds the magnitude of the values a linear axis shows: the
// span of values beyond it can overflow, and gonum then places points at NaN
// coordinates, on which the rasterizer never finishes. Such values only come
// from a run that diverged (NaN and ±Inf are left out as well).
const maxPlottable = 1e300

// plottable reports whether v can be drawn on a linear axis.
func plottable(v float64) bool { return finite(v) && math.Abs(v) <= maxPlottable }

// transientShort reports whether every curve reaches 90% of the way from
// its first plotted value to its steady state (the mean of its last tenth)
// within the first tenth of the iterations: then a linear iteration axis
// would squeeze every transient against it.
func transientShort(all []series, last float64) bool {
	longest := 0.0
	for _, s := range all {
		if len(s.pts) < 10 {
			return false
		}
		tail := s.pts[len(s.pts)-max(1, len(s.pts)/10):]
		var steady float64
		for _, p := range tail {
			steady += p.Y
		}
		steady /= float64(len(tail))
		gap := s.pts[0].Y - steady
		for _, p := range s.pts {
			if math.Abs(p.Y-steady) <= 0.1*math.Abs(gap) {
				longest = max(longest, p.X)
				break
			}
		}
	}
	return longest > 0 && longest < 0.1*last
}

// writeFigures draws one figure per metric column of curves, every curve a
// line with its band, saved as METRIC+suffix.png and .svg. The label parts
// every curve shares go on the title's second line, except the scenario's
// name, which the title replaces, and so does heading (field=value of the
// group) unless a shared part already names value.
func writeFigures(ctx context.Context, outDir, title, heading, value, suffix, name string, style plotStyle, curves []rundir.Curve) ([]string, error) {
	labels := make([]string, len(curves))
	for i, c := range curves {
		labels[i] = c.Spec.Label
	}
	common, rest := splitLabels(labels)
	common = slices.DeleteFunc(common, func(p string) bool { return p == name })
	if heading != "" && !slices.ContainsFunc(common, func(p string) bool { return strings.Contains(plain(p), plain(value)) }) {
		common = append([]string{heading}, common...)
	}
	full := title
	if len(common) > 0 {
		full += "\n" + strings.Join(common, ", ")
	}
	files, err := writeFiguresAgainst(ctx, outDir, full, suffix, style, curves, rest, "")
	if err != nil {
		return nil, err
	}
	for _, col := range columnsOf(curves) {
		if col.Axis {
			more, err := writeFiguresAgainst(ctx, outDir, full, suffix, style, curves, rest, col.Name)
			if err != nil {
				return nil, err
			}
			files = append(files, more...)
		}
	}
	return files, nil
}

// writeFiguresAgainst draws the figures of writeFigures with the iteration
// on the x axis (axis ""), saved as METRIC+suffix, or the mean of the column
// named axis, a cumulative count, for every column but the axes, saved as
// METRIC-by-AXIS+suffix. A figure shows every curve that has its column
// (and the axis): the columns are those of all the curves. legend names the
// curves.
func writeFiguresAgainst(ctx context.Context, outDir, title, suffix string, style plotStyle, curves []rundir.Curve, legend []string, axis string) ([]string, error) {
	var files []string
	cols := columnsOf(curves)
	for _, col := range cols {
		if axis != "" && col.Axis {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name, xName := col.Name, "iteration"
		if axis != "" {
			name += "-by-" + axis
			xName = cols[slices.IndexFunc(cols, func(c rundir.Column) bool { return c.Name == axis })].Label
		}
		var all []series
		var last float64
		for _, c := range curves {
			k, a := columnIndex(c, col.Name), -1
			if axis != "" {
				a = columnIndex(c, axis)
			}
			if k < 0 || axis != "" && a < 0 {
				all = append(all, series{})
				continue
			}
			s := curveSeries(c, k, a, col.Decibel && !style.linear, style.from)
			all = append(all, s)
			if len(s.pts) > 0 {
				last = max(last, s.pts[len(s.pts)-1].X)
			}
		}
		logX := transientShort(all, last)
		xLabel := xName
		if logX {
			xLabel += " (logarithmic)"
			for i := range all {
				all[i] = dropNonPositiveX(all[i])
			}
		}
		yLabel := col.Label
		if col.Decibel && style.linear {
			yLabel = strings.TrimSuffix(col.Label, " (dB)") + " (linear)"
		}
		f := newFigure(title, xLabel, yLabel)
		if logX {
			f.X.Scale = plot.LogScale{}
			f.X.Tick.Marker = logTicks{}
		}
		for i, s := range all {
			if len(s.pts) == 0 {
				continue
			}
			thumbs, err := f.addCurve(i, len(curves), s.pts, s.lo, s.hi, logX, false)
			if err != nil {
				return nil, err
			}
			if len(curves) > 1 {
				f.legend.Add(legend[i], thumbs...)
			}
		}
		written, err := f.save(outDir, name+suffix)
		if err != nil {
			return nil, err
		}
		files = append(files, written...)
	}
	return files, nil
}

// columnsOf returns the columns of all the curves, by name, in order of
// first appearance: a column only some curves have (the seed-holding
// eavesdropper's, say) gets its figure too.
func columnsOf(curves []rundir.Curve) []rundir.Column {
	var cols []rundir.Column
	for _, c := range curves {
		for _, col := range c.Cols {
			if columnIndex(rundir.Curve{Cols: cols}, col.Name) < 0 {
				cols = append(cols, col)
			}
		}
	}
	return cols
}

// columnIndex returns the index of the column named name in c, or −1.
func columnIndex(c rundir.Curve, name string) int {
	return slices.IndexFunc(c.Cols, func(col rundir.Column) bool { return col.Name == name })
}

// plain reduces a label to its lower-case letters and digits, so that
// "local graph-homomorphic" names the value local-graph-homomorphic.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// dropNonPositiveX removes the points at iteration 0, which a logarithmic
// axis cannot show.
func dropNonPositiveX(s series) series {
	keep := func(xys plotter.XYs) plotter.XYs {
		return slices.DeleteFunc(xys, func(p plotter.XY) bool { return p.X <= 0 })
	}
	return series{pts: keep(s.pts), lo: keep(s.lo), hi: keep(s.hi)}
}
