package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	t.Parallel()
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

// secAggFailing is FedAvg under SecAgg+ where half the clients drop out:
// some rounds fail below the threshold, and the deadline skips them.
const secAggFailing = `name: sa-fail
seed: 21
runs: 1
iterations: 5
data: {kind: blobs, agents: 30, samples: 20, dim: 4, test_samples: 50, blobs: {separation: 0.4}}
loss: {kind: softmax, classes: 3, rho: 0.001, optimum: none}
algorithm:
  kind: fedavg
  step_size: 0.5
  fedavg: {participants: 12, local_steps: 1, batch: 10, collect: {kind: deadline, seconds: 5}}
privacy:
  secure_aggregation: {timeout: 1, clip: 20, protocol: secagg+}
network: {latency: 0.05, step_time: {kind: fixed, value: 0.05}, dropout: 0.5}
output: {plot: false}
`

// A run's warning is told once: maple run prints it under its curve, and
// summary.json keeps it; the engine's log no longer repeats it on standard
// error as a WARN line (issue 30: the secure-aggregation threshold failure
// was printed twice).
func TestRunWarningIsPrintedOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	scenario := filepath.Join(dir, "sa.yaml")
	if err := os.WriteFile(scenario, []byte(secAggFailing), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := maple(t, "run", scenario, "--out", out)
	const warning = "some rounds failed below the secure-aggregation threshold"
	if code != 0 || strings.Count(stdout, warning) != 1 || stderr != "" {
		t.Fatalf("exit %d; the warning is on stdout %d times (want 1); stderr %q (want nothing)\n%s", code, strings.Count(stdout, warning), stderr, stdout)
	}
	var s rundir.Summary
	if err := json.Unmarshal(read(t, filepath.Join(out, rundir.SummaryFile)), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Curves) != 1 || len(s.Curves[0].Warnings) != 1 || !strings.Contains(s.Curves[0].Warnings[0], warning) {
		t.Errorf("summary.json's warnings %q, want the threshold failure", s.Curves[0].Warnings)
	}
}
