package rundir

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Column is one metric of a family's runs.
type Column struct {
	// Name is the CSV column name.
	Name string `json:"name"`
	// Decibel marks a mean-square deviation: it is averaged over runs on the
	// linear scale and also reported as 10·log10 of that mean.
	Decibel bool `json:"decibel,omitempty"`
	// Label titles its plot.
	Label string `json:"label"`
	// Axis marks a cumulative count (updates, messages, bytes …): besides
	// its own figure against the iteration, every other column is also
	// drawn against it, as NAME-by-AXIS.png, so that curves whose
	// iterations cost differently can be compared per unit of that count.
	Axis bool `json:"axis,omitempty"`
}

// Table holds the metrics of one run at the recorded iterations: 0 (the
// initial model), every Every-th iteration, and the last one.
type Table struct {
	// Iterations are the recorded iterations, one per row.
	Iterations []int
	cols       int
	values     []float64 // row-major, len(iterations)×cols
	// diverged is the first iteration a non-finite value was set at, if
	// hasDiverged.
	diverged    int
	hasDiverged bool
}

// NewTable returns the empty (NaN) table of a run of total iterations
// recorded every every-th, with cols metrics.
func NewTable(total, every, cols int) *Table {
	t := &Table{cols: cols}
	for i := 0; i <= total; i += every {
		t.Iterations = append(t.Iterations, i)
	}
	if t.Iterations[len(t.Iterations)-1] != total {
		t.Iterations = append(t.Iterations, total)
	}
	t.values = make([]float64, len(t.Iterations)*cols)
	for i := range t.values {
		t.values[i] = math.NaN()
	}
	return t
}

// Row returns the row of iteration i, or -1 if i is not recorded.
func (t *Table) Row(i int) int {
	every := 1
	if len(t.Iterations) > 1 {
		every = t.Iterations[1]
	}
	r := i / every
	switch {
	case i%every == 0 && r < len(t.Iterations) && t.Iterations[r] == i:
		return r
	case i == t.Iterations[len(t.Iterations)-1]:
		return len(t.Iterations) - 1
	}
	return -1
}

// SetBound stores a bound as the metric col of row — an accountant's ε,
// which is +Inf where nothing bounds it: unlike Set, an infinite bound is
// not a divergence. A NaN still is.
func (t *Table) SetBound(row, col int, v float64) {
	if math.IsInf(v, 1) {
		t.values[row*t.cols+col] = v
		return
	}
	t.Set(row, col, v)
}

// Set stores the metric col of row, noting the first non-finite value.
func (t *Table) Set(row, col int, v float64) {
	t.values[row*t.cols+col] = v
	if (math.IsNaN(v) || math.IsInf(v, 0)) && (!t.hasDiverged || t.Iterations[row] < t.diverged) {
		t.diverged, t.hasDiverged = t.Iterations[row], true
	}
}

// DivergedAt returns the first recorded iteration at which a metric was set
// to a value that is not finite: the run diverged there. Cells a family
// never fills (after an early stop, say) do not count.
func (t *Table) DivergedAt() (int, bool) { return t.diverged, t.hasDiverged }

// Get returns the metric col of row.
func (t *Table) Get(row, col int) float64 { return t.values[row*t.cols+col] }

// Mean averages the tables of the runs of one curve cell by cell, in run
// order, so the result does not depend on which run finished first.
func Mean(runs []*Table) *Table {
	out := &Table{Iterations: runs[0].Iterations, cols: runs[0].cols, values: make([]float64, len(runs[0].values))}
	for _, t := range runs {
		for i, v := range t.values {
			out.values[i] += v
		}
	}
	for i := range out.values {
		out.values[i] /= float64(len(runs))
	}
	return out
}

// Std returns the sample standard deviation across the runs' tables, cell
// by cell, in run order (NaN with a single run, where it is undefined).
func Std(runs []*Table, mean *Table) *Table {
	out := &Table{Iterations: mean.Iterations, cols: mean.cols, values: make([]float64, len(mean.values))}
	for _, t := range runs {
		for i, v := range t.values {
			d := v - mean.values[i]
			out.values[i] += d * d
		}
	}
	for i := range out.values {
		out.values[i] = math.Sqrt(out.values[i] / float64(len(runs)-1))
	}
	return out
}

// Decibel converts a linear mean-square value to dB.
func Decibel(x float64) float64 { return 10 * math.Log10(x) }

// SteadyState averages the last fraction of a curve's recorded rows (at least
// one), linearly; dB columns are converted by the caller.
func SteadyState(t *Table, col int, fraction float64) float64 {
	n := len(t.Iterations)
	k := max(1, int(math.Round(fraction*float64(n))))
	var s float64
	for r := n - k; r < n; r++ {
		s += t.Get(r, col)
	}
	return s / float64(k)
}

// The steady-state check: a curve "still trends" when the straight line
// fitted to its dB values over the last trendWindow of the iterations
// changes by more than TrendMinChange across that window, and the slope of
// the (linear) mean is significantly different from zero.
//
//   - trendWindow is the "last 10 % of the iterations".
//   - TrendMinChange: the bundled figures are read to 0.1 dB and the curves
//     they compare are often 0.5–1 dB apart (docs/reproduction.md); a curve
//     still moving by half a decibel across the final tenth has a
//     steady-state mean off by about as much as those differences.
//   - Significance: even at the steady state the Monte-Carlo mean wanders,
//     and its wanders are correlated in time over spans longer than any
//     lag-1 model of a short window captures (Fig. 4's random-noise centroid
//     MSD, flat from iteration 200, drifts by ±2.5 dB across 100-iteration
//     windows), so a regression on the mean curve alone calls them trends.
//     The runs, however, are independent: the least-squares slope is linear
//     in the data, so the mean curve's slope is the mean of the runs'
//     slopes, and those are independent samples whatever the correlation in
//     time. Student's t-test on them, two-sided at trendAlpha, needs no
//     model of the wander. trendAlpha = 0.001: a figure has up to about 40
//     (curve, metric) pairs, so fewer than 4 % of steady figures show a
//     false alarm. With a single run there is nothing to test.
const (
	trendWindow    = 0.1
	TrendMinChange = 0.5
	trendAlpha     = 0.01
	trendMinPoints = 4 // recorded iterations in the window needed for a fit
)

// FitTrend tests column col of a curve — its runs and their mean — over the
// recorded iterations in the last trendWindow of the run. It returns the
// change of the line fitted to the mean's dB values across the window, the
// window's first and last iteration, and whether the curve still trends by
// the criteria above. Windows with a value that is not finite (a diverged
// run, reported as such) are not tested.
func FitTrend(runs []*Table, mean *Table, col int) (change float64, from, to int, trending bool) {
	last := mean.Iterations[len(mean.Iterations)-1]
	start := last - int(math.Ceil(trendWindow*float64(last)))
	var x, rows []float64
	for r, it := range mean.Iterations {
		if it >= start {
			x, rows = append(x, float64(it)), append(rows, float64(r))
		}
	}
	if len(x) < trendMinPoints {
		return 0, 0, 0, false
	}
	column := func(t *Table, db bool) ([]float64, bool) {
		y := make([]float64, len(rows))
		for i, r := range rows {
			y[i] = t.Get(int(r), col)
			if db {
				y[i] = Decibel(y[i])
			}
			if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
				return nil, false
			}
		}
		return y, true
	}
	y, ok := column(mean, true)
	if !ok {
		return 0, 0, 0, false
	}
	from, to = int(x[0]), int(x[len(x)-1])
	_, beta := stat.LinearRegression(x, y, nil, false)
	change = beta * float64(to-from)
	if len(runs) < 2 || math.Abs(change) <= TrendMinChange {
		return change, from, to, false
	}
	slopes := make([]float64, len(runs))
	for i, t := range runs {
		y, ok := column(t, true)
		if !ok {
			return change, from, to, false
		}
		_, slopes[i] = stat.LinearRegression(x, y, nil, false)
	}
	m, sd := stat.MeanStdDev(slopes, nil)
	if sd == 0 {
		return change, from, to, m != 0 && (m < 0) == (change < 0)
	}
	tStat := m / (sd / math.Sqrt(float64(len(runs))))
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(runs) - 1)}.Quantile(1 - trendAlpha/2)
	return change, from, to, math.Abs(tStat) >= q && (tStat < 0) == (change < 0)
}
