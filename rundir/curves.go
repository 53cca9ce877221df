package rundir

import (
	"math"
	"slices"
	"strconv"

	"maple/scenarios"
)

// Curves rebuilds the curves of the run as maple run averaged them, to draw
// them again: their columns (summary.json's; for a run of an older maple,
// which did not record them, the metrics of metrics.csv, labelled by name),
// their settings and number of runs (summary.json) and the mean and
// standard deviation at every recorded iteration (metrics.csv, whose
// numbers read back exactly). A curve's scenario carries the output
// section, with the curve's own output.steady_state if it sets one. Every
// curve's columns come in metrics.csv's order: the first curve's own order,
// the others' possibly not.
func (r *Run) Curves() []Curve {
	byLabel := map[string]*CurveSummary{}
	for i := range r.Summary.Curves {
		byLabel[r.Summary.Curves[i].Label] = &r.Summary.Curves[i]
	}
	curves := make([]Curve, 0, len(r.Metrics))
	for i := range r.Metrics {
		m := &r.Metrics[i]
		sc := &scenarios.Scenario{Output: r.Output}
		spec := &scenarios.CurveSpec{Label: m.Label, Scenario: sc}
		runs := 1
		if cs := byLabel[m.Label]; cs != nil {
			spec.Settings, runs = cs.Settings, cs.Runs
			for _, st := range cs.Settings {
				if v, err := strconv.ParseFloat(st.Value, 64); err == nil && st.Field == "output.steady_state" {
					sc.Output.SteadyState = v
				}
			}
		}
		c := Curve{Spec: spec, Runs: runs}
		for _, name := range m.Order {
			c.Cols = append(c.Cols, r.column(m, name))
		}
		n := len(m.Iterations)
		c.Mean = &Table{cols: len(c.Cols), values: make([]float64, n*len(c.Cols))}
		c.Std = &Table{cols: len(c.Cols), values: make([]float64, n*len(c.Cols))}
		for _, it := range m.Iterations {
			c.Mean.Iterations = append(c.Mean.Iterations, int(it))
		}
		c.Std.Iterations = c.Mean.Iterations
		for k, col := range c.Cols {
			mean, std := m.Columns[col.Name], m.Columns[col.Name+"_std"]
			for row := range n {
				c.Mean.values[row*c.Mean.cols+k] = mean[row]
				c.Std.values[row*c.Std.cols+k] = math.NaN()
				if std != nil {
					c.Std.values[row*c.Std.cols+k] = std[row]
				}
			}
		}
		curves = append(curves, c)
	}
	return curves
}

// column returns the description of metric name of curve m: summary.json's,
// or one made from metrics.csv for a run that did not record it.
func (r *Run) column(m *CurveMetrics, name string) Column {
	if k := slices.IndexFunc(r.Summary.Columns, func(c Column) bool { return c.Name == name }); k >= 0 {
		return r.Summary.Columns[k]
	}
	_, db := m.Columns[name+"_db"]
	if name == "time" && r.Output.XAxis == "time" {
		return Column{Name: name, Label: "virtual time (s)", Axis: true}
	}
	return Column{Name: name, Label: name, Decibel: db}
}
