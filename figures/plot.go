package figures

import (
	"context"
	"math"
	"slices"
	"strings"
	"unicode"

	"gonum.org/v1/plot/plotter"

	"maple/rundir"
	"maple/scenarios"
)

// Write draws the figures of a plan (Charts) as PNG and SVG files in
// outDir and returns their names. Once ctx is done it stops before the next
// figure and returns ctx's error.
func Write(ctx context.Context, outDir string, plan *scenarios.Plan, curves []rundir.Curve) ([]string, error) {
	if len(curves) == 0 {
		return nil, nil
	}
	charts, err := Charts(optionsOf(plan), curves)
	if err != nil {
		return nil, err
	}
	var files []string
	for i := range charts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		written, err := charts[i].save(outDir)
		if err != nil {
			return nil, err
		}
		files = append(files, written...)
	}
	return files, nil
}

// Options are how a plan's figures are drawn.
type Options struct {
	// Title heads every figure: the scenario's description, else its name.
	Title string
	// Name is the scenario's name: a label part the title replaces.
	Name string
	// GroupBy is output.group_by: one figure per value of that field.
	GroupBy string
	// Linear is output.linear: mean-square deviations on a linear axis
	// instead of in dB.
	Linear bool
	// From is output.plot_from: the iterations before it are left out (they
	// stay in metrics.csv).
	From int
}

// optionsOf returns the options of the plan's figures, from its scenario.
func optionsOf(plan *scenarios.Plan) Options {
	title := plan.Base.Description
	if title == "" {
		title = plan.Base.Name
	}
	out := plan.Base.Output
	return Options{Title: title, Name: plan.Base.Name, GroupBy: out.GroupBy, Linear: out.Linear, From: out.PlotFrom}
}

// Charts returns the figures of a plan's curves, in the order Write draws
// them: per value of output.group_by (one group without it), each metric
// column against the iteration, then against each cumulative axis column
// (Column.Axis); then, for every numeric parameter the curves vary, the
// steady state of each metric against it.
func Charts(opts Options, curves []rundir.Curve) ([]Chart, error) {
	var charts []Chart
	for _, g := range groupCurves(curves, opts.GroupBy) {
		suffix, heading := "", ""
		if g.value != "" {
			suffix, heading = "-"+fileSafe(g.value), lastPart(opts.GroupBy)+"="+g.value
		}
		charts = append(charts, curveCharts(opts, heading, g.value, suffix, g.curves)...)
	}
	for _, field := range numericSettings(curves) {
		more, err := sweepCharts(opts.Title, field, curves)
		if err != nil {
			return nil, err
		}
		charts = append(charts, more...)
	}
	return charts, nil
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

// columnIndex returns the index of the column named name among c's, or -1.
func columnIndex(c rundir.Curve, name string) int {
	return slices.IndexFunc(c.Cols, func(col rundir.Column) bool { return col.Name == name })
}

// columnsOf returns the columns the figures of curves draw: the union of
// the curves' columns, by name, in order of first appearance — a column only
// some curves have (the seed-holding eavesdropper's, the dropped replies of
// an asynchronous server) gets its figures too.
func columnsOf(curves []rundir.Curve) []rundir.Column {
	var cols []rundir.Column
	for _, c := range curves {
		for _, col := range c.Cols {
			if !slices.ContainsFunc(cols, func(x rundir.Column) bool { return x.Name == col.Name }) {
				cols = append(cols, col)
			}
		}
	}
	return cols
}

// curveLine extracts column col of a curve against the iteration (axis "")
// or against the mean of the column named axis (a cumulative count,
// Column.Axis): the mean and, with more than one run, its standard error.
// The initial model's test error (100%: it scores every sample 0) would
// flatten the figure and is left out (it stays in metrics.csv), as are the
// iterations before from. A curve without the column, or the axis, has an
// empty line.
func curveLine(c rundir.Curve, col rundir.Column, axis string, from int) Line {
	var l Line
	k, a := columnIndex(c, col.Name), -1
	if axis != "" {
		a = columnIndex(c, axis)
	}
	if k < 0 || axis != "" && a < 0 {
		return l
	}
	runs := float64(c.Runs)
	for r, it := range c.Mean.Iterations {
		if it == 0 && !col.Decibel || it < from {
			continue
		}
		x := float64(it)
		if a >= 0 {
			x = c.Value(r, a, false)
		}
		if !plottable(x) {
			continue
		}
		l.X = append(l.X, x)
		l.Mean = append(l.Mean, c.Mean.Get(r, k))
		if runs >= 2 {
			l.SE = append(l.SE, c.Std.Get(r, k)/math.Sqrt(runs))
		}
	}
	return l
}

// curveCharts returns a group's charts: one per metric column, every curve
// a line with its band, named METRIC+suffix, then the same against each
// axis column, METRIC-by-AXIS+suffix. The label parts every curve shares go
// on the title's second line, except the scenario's name, which the title
// replaces, and so does heading (field=value of the group) unless a shared
// part already names value.
func curveCharts(opts Options, heading, value, suffix string, curves []rundir.Curve) []Chart {
	labels := make([]string, len(curves))
	for i, c := range curves {
		labels[i] = c.Spec.Label
	}
	common, rest := splitLabels(labels)
	common = slices.DeleteFunc(common, func(p string) bool { return p == opts.Name })
	if heading != "" && !slices.ContainsFunc(common, func(p string) bool { return strings.Contains(plain(p), plain(value)) }) {
		common = append([]string{heading}, common...)
	}
	title := opts.Title
	if len(common) > 0 {
		title += "\n" + strings.Join(common, ", ")
	}
	cols := columnsOf(curves)
	var charts []Chart
	for _, against := range append([]rundir.Column{{}}, cols...) {
		if against.Name != "" && !against.Axis {
			continue
		}
		for _, col := range cols {
			if against.Name != "" && col.Axis {
				continue
			}
			ch := Chart{Name: col.Name + suffix, Title: title, Common: common, Metric: col, Against: against.Name,
				XLabel: "iteration", YLabel: col.Label, Decibel: col.Decibel && !opts.Linear, Group: value, Legend: len(curves) > 1}
			if against.Name != "" {
				ch.Name = col.Name + "-by-" + against.Name + suffix
				ch.XLabel = against.Label
			}
			if col.Decibel && opts.Linear {
				ch.YLabel = strings.TrimSuffix(col.Label, " (dB)") + " (linear)"
			}
			all := make([]plotter.XYs, len(curves))
			var last float64
			for i, c := range curves {
				l := curveLine(c, col, against.Name, opts.From)
				l.Label = rest[i]
				ch.Lines = append(ch.Lines, l)
				all[i], _, _ = l.Points(ch.Decibel)
				if n := len(all[i]); n > 0 {
					last = max(last, all[i][n-1].X)
				}
			}
			ch.LogX = transientShort(all, last)
			charts = append(charts, ch)
		}
	}
	return charts
}

// transientShort reports whether every curve reaches 90% of the way from
// its first plotted value to its steady state (the mean of its last tenth)
// within the first tenth of the iterations: then a linear iteration axis
// would squeeze every transient against it.
func transientShort(all []plotter.XYs, last float64) bool {
	longest := 0.0
	for _, pts := range all {
		if len(pts) < 10 {
			return false
		}
		tail := pts[len(pts)-max(1, len(pts)/10):]
		var steady float64
		for _, p := range tail {
			steady += p.Y
		}
		steady /= float64(len(tail))
		gap := pts[0].Y - steady
		for _, p := range pts {
			if math.Abs(p.Y-steady) <= 0.1*math.Abs(gap) {
				longest = max(longest, p.X)
				break
			}
		}
	}
	return longest > 0 && longest < 0.1*last
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

// positiveX removes the points at x ≤ 0 (iteration 0), which a logarithmic
// axis cannot show.
func positiveX(xys plotter.XYs) plotter.XYs {
	return slices.DeleteFunc(xys, func(p plotter.XY) bool { return p.X <= 0 })
}
