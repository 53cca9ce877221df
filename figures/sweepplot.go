package figures

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"gonum.org/v1/plot/plotter"

	"maple/rundir"
)

// schedule are the fields that set how long or how often a run is measured,
// not what is run: the steady state is not plotted against them.
var schedule = []string{"seed", "runs", "iterations"}

// numericSettings lists the fields, in order of first appearance, that every
// curve sets (through the sweep or its curves entry) to a positive number,
// taking at least three values: the parameters a steady state can be
// plotted against.
func numericSettings(curves []rundir.Curve) []string {
	var fields []string
	for _, s := range curves[0].Spec.Settings {
		if slices.Contains(schedule, s.Field) || strings.HasPrefix(s.Field, "output.") {
			continue
		}
		values := map[float64]bool{}
		for _, c := range curves {
			v, err := strconv.ParseFloat(settingOf(c, s.Field), 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				values = nil
				break
			}
			values[v] = true
		}
		if len(values) >= 3 && !slices.Contains(fields, s.Field) {
			fields = append(fields, s.Field)
		}
	}
	return fields
}

// lockstep lists the settings whose value is a function of field's across
// the curves, and field's of theirs (μ and the iterations that go with it):
// they belong to the same point of a sweep plot, not to another line.
func lockstep(curves []rundir.Curve, field string) []string {
	var out []string
	for _, s := range curves[0].Spec.Settings {
		if s.Field == field {
			continue
		}
		ab, ba := map[string]string{}, map[string]string{}
		ok := true
		for _, c := range curves {
			a, b := settingOf(c, field), settingOf(c, s.Field)
			if x, seen := ab[a]; seen && x != b {
				ok = false
			}
			if x, seen := ba[b]; seen && x != a {
				ok = false
			}
			ab[a], ba[b] = b, a
		}
		if ok {
			out = append(out, s.Field)
		}
	}
	return out
}

// sweepLine is the curves of a sweep that differ only in the swept value.
type sweepLine struct {
	label  string
	curves []rundir.Curve
	x      []float64
}

// sweepCharts returns one chart per metric of the steady state (the
// summary's, linear) against the value of field, log-log, one line per
// combination of the other settings (those that change in lockstep with
// field aside), with the least-squares slope of log(steady state) on
// log(value) in the legend: steady-METRIC-vs-FIELD. A metric no line has
// two positive values of is left out.
func sweepCharts(title, field string, curves []rundir.Curve) ([]Chart, error) {
	var lines []sweepLine
	index := map[string]int{}
	values := map[float64]bool{}
	same := append(lockstep(curves, field), field)
	for _, c := range curves {
		v, err := strconv.ParseFloat(settingOf(c, field), 64)
		if err != nil {
			return nil, err // numericSettings checked every value
		}
		values[v] = true
		// The line's name: the curve's label without the swept part when
		// a sweep sets field (its label has field=value); otherwise (a
		// curves entry sets it, under a label of its own) the other
		// settings.
		parts := strings.Split(c.Spec.Label, ", ")
		var others []string
		if slices.Contains(parts, lastPart(field)+"="+settingOf(c, field)) {
			for _, p := range parts {
				if !slices.ContainsFunc(same, func(f string) bool { return p == lastPart(f)+"="+settingOf(c, f) }) {
					others = append(others, p)
				}
			}
		} else {
			for _, s := range c.Spec.Settings {
				if !slices.Contains(same, s.Field) {
					others = append(others, lastPart(s.Field)+"="+s.Value)
				}
			}
		}
		key := strings.Join(others, ", ")
		i, ok := index[key]
		if !ok {
			i = len(lines)
			index[key] = i
			lines = append(lines, sweepLine{label: key})
		}
		lines[i].curves = append(lines[i].curves, c)
		lines[i].x = append(lines[i].x, v)
	}
	ticks := slices.Sorted(maps.Keys(values))
	labels := make([]string, len(lines))
	for i, l := range lines {
		labels[i] = l.label
	}
	common, rest := splitLabels(labels)
	common = slices.DeleteFunc(common, func(p string) bool { return p == "" })
	var charts []Chart
	for _, col := range columnsOf(curves) {
		if col.Name == lastPart(field) {
			continue // a column that reports the swept value itself (θ against θ)
		}
		// The quantity goes in the title: gonum centres a vertical axis
		// label at the arithmetic mean of the axis range, which on a
		// logarithmic axis sits near its top and pushes the data area down.
		full := title + "\nsteady-state " + strings.TrimSuffix(col.Label, " (dB)") + " against " + lastPart(field)
		if len(common) > 0 {
			full += "; " + strings.Join(common, ", ")
		}
		ch := Chart{Name: "steady-" + col.Name + "-vs-" + lastPart(field), Title: full, Common: common, Metric: col,
			Against: field, XLabel: lastPart(field), LogX: true, LogY: true, Sweep: true, XTicks: ticks, Legend: true}
		drawn := 0
		for i, l := range lines {
			var pts plotter.XYs
			for j, c := range l.curves {
				k := columnIndex(c, col.Name)
				if k < 0 {
					continue
				}
				y := rundir.SteadyState(c.Mean, k, c.Spec.Scenario.Output.SteadyState)
				if y > 0 && !math.IsInf(y, 0) {
					pts = append(pts, plotter.XY{X: l.x[j], Y: y})
				}
			}
			line := Line{Label: rest[i]}
			if len(pts) >= 2 {
				slices.SortFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
				for _, p := range pts {
					line.X, line.Mean = append(line.X, p.X), append(line.Mean, p.Y)
				}
				line.Slope, line.Fit = logLogFit(pts)
				name := "slope " + cleanNumber(strconv.FormatFloat(line.Slope, 'f', 2, 64))
				if !fitted(line) {
					name = "no slope" // the points share one x, or the fit leaves the floating-point range
				}
				if rest[i] != "" && len(lines) > 1 {
					name = rest[i] + ": " + name
				}
				line.Label = name
				drawn++
			}
			ch.Lines = append(ch.Lines, line)
		}
		if drawn > 0 {
			charts = append(charts, ch)
		}
	}
	return charts, nil
}

// logLogFit returns the least-squares slope of log y on log x and the fitted
// line at the first and last x.
func logLogFit(pts plotter.XYs) (float64, plotter.XYs) {
	x, y := make([]float64, len(pts)), make([]float64, len(pts))
	for i, p := range pts {
		x[i], y[i] = math.Log(p.X), math.Log(p.Y)
	}
	alpha, beta := stat.LinearRegression(x, y, nil, false)
	ends := plotter.XYs{pts[0], pts[len(pts)-1]}
	for i := range ends {
		ends[i].Y = math.Exp(alpha + beta*math.Log(ends[i].X))
	}
	return beta, ends
}
