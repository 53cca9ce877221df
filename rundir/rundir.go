// Package rundir owns the run directory maple run writes: the names of its
// files, the metrics of a run and the summary of an execution, writing them
// atomically (a temporary file renamed into place, figures staged in a
// hidden directory), creating the directory, and reading it back. The
// runner writes through it; the report, maple table and the trace commands
// read through it.
package rundir

import "maple/actors/trace"

// The files of a run directory.
const (
	// ScenarioFile is the resolved scenario, with the command-line
	// overrides applied: it runs again from anywhere.
	ScenarioFile = "scenario.yaml"
	// MetricsFile holds the metrics of every curve, averaged over its runs.
	MetricsFile = "metrics.csv"
	// SummaryFile summarizes every curve. It is written after metrics.csv
	// and, when there are figures, once before them (marked
	// Summary.Pending) and once after: a summary.json without "pending"
	// marks a complete directory.
	SummaryFile = "summary.json"
	// ProvenanceFile records what produced the directory.
	ProvenanceFile = "provenance.json"
	// TraceFile is the compressed message trace (with --trace).
	TraceFile = trace.StoreFile
)

// OpenTrace opens the message trace of the run directory dir, compressed
// (TraceFile) or plain JSON lines. If dir has neither, the error wraps
// fs.ErrNotExist.
func OpenTrace(dir string) (*trace.Trace, error) { return trace.Open(dir) }
