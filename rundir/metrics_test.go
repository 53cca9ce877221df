package rundir

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat"
)

func TestTableRows(t *testing.T) {
	tb := NewTable(10, 3, 2)
	if fmt.Sprint(tb.Iterations) != "[0 3 6 9 10]" {
		t.Fatalf("recorded iterations %v, want [0 3 6 9 10]", tb.Iterations)
	}
	for it, want := range map[int]int{0: 0, 3: 1, 9: 3, 10: 4, 4: -1, 11: -1} {
		if got := tb.Row(it); got != want {
			t.Errorf("row(%d) = %d, want %d", it, got, want)
		}
	}
	a, b := NewTable(2, 1, 1), NewTable(2, 1, 1)
	for r := 0; r < 3; r++ {
		a.Set(r, 0, float64(r))
		b.Set(r, 0, float64(r+2))
	}
	m := Mean([]*Table{a, b})
	if m.Get(0, 0) != 1 || m.Get(2, 0) != 3 {
		t.Errorf("mean rows %v", m.values)
	}
	// Two runs that differ by 2 in every cell: the sample standard
	// deviation is 2/√2 = √2.
	if sd := Std([]*Table{a, b}, m); sd.Get(0, 0) != math.Sqrt2 || sd.Get(2, 0) != math.Sqrt2 {
		t.Errorf("standard deviations %v, want √2", sd.values)
	}
	// Steady state over the last 2/3 of rows 1 and 3 (rows 1, 2 of the mean).
	if got := SteadyState(m, 0, 2.0/3); got != 2.5 {
		t.Errorf("steady state %v, want 2.5", got)
	}
	if Decibel(0.01) != -20 || !math.IsInf(Decibel(0), -1) {
		t.Error("decibel conversion")
	}
}

func TestNumberEncodesNonFiniteAsNull(t *testing.T) {
	for v, want := range map[float64]string{math.NaN(): "null", math.Inf(1): "null", 1.5: "1.5"} {
		got, err := Number(v).MarshalJSON()
		if err != nil || string(got) != want {
			t.Errorf("number(%v) = %s, %v; want %s", v, got, err, want)
		}
	}
}

// noisyRuns returns runs one-column tables over iterations 0…n whose dB
// values are f(iteration) plus, per run, an AR(1) wander of lag-1
// correlation phi and innovation deviation sd (in dB), and their mean.
func noisyRuns(r *rand.Rand, runs, n int, phi, sd float64, f func(it float64) float64) ([]*Table, *Table) {
	var tables []*Table
	for range runs {
		tb := NewTable(n, 1, 1)
		e := 0.0
		for row, it := range tb.Iterations {
			e = phi*e + sd*r.NormFloat64()
			tb.Set(row, 0, math.Pow(10, (f(float64(it))+e)/10))
		}
		tables = append(tables, tb)
	}
	return tables, Mean(tables)
}

func TestTrendDetection(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	// A curve still falling by 0.1 dB per iteration, 5 runs with a little
	// noise: over the last 10 iterations of 100 the mean's fitted change is
	// about −1 dB, and every run falls.
	runs, m := noisyRuns(r, 5, 100, 0, 0.05, func(it float64) float64 { return -0.1 * it })
	change, from, to, ok := FitTrend(runs, m, 0)
	if !ok || from != 90 || to != 100 || math.Abs(change+1) > 0.1 {
		t.Errorf("falling line: change %v over %d–%d, trending %v; want ≈ −1 dB over 90–100", change, from, to, ok)
	}
	// A flat curve, one falling by only 0.3 dB across the window, and a
	// falling curve with a single run (nothing to test it against).
	for name, c := range map[string]struct {
		runs int
		f    func(float64) float64
	}{
		"flat":        {5, func(float64) float64 { return -30 }},
		"small drift": {5, func(it float64) float64 { return -0.03 * it }},
		"single run":  {1, func(it float64) float64 { return -0.1 * it }},
	} {
		runs, m := noisyRuns(r, c.runs, 100, 0, 0.05, c.f)
		if _, _, _, ok := FitTrend(runs, m, 0); ok {
			t.Errorf("%s: flagged as trending", name)
		}
	}
	// Too few recorded iterations in the window: not tested.
	runs, m = noisyRuns(r, 5, 20, 0, 0, func(it float64) float64 { return -it })
	if _, _, _, ok := FitTrend(runs, m, 0); ok {
		t.Error("a window of 2 recorded iterations was tested")
	}
}

// A steady state whose runs wander with lag-1 correlation 0.9 (innovations
// of 1 dB) but have no trend. A regression on the mean curve alone flags
// nearly half such windows (141 of these 300); the test across runs is a
// t-test on independent slopes, whose false-alarm rate is trendAlpha = 1 %
// (about that: the slopes are nearly normal). At 1 %, 9 or more alarms in
// 300 series have probability below 1 %, hence the bound; the naive count
// is asserted above 15 %, far below what it gives.
func TestTrendIgnoresCorrelatedWander(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const series = 300
	alarms, naive := 0, 0
	for range series {
		runs, m := noisyRuns(r, 10, 300, 0.9, 1, func(float64) float64 { return -30 })
		if _, _, _, ok := FitTrend(runs, m, 0); ok {
			alarms++
		}
		if naiveTrend(m) {
			naive++
		}
	}
	t.Logf("flagged: %d of %d across runs, %d on the mean alone", alarms, series, naive)
	if alarms >= 9 || float64(naive)/series < 0.15 {
		t.Errorf("flat wandering curves flagged: %d of %d across runs, %d on the mean alone", alarms, series, naive)
	}
}

// naiveTrend tests the mean curve alone: ordinary least squares on its dB
// values, slope 3 standard errors from zero and a change above
// TrendMinChange.
func naiveTrend(tb *Table) bool {
	var x, y []float64
	for r, it := range tb.Iterations[270:] {
		x, y = append(x, float64(it)), append(y, Decibel(tb.Get(r+270, 0)))
	}
	alpha, beta := stat.LinearRegression(x, y, nil, false)
	var rss, sxx float64
	mx := stat.Mean(x, nil)
	for i := range x {
		rss += math.Pow(y[i]-alpha-beta*x[i], 2)
		sxx += (x[i] - mx) * (x[i] - mx)
	}
	se := math.Sqrt(rss/float64(len(x)-2)) / math.Sqrt(sxx)
	return math.Abs(beta*30) > TrendMinChange && math.Abs(beta) >= 3*se
}
