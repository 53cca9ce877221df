// Package cputime measures the wall and CPU time of computations, for the
// benchmarks that compare the actor engine with the reference in the same
// run. On a machine that other work also loads, wall time is stretched by
// waiting for a core — and more for the computation that allocates more,
// since its garbage collection waits too — while CPU time is not.
package cputime

import "time"

// Mark is a point in time: the wall clock and the CPU time the process had
// used.
type Mark struct {
	wall time.Time
	cpu  time.Duration
}

// Now returns the current mark.
func Now() Mark { return Mark{wall: time.Now(), cpu: Process()} }

// Total accumulates the wall and CPU time of several computations.
type Total struct {
	// Wall is the elapsed wall time, and CPU the user and system time of
	// every thread of the process (the garbage collector's included).
	Wall, CPU time.Duration
}

// Since adds the time elapsed since m.
func (t *Total) Since(m Mark) {
	t.Wall += time.Since(m.wall)
	t.CPU += Process() - m.cpu
}

// Reporter is what a benchmark reports its metrics to: *testing.B.
type Reporter interface {
	ReportMetric(n float64, unit string)
}

// ReportRatio reports the ratio of a's wall time to b's under unit and, where
// the CPU time can be read, the ratio of their CPU times under unit + "-cpu".
func ReportRatio(r Reporter, a, b Total, unit string) {
	r.ReportMetric(float64(a.Wall)/float64(b.Wall), unit)
	if b.CPU > 0 {
		r.ReportMetric(float64(a.CPU)/float64(b.CPU), unit+"-cpu")
	}
}
