package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// cancelRun, set by a test, is what the test-cancel family's run calls.
var cancelRun func()

// test-cancel is a family whose run is interrupted while it computes: it
// cancels the execution's context and fails as a solve that observed it
// does, with a scenario error that quotes the cause as text.
func init() {
	Register(Family{
		Family: scenarios.Family{
			Kind: "test-cancel", Summary: "test family", Schemes: []string{"none"},
			Defaults: func(*scenarios.Scenario) any { return &struct{}{} },
			Validate: func(*scenarios.Validator, *scenarios.Scenario) {},
		},
		Columns: func(*scenarios.Scenario) []rundir.Column { return []rundir.Column{{Name: "value"}} },
		Run: func(j *Job, _ *inputs.Problem, _ *TraceSink) error {
			cancelRun()
			return j.Curve.Errorf("loss", "cannot compute the minimizer w^o: %v", j.Context().Err())
		},
	})
}

// A run that stops because the execution was interrupted is an unfinished
// run, not a user error, whatever its error says: the execution ends as
// interrupted, writing nothing (no run finished), and exits 130, not 2.
func TestComputationStoppedByInterruptionIsNotAnError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelRun = cancel
	_, err := ExecuteContext(ctx, plan(t, "name: x\nruns: 3\nloss: {optimum: none}\nalgorithm: {kind: test-cancel}\n"), t.TempDir(), Options{Workers: 1})
	var intr *Interrupted
	if !errors.As(err, &intr) || intr.Completed != 0 || scenarios.IsUserError(err) {
		t.Errorf("error %v (%T), want *Interrupted with nothing written", err, err)
	}
}

// The checks ExecuteContext makes before running read the data files under
// the execution's context: interrupted while reading them, the execution
// ends as interrupted, with nothing written, instead of reading on (the same
// plan runs to completion without the interruption).
func TestChecksBeforeRunningObserveTheContext(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.svm"), []byte("1 1:1\n-1 1:2\n1 1:3\n-1 1:4\n"), 0o644)
	p, err := scenarios.Parse([]byte("name: x\ndata: {kind: libsvm, agents: 2, samples: 1, test_samples: 0, libsvm: {file: d.svm}}\nloss: {kind: logistic, optimum: none}\nalgorithm: {kind: test-flat}\noutput: {plot: false}\n"),
		filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	_, err = ExecuteContext(ctx, p, out, Options{})
	var intr *Interrupted
	if !errors.As(err, &intr) || intr.Completed != 0 {
		t.Errorf("cancelled during the checks: %v, want *Interrupted with nothing written", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("the run directory holds %v", entries)
	}
	if _, err := ExecuteContext(context.Background(), p, t.TempDir(), Options{}); err != nil {
		t.Errorf("not interrupted: %v", err)
	}
}
