package cli

import (
	"strings"
	"testing"
	"unicode/utf8"

	"maple/rundir"
	"maple/scenarios/run"
)

// The steady-state table maple run prints starts every curve's values in one
// column, after the longest label (the labels of a sweep run past 30
// characters, where the column used to be fixed); a label longer than
// maxLabelWidth has its line to itself and its values go on the next, in the
// same column. Each curve's warnings follow it once.
func TestSteadyStateTableIsAligned(t *testing.T) {
	long := "FedAvg, algorithm.step_size=0.04, μ=0.1, network.dropout=0.3" // 60 characters
	labels := []string{"a", "SecAgg+, network.dropout=0.3, clip=20", long, "noisy, σ=1"}
	s := &rundir.Summary{}
	for i, l := range labels {
		s.Curves = append(s.Curves, rundir.CurveSummary{Label: l, SteadyState: map[string]rundir.Number{
			"msd": rundir.Number(0.5 / float64(i+1)), "msd_db": -3, "accuracy": 0.75}})
	}
	s.Curves[1].Warnings = []string{"some rounds failed below the secure-aggregation threshold"}
	var out strings.Builder
	printResult(&out, "runs/x", &run.Result{Summary: s})
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	column := -1
	values := 0
	for i, line := range lines {
		k := strings.Index(line, "accuracy=")
		if k < 0 {
			continue
		}
		values++
		col := utf8.RuneCountInString(line[:k])
		if column < 0 {
			column = col
		}
		if col != column {
			t.Errorf("line %d starts its values at column %d, the first at %d:\n%s", i+1, col, column, out.String())
		}
		label := strings.TrimSpace(line[:k])
		if label == "" && (i == 0 || strings.TrimSpace(lines[i-1]) != long) {
			t.Errorf("line %d has values without a label, not after the long label:\n%s", i+1, out.String())
		}
	}
	if values != len(labels) {
		t.Errorf("%d lines of values, want %d:\n%s", values, len(labels), out.String())
	}
	if want := 2 + utf8.RuneCountInString(labels[1]) + 1; column != want {
		t.Errorf("the values start at column %d, want %d (after the longest label that fits):\n%s", column, want, out.String())
	}
	if n := strings.Count(out.String(), "secure-aggregation threshold"); n != 1 {
		t.Errorf("the warning is printed %d times, want once:\n%s", n, out.String())
	}
	// Short labels keep the column they always had, after 30 characters.
	out.Reset()
	printResult(&out, "runs/x", &run.Result{Summary: &rundir.Summary{Curves: s.Curves[3:]}})
	if got, want := out.String(), "  noisy, σ=1"+strings.Repeat(" ", 21)+"accuracy=0.75 msd_db=-3\n"; !strings.HasSuffix(got, want) {
		t.Errorf("a short label printed as\n%s\nwant\n%s", got, want)
	}
}
