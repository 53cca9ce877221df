package all

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"maple/actors"
	afedavg "maple/actors/fedavg"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// TestMain checks that executions stop every actor and worker goroutine.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func plan(t *testing.T, src string, overrides ...string) *scenarios.Plan {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "t.yaml", t.TempDir(), overrides)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const small = `name: small
runs: 3
iterations: 25
data: {agents: 12, samples: [20, 30]}
algorithm:
  kind: fedavg
  step_size: 0.05
  fedavg: {participants: 4, local_steps: [1, 3], batch: [1, 5]}
`

func execute(t *testing.T, p *scenarios.Plan, opts run.Options) (string, *run.Result) {
	t.Helper()
	dir := t.TempDir()
	res, err := run.Execute(p, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return dir, res
}

// onBothEngines executes p on the actor engine and on the reference, fails
// the test (naming what) unless they write the same metrics.csv byte for
// byte, and returns the actor engine's run directory and result.
func onBothEngines(t *testing.T, p *scenarios.Plan, what string) (string, *run.Result) {
	t.Helper()
	a, res := execute(t, p, run.Options{Engine: run.Actors})
	r, _ := execute(t, p, run.Options{Engine: run.Reference})
	ma, _ := os.ReadFile(filepath.Join(a, "metrics.csv"))
	mr, _ := os.ReadFile(filepath.Join(r, "metrics.csv"))
	if !bytes.Equal(ma, mr) {
		t.Errorf("%s: metrics differ between engines:\n%s\n---\n%s", what, ma, mr)
	}
	return a, res
}

// The actor engine and the actor-free reference compute the same iterates in
// the same order, so their metrics files are identical byte for byte.
func TestEnginesWriteIdenticalMetrics(t *testing.T) {
	t.Parallel()
	for _, extra := range []string{"privacy.scheme=none", "privacy.scheme=update-noise"} {
		onBothEngines(t, plan(t, small, extra), extra)
	}
}

func TestRunDirectoryContents(t *testing.T) {
	t.Parallel()
	p := plan(t, small+"sweep:\n  algorithm.step_size: [0.05, 0.02]\n")
	dir, res := execute(t, p, run.Options{Workers: 2})
	for _, f := range []string{"scenario.yaml", "metrics.csv", "summary.json", "msd.png", "msd.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "metrics.csv"))
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if lines[0] != "curve,iteration,msd,msd_std,msd_db" || len(lines) != 1+2*26 {
		t.Errorf("metrics.csv: header %q, %d lines (want 53)", lines[0], len(lines))
	}
	if !strings.HasPrefix(lines[27], "step_size=0.02,0,") {
		t.Errorf("second curve should start at line 28: %q", lines[27])
	}
	s := res.Summary
	if len(s.Curves) != 2 || len(s.Curves[0].RunSeeds) != 3 || s.Curves[0].MessagesPerRun != 1+25*(2+2*4) {
		t.Errorf("summary: %d curves, run seeds %v, messages %v (want 251: Start and per round Tick, Done, 4+4 models)",
			len(s.Curves), s.Curves[0].RunSeeds, s.Curves[0].MessagesPerRun)
	}
	if s.Curves[0].RunSeeds[1] != s.Curves[1].RunSeeds[1] {
		t.Error("run r of every curve must share its seed (common random numbers)")
	}
	reload, err := scenarios.LoadFile(filepath.Join(dir, "scenario.yaml"), nil)
	if err != nil || len(reload.Curves) != 2 {
		t.Errorf("the resolved scenario does not reload to the same plan: %v", err)
	}
}

func TestClassificationReportsTestError(t *testing.T) {
	t.Parallel()
	src := `name: cls
runs: 2
iterations: 200
data: {kind: logistic, agents: 10, samples: [40, 60], dim: 5, test_samples: 2000}
loss: {kind: logistic, rho: 0.001}
algorithm:
  kind: fedavg
  step_size: 0.2
  fedavg: {participants: 5, local_steps: [1, 3], batch: [5, 10]}
`
	_, res := execute(t, plan(t, src), run.Options{})
	c := res.Summary.Curves[0]
	initial := 1.0 // the all-zero model scores every sample as an error
	if e := float64(c.Final["test_error"]); !(e > 0 && e < 0.45 && e < initial) {
		t.Errorf("final test error %v: training should beat chance", e)
	}
	if c.Details["solver"] == nil {
		t.Error("the summary should report how w^o was solved")
	}
}

func TestLIBSVMData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for n := 0; n < 200; n++ {
		label := "+1"
		if n%3 == 0 {
			label = "-1"
		}
		fmt.Fprintf(&b, "%s 1:%d 3:%g\n", label, n%5, float64(n%7)/7)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.svm"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `name: svm
iterations: 5
data: {kind: libsvm, agents: 4, samples: [1, 2], dim: 3, test_samples: 40, libsvm: {file: d.svm}}
algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 2}}
`
	p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Execute(p, t.TempDir(), run.Options{}); err != nil {
		t.Fatal(err)
	}
	p.Curves[0].Scenario.Data.LIBSVM.File = "missing.svm"
	_, err = run.Execute(p, t.TempDir(), run.Options{})
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "data.libsvm.file: missing LIBSVM file") ||
		!strings.Contains(err.Error(), "get it from https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html") {
		t.Errorf("missing LIBSVM file: %v", err)
	}
}

// A separate test file (ijcnn1.t for ijcnn1.tr) is the whole test set: no
// training sample is held out, all 200 are dealt to the agents, and a missing
// test file says where to get it.
func TestLIBSVMTestFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, n int) {
		var b strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "%+d 1:%d 3:%g\n", 1-2*(i%2), i%5, float64(i%7)/7)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("d.svm", 200)
	write("d.t", 30)
	src := `name: svm
iterations: 5
data: {kind: libsvm, agents: 4, samples: [1, 2], dim: 3, libsvm: {file: d.svm, test_file: d.t}}
algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 2}}
`
	p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := p.Curves[0]
	if got := c.Scenario.Data.TestSamples; got != 0 {
		t.Errorf("test_samples resolved to %d with a test file, want 0", got)
	}
	prob, err := inputs.BuildProblem(context.Background(), c, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	train := 0
	for _, s := range prob.Sets {
		train += s.Len()
	}
	if train != 200 || prob.Test.Len() != 30 {
		t.Errorf("%d training and %d test samples, want 200 and 30", train, prob.Test.Len())
	}
	if _, err := scenarios.Parse([]byte(src), "s.yaml", dir, []string{"data.test_samples=10"}); err == nil || !strings.Contains(err.Error(), "data.test_samples") {
		t.Errorf("test_samples with a test file: %v", err)
	}
	c.Scenario.Data.LIBSVM.TestFile = "d.missing.t"
	if _, err := inputs.BuildProblem(context.Background(), c, dir, 1); !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "data.libsvm.test_file: missing LIBSVM file") {
		t.Errorf("missing test file: %v", err)
	}
}

// failing is a server behaviour that fails in round 2.
type failing struct{ afedavg.ServerParts }

func (f *failing) Receive(ctx *actors.Context, m proto.Message) error {
	if ctx.Round() == 2 {
		return errors.New("simulated fault")
	}
	complete, err := f.Handle(ctx, m)
	if err == nil && complete {
		f.Core.Combine()
		f.EndRound(ctx)
	}
	return err
}

func init() {
	afedavg.RegisterServer(afedavg.Server{Name: "test-failing", Behaviour: func(p afedavg.ServerParts) actors.Behaviour { return &failing{p} }, ActorOnly: true})
}

func TestActorFailureStopsTheExecution(t *testing.T) {
	t.Parallel()
	_, err := run.Execute(plan(t, small, "algorithm.fedavg.server=test-failing"), t.TempDir(), run.Options{})
	var f *actors.Failure
	if !errors.As(err, &f) || scenarios.IsUserError(err) {
		t.Fatalf("Execute returned %v, want an actor failure", err)
	}
	for _, want := range []string{`curve "small, server=test-failing", run 0`, "actor server failed in round 2 handling Tick", "simulated fault"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestUserErrorsBeforeRunning(t *testing.T) {
	t.Parallel()
	cases := []struct {
		overrides []string
		opts      run.Options
		want      string
	}{
		{nil, run.Options{Engine: run.Reference, Trace: true}, "trace: tracing needs the actor engine"},
		{[]string{"algorithm.fedavg.server=test-failing"}, run.Options{Engine: run.Reference}, `algorithm.fedavg.server: server behaviour "test-failing" exists only in the actor engine; the reference engine applies ` + strings.Join(afedavg.ReferenceServers(), ", ")},
	}
	// An unregistered server is refused by the loader, with its origin.
	if _, err := scenarios.Parse([]byte(small), "s.yaml", ".", []string{"algorithm.fedavg.server=nonesuch"}); !scenarios.IsUserError(err) ||
		!strings.Contains(err.Error(), `--set algorithm.fedavg.server=nonesuch: algorithm.fedavg.server: unknown server behaviour "nonesuch"`) {
		t.Errorf("unregistered server: %v", err)
	}
	for _, c := range cases {
		_, err := run.Execute(plan(t, small, c.overrides...), t.TempDir(), c.opts)
		if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a user error containing %q", c.overrides, err, c.want)
		}
	}
}

func TestGroupByDrawsOneFigurePerValue(t *testing.T) {
	t.Parallel()
	src := small + `curves:
  - {label: mean, set: {algorithm.fedavg.server: mean}}
  - {label: median, set: {algorithm.fedavg.server: median}}
sweep:
  algorithm.fedavg.local_steps: [1, [1, 3]]
output: {group_by: algorithm.fedavg.local_steps}
`
	dir, res := execute(t, plan(t, src), run.Options{})
	want := []string{"msd-1.png", "msd-1.svg", "msd-1-3.png", "msd-1-3.svg"}
	for _, f := range want {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing figure %s (files: %v)", f, res.Files)
		}
	}
}

// A step size far beyond the stability bound makes every run blow up; the
// summary says at which iteration, and a stable run is not flagged.
func TestDivergenceIsReported(t *testing.T) {
	t.Parallel()
	_, res := execute(t, plan(t, small, "algorithm.step_size=40", "iterations=400", "output.plot=false"), run.Options{Engine: run.Reference})
	c := res.Summary.Curves[0]
	if !c.Diverged || c.DivergedRuns != 3 || c.DivergedAt < 1 || c.DivergedAt > 400 {
		t.Errorf("diverged %v at %d in %d runs, want all 3 runs flagged at an iteration in [1, 400]", c.Diverged, c.DivergedAt, c.DivergedRuns)
	}
	_, res = execute(t, plan(t, small, "output.plot=false"), run.Options{Engine: run.Reference})
	if c := res.Summary.Curves[0]; c.Diverged || c.DivergedAt != 0 {
		t.Errorf("a stable run was flagged as diverged at %d", c.DivergedAt)
	}
}

// The run directory records the overrides: summary.json lists them and
// scenario.yaml, which has them applied, says so in a comment and reloads to
// the same scenario.
func TestRunDirectoryRecordsOverrides(t *testing.T) {
	t.Parallel()
	dir, res := execute(t, plan(t, small, "algorithm.step_size=0.02", "output.plot=false"), run.Options{Engine: run.Reference})
	want := []scenarios.Setting{{Field: "algorithm.step_size", Value: "0.02"}, {Field: "output.plot", Value: "false"}}
	if fmt.Sprint(res.Summary.Overrides) != fmt.Sprint(want) || res.Summary.Curves[0].Label != "small, step_size=0.02" {
		t.Errorf("summary overrides %v, label %q", res.Summary.Overrides, res.Summary.Curves[0].Label)
	}
	js, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if !strings.Contains(string(js), `"field": "algorithm.step_size"`) {
		t.Errorf("summary.json lacks the overrides:\n%s", js)
	}
	y, _ := os.ReadFile(filepath.Join(dir, "scenario.yaml"))
	if !strings.Contains(string(y), "#   --set algorithm.step_size=0.02\n") {
		t.Errorf("scenario.yaml does not name the overrides:\n%s", y)
	}
	reload, err := scenarios.LoadFile(filepath.Join(dir, "scenario.yaml"), nil)
	if err != nil || reload.Base.Algorithm.StepSize != 0.02 || reload.Base.Output.Plot {
		t.Errorf("scenario.yaml does not reload with the overrides applied: %v", err)
	}
}

// A run stopped during the transient is flagged in the summary; one long
// past it is not.
func TestSummaryFlagsRunsStillTrending(t *testing.T) {
	t.Parallel()
	_, res := execute(t, plan(t, small, "runs=5", "iterations=60", "output.plot=false", "algorithm.step_size=0.01"), run.Options{Engine: run.Reference})
	tr := res.Summary.Curves[0].Trending
	if len(tr) != 1 || tr[0].Metric != "msd_db" || !(tr[0].Change < -rundir.TrendMinChange) || tr[0].From != 54 || tr[0].To != 60 {
		t.Errorf("trending %+v, want msd_db falling over 54–60", tr)
	}
	_, res = execute(t, plan(t, small, "runs=5", "iterations=1000", "output.plot=false"), run.Options{Engine: run.Reference})
	if tr := res.Summary.Curves[0].Trending; len(tr) != 0 {
		t.Errorf("a run long past its transient is flagged: %+v", tr)
	}
}
