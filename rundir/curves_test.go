package rundir

import (
	"math"
	"slices"
	"testing"

	"maple/scenarios"
)

// A run directory read back rebuilds the curves maple run averaged, bit for
// bit: metrics.csv writes the shortest representation that reads back
// exactly. Columns come from summary.json; a curve without a column (the
// noise-free curve's noise) does not get it; a curve's own
// output.steady_state is applied. Every curve's columns come in
// metrics.csv's order, the first curve's own.
func TestCurvesReadBackExactly(t *testing.T) {
	dir := t.TempDir()
	msd := Column{Name: "msd", Decibel: true, Label: "MSD (dB)"}
	noise := Column{Name: "noise", Label: "noise"}
	clock := Column{Name: "time", Label: "virtual time (s)", Axis: true}
	table := func(cols int, f func(row, col int) float64) *Table {
		t := NewTable(4, 2, cols)
		for r := range t.Iterations {
			for c := range cols {
				t.Set(r, c, f(r, c))
			}
		}
		return t
	}
	in := []Curve{
		{Spec: &scenarios.CurveSpec{Label: "clear"}, Cols: []Column{msd, clock}, Runs: 3,
			Mean: table(2, func(r, c int) float64 { return 1 / (3 + float64(r+c)) }), Std: table(2, func(r, c int) float64 { return 0.1 / 7 * float64(r) })},
		{Spec: &scenarios.CurveSpec{Label: "noisy", Settings: []scenarios.Setting{{Field: "output.steady_state", Value: "0.5"}}},
			Cols: []Column{msd, noise, clock}, Runs: 3,
			Mean: table(3, func(r, c int) float64 { return math.Pi * float64(r*c+1) }), Std: table(3, func(r, c int) float64 { return math.E })},
	}
	writeRun(t, dir, "{steady_state: 0.25, x_axis: time}", in)
	r, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := r.Curves()
	if len(out) != 2 {
		t.Fatalf("%d curves, want 2", len(out))
	}
	order := [][]Column{{msd, clock}, {msd, clock, noise}}
	for i, c := range out {
		want := in[i]
		if c.Spec.Label != want.Spec.Label || c.Runs != want.Runs || !slices.Equal(c.Cols, order[i]) ||
			!slices.Equal(c.Spec.Settings, want.Spec.Settings) || !slices.Equal(c.Mean.Iterations, want.Mean.Iterations) {
			t.Errorf("curve %d: %+v, want %+v", i, c, want)
			continue
		}
		for row := range c.Mean.Iterations {
			for k, col := range c.Cols {
				w := slices.Index(want.Cols, col)
				if c.Mean.Get(row, k) != want.Mean.Get(row, w) || c.Std.Get(row, k) != want.Std.Get(row, w) {
					t.Errorf("curve %d row %d %s: %v ± %v, want %v ± %v", i, row, col.Name,
						c.Mean.Get(row, k), c.Std.Get(row, k), want.Mean.Get(row, w), want.Std.Get(row, w))
				}
			}
		}
	}
	if got := []float64{out[0].Spec.Scenario.Output.SteadyState, out[1].Spec.Scenario.Output.SteadyState}; got[0] != 0.25 || got[1] != 0.5 {
		t.Errorf("steady-state fractions %v, want the scenario's 0.25 and the curve's own 0.5", got)
	}
	// A run of an older maple recorded no columns: metrics.csv names them,
	// the dB column marks a mean-square deviation, output.x_axis the time.
	r.Summary.Columns = nil
	if got := r.Curves()[1].Cols; !slices.Equal(got, []Column{{Name: "msd", Label: "msd", Decibel: true}, clock, {Name: "noise", Label: "noise"}}) {
		t.Errorf("columns without summary.json's: %+v", got)
	}
}
