package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// cluster-test-fail is a family whose run 1 fails: with a scenario error
// when the seed is 1, else with a plain error. Its other runs succeed.
func init() {
	run.Register(run.Family{
		Family: scenarios.Family{
			Kind: "cluster-test-fail", Summary: "test family whose run 1 fails", Schemes: []string{"none"},
			Defaults: func(*scenarios.Scenario) any { return &struct{}{} },
			Validate: func(*scenarios.Validator, *scenarios.Scenario) {},
		},
		Columns: func(*scenarios.Scenario) []rundir.Column { return []rundir.Column{{Name: "x"}} },
		Run: func(j *run.Job, _ *inputs.Problem, _ *run.TraceSink) error {
			sc := j.Curve.Scenario
			switch {
			case j.Run == 1 && sc.Seed == 1:
				return j.Curve.Errorf("algorithm", "run 1 cannot go on")
			case j.Run == 1:
				return errors.New("boom")
			}
			j.Table = rundir.NewTable(sc.Iterations, sc.Output.Every, 1)
			for r := range j.Table.Iterations {
				j.Table.Set(r, 0, float64(r))
			}
			return nil
		},
	})
}

// A job that fails on a worker fails the plan with the worker's error, as
// it fails an in-process run: a scenario error reads the same, another
// error names the worker.
func TestFailingJobFailsThePlanWithTheWorkersError(t *testing.T) {
	t.Parallel()
	w := spawnWorker(t, workerOpts{slots: 3})
	path := filepath.Join(t.TempDir(), "fail.yaml")
	os.WriteFile(path, []byte("name: fail\nruns: 3\niterations: 3\nalgorithm: {kind: cluster-test-fail}\noutput: {plot: false}\n"), 0o644)
	for _, seed := range []string{"seed=1", "seed=2"} {
		spec := coordSpec{File: path, Sets: []string{seed}, Workers: []string{w.addr}}
		p, err := loadSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		_, local := run.Execute(p, t.TempDir(), run.Options{})
		if local == nil {
			t.Fatal("the in-process run did not fail")
		}
		_, remote := coordinate(t, spec)
		t.Logf("%s: in process: %v; on the cluster: %s", seed, local, remote)
		if scenarios.IsUserError(local) {
			if remote != "error user "+local.Error() {
				t.Errorf("%s: cluster error %q, want the scenario error %q", seed, remote, local)
			}
		} else if !strings.HasPrefix(remote, "error other "+local.Error()+" (on worker 127.0.0.1:") {
			t.Errorf("%s: cluster error %q, want %q on a worker", seed, remote, local)
		}
	}
}
