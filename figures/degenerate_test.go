package figures

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"maple/rundir"
	"maple/scenarios"
)

// awkward are the values degenerate data are made of: zeros, signs, the
// ends of the floating-point range, subnormals, neighbours one ULP apart,
// and the non-finite values of a diverged run.
var awkward = []float64{
	0, 1, -1, 1e-300, 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, 1e308,
	0.1, math.Nextafter(0.1, 1), math.Nextafter(0.1, 2), -30, math.Nextafter(-30, 0),
	1e15, 1e15 + 0.125, 1 << 53, math.NaN(), math.Inf(1), math.Inf(-1),
}

// pick returns an awkward value, or a value near the previous one so that
// curves can be equal to the last bit or a few ULPs apart.
func pick(r *rand.Rand, prev float64) float64 {
	switch r.IntN(4) {
	case 0:
		return prev
	case 1:
		return math.Nextafter(prev, math.Inf(1))
	}
	return awkward[r.IntN(len(awkward))]
}

// Every tick marker returns a bounded number of finite ticks for any range
// gonum can hand it, ordinary or not; and for an ordinary range the same
// ticks as before the bound existed (labelled multiples of a round step).
func TestTicksTerminateOnAnyRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 50000 {
		lo := pick(r, 0)
		hi := pick(r, lo)
		if r.IntN(2) == 0 {
			hi = lo + math.Abs(pick(r, 1))
		}
		for _, m := range []plot.Ticker{linearTicks{}, logTicks{}} {
			ticks := m.Ticks(lo, hi)
			if len(ticks) > maxTicks+9 { // the last decade adds up to 9 beyond the bound
				t.Fatalf("%T.Ticks(%v, %v): %d ticks", m, lo, hi, len(ticks))
			}
			for _, tk := range ticks {
				if !finite(tk.Value) {
					t.Fatalf("%T.Ticks(%v, %v): a tick at %v", m, lo, hi, tk.Value)
				}
			}
		}
	}
	// The range of two curves equal but for their last bits: before the
	// bound, the tick counter stopped advancing and the loop allocated
	// without end.
	lo := -23.979400086720375
	if ticks := (linearTicks{}).Ticks(lo, math.Nextafter(lo, 0)); len(ticks) != 2 || ticks[0].Label == "" {
		t.Errorf("a range two ULPs wide: ticks %v, want its two ends labelled", ticks)
	}
	if n := len((logTicks{}).Ticks(1e-300, 1e300)); n > maxTicks {
		t.Errorf("600 decades: %d ticks", n)
	}
}

// degenerateCurves returns curves of random degenerate data: 1 to 3 curves
// of 1 to 4 columns (a dB metric, a plain one, a cumulative axis), of 0 to
// 30 iterations, with awkward means and deviations, sweeping a step size
// over values that may repeat, and with 1 or 3 runs (no band, or a band).
func degenerateCurves(r *rand.Rand) []rundir.Curve {
	cols := []rundir.Column{{Name: "msd", Decibel: true, Label: "MSD (dB)"}}
	if r.IntN(2) == 0 {
		cols = append(cols, rundir.Column{Name: "error", Label: "test error"})
	}
	if r.IntN(2) == 0 {
		cols = append(cols, rundir.Column{Name: "updates", Label: "updates", Axis: true})
	}
	total := []int{0, 1, 2, 3, 10, 30}[r.IntN(6)]
	steps := []string{"0.1", "0.2", "0.4", "0.4", "1e-300", "1e300"}
	n := 1 + r.IntN(3)
	if r.IntN(3) == 0 {
		n = 4 // enough values for a sweep figure
	}
	curves := make([]rundir.Curve, n)
	for i := range curves {
		runs := []int{1, 3}[r.IntN(2)]
		mean, std := rundir.NewTable(total, 1, len(cols)), rundir.NewTable(total, 1, len(cols))
		prev := pick(r, 0)
		for row := range mean.Iterations {
			for k := range cols {
				prev = pick(r, prev)
				mean.Set(row, k, prev)
				std.Set(row, k, math.Abs(pick(r, prev)))
			}
		}
		step := steps[r.IntN(len(steps))]
		sc := &scenarios.Scenario{Output: scenarios.Output{SteadyState: 0.1}}
		curves[i] = rundir.Curve{
			Spec: &scenarios.CurveSpec{
				Label:    "step_size=" + step + ", c" + strconv.Itoa(i),
				Settings: []scenarios.Setting{{Field: "algorithm.step_size", Value: step}, {Field: "privacy.scheme", Value: "s" + strconv.Itoa(i)}},
				Scenario: sc,
			},
			Cols: cols, Runs: runs, Mean: mean, Std: std,
		}
	}
	return curves
}

// Drawing terminates for any data: flat curves, one point, curves equal to
// the last bit, ±Inf and NaN cells, values at the ends of the floating-point
// range, repeated sweep values — in both the dB and the linear style, with
// group_by. Every figure it lists is written, none twice.
func TestFiguresOfDegenerateData(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	cases := 40
	if raceEnabled {
		cases = 6 // the same first six cases: the seed is fixed
	}
	for i := range cases {
		curves := degenerateCurves(r)
		plan := &scenarios.Plan{Base: &scenarios.Scenario{Name: "degenerate", Output: scenarios.Output{
			Linear: r.IntN(2) == 0, PlotFrom: r.IntN(2),
		}}}
		if r.IntN(3) == 0 {
			plan.Base.Output.GroupBy = "privacy.scheme"
		}
		dir := t.TempDir()
		files, err := Write(context.Background(), dir, plan, curves)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		checkWritten(t, fmt.Sprint("case ", i), dir, files)
	}
}

// checkWritten checks that files lists every file of dir once, each
// non-empty, a PNG and an SVG per figure.
func checkWritten(t *testing.T, name, dir string, files []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if info, err := e.Info(); err != nil || info.Size() == 0 {
			t.Errorf("%s: %s is empty (%v)", name, e.Name(), err)
		}
		got = append(got, e.Name())
	}
	want := slices.Sorted(slices.Values(files))
	if !slices.Equal(got, want) || len(files)%2 != 0 {
		t.Errorf("%s: wrote %v, listed %v", name, got, files)
	}
}

// A figure of 10⁶ points (a run of 10⁶ recorded iterations) is drawn;
// under the race detector, 10⁵ (the same paths: the line is decimated to
// a few points per slice of the axis either way).
func TestFigureOfAMillionPoints(t *testing.T) {
	total := 1_000_000
	if raceEnabled {
		total = 100_000
	}
	cols := []rundir.Column{{Name: "msd", Decibel: true, Label: "MSD (dB)"}}
	mean, std := rundir.NewTable(total, 1, 1), rundir.NewTable(total, 1, 1)
	for row := range mean.Iterations {
		mean.Set(row, 0, 1+math.Sin(float64(row)))
		std.Set(row, 0, 0)
	}
	sc := &scenarios.Scenario{Output: scenarios.Output{SteadyState: 0.1}}
	curves := []rundir.Curve{{Spec: &scenarios.CurveSpec{Label: "big", Scenario: sc}, Cols: cols, Runs: 1, Mean: mean, Std: std}}
	dir := t.TempDir()
	files, err := Write(context.Background(), dir, &scenarios.Plan{Base: &scenarios.Scenario{Name: "big"}}, curves)
	if err != nil {
		t.Fatal(err)
	}
	checkWritten(t, "10⁶ points", dir, files)
}

// Drawing stops before its next figure once its context is done, with the
// context's error.
func TestFiguresStopWhenCancelled(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	files, err := Write(ctx, dir, &scenarios.Plan{Base: &scenarios.Scenario{Name: "x"}}, degenerateCurves(r))
	if !errors.Is(err, context.Canceled) || len(files) != 0 {
		t.Errorf("cancelled: files %v, error %v; want none and context.Canceled", files, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("cancelled drawing wrote %v", filepath.Join(dir, entries[0].Name()))
	}
}

// A line of 10⁶ points is drawn from at most four points per slice of the x
// axis — its first, last, lowest and highest — so its ends and extremes stay.
func TestDecimateKeepsTheEnvelope(t *testing.T) {
	var pts plotter.XYs
	for i := range 1_000_000 {
		pts = append(pts, plotter.XY{X: float64(i), Y: math.Sin(float64(i) / 1000)})
	}
	pts[500_000].Y = 7 // a spike
	d := decimate(pts, false)
	if len(d) > 4*lineBuckets || d[0] != pts[0] || d[len(d)-1] != pts[len(pts)-1] || !slices.Contains(d, pts[500_000]) {
		t.Errorf("%d points from %d: first %v, last %v, spike kept %v", len(d), len(pts), d[0], d[len(d)-1], slices.Contains(d, pts[500_000]))
	}
	for i := 1; i < len(d); i++ {
		if d[i].X <= d[i-1].X {
			t.Fatalf("points out of order at %d: %v after %v", i, d[i], d[i-1])
		}
	}
	if short := pts[:maxLinePoints]; len(decimate(short, false)) != maxLinePoints {
		t.Error("a line of maxLinePoints points was decimated")
	}
}
