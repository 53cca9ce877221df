package all

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"maple/actors/trace"
	"maple/scenarios"
	"maple/scenarios/run"
)

// Cancelling the context after two finished runs writes those two runs, in
// summary.json marked partial, and nothing else: the outputs equal those of
// the same plan with runs: 2, byte for byte, and no temporary trace survives.
func TestInterruptedExecutionWritesFinishedRuns(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	// One worker takes the runs in order; the third does not start, as the
	// context is done before the worker asks for it.
	opts := run.Options{Workers: 1, Trace: true, Progress: func(done, _ int) {
		if done == 2 {
			cancel()
		}
	}}
	res, err := run.ExecuteContext(ctx, plan(t, small, "output.plot=false"), dir, opts)
	var intr *run.Interrupted
	if !errors.As(err, &intr) || intr.Completed != 2 || intr.Planned != 3 || !errors.Is(err, context.Canceled) {
		t.Fatalf("ExecuteContext returned %v, want an interruption after 2 of 3 runs", err)
	}
	s := res.Summary
	if !s.Partial || s.RunsCompleted != 2 || s.RunsPlanned != 3 || s.Curves[0].Runs != 2 || s.Curves[0].RunsPlanned != 3 {
		t.Errorf("summary: partial %v, %d of %d runs, curve %d of %d", s.Partial, s.RunsCompleted, s.RunsPlanned, s.Curves[0].Runs, s.Curves[0].RunsPlanned)
	}
	var onDisk map[string]any
	if err := json.Unmarshal(read(t, filepath.Join(dir, "summary.json")), &onDisk); err != nil || onDisk["partial"] != true {
		t.Errorf("summary.json does not say partial: %v", onDisk["partial"])
	}
	full, _ := execute(t, plan(t, strings.Replace(small, "runs: 3", "runs: 2", 1), "output.plot=false"), run.Options{Trace: true})
	for _, f := range []string{"metrics.csv", trace.StoreFile} {
		if !bytes.Equal(read(t, filepath.Join(dir, f)), read(t, filepath.Join(full, f))) {
			t.Errorf("%s of the interrupted execution differs from that of runs: 2", f)
		}
	}
	assertNoTemporaries(t, dir)
}

// A second interrupt (Options.Abort) abandons the writing of the finished
// runs: the run directory is left empty.
func TestAbortAbandonsTheOutputs(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	abort := make(chan struct{})
	dir := t.TempDir()
	opts := run.Options{Workers: 1, Trace: true, Abort: abort, Progress: func(done, _ int) {
		if done == 2 {
			cancel()
			close(abort)
		}
	}}
	res, err := run.ExecuteContext(ctx, plan(t, small), dir, opts)
	var intr *run.Interrupted
	if res != nil || !errors.As(err, &intr) || !intr.Abandoned {
		t.Fatalf("ExecuteContext returned %v, %v; want nothing and an abandoned interruption", res, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the run directory holds %v, want nothing", entries)
	}
}

// Interrupted before any run finished, an execution writes nothing.
func TestInterruptedBeforeAnyRun(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	res, err := run.ExecuteContext(ctx, plan(t, small), dir, run.Options{Trace: true})
	var intr *run.Interrupted
	if res != nil || !errors.As(err, &intr) || intr.Completed != 0 {
		t.Fatalf("ExecuteContext returned %v, %v; want nothing and an interruption", res, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the run directory holds %d entries, want none", len(entries))
	}
}

// A run directory holds the outputs and nothing else: no temporary file of
// the atomic writes, of the plots' staging or of the traces.
func assertNoTemporaries(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary %s left in the run directory", e.Name())
		}
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestOutputsLeaveNoTemporaries(t *testing.T) {
	t.Parallel()
	dir, _ := execute(t, plan(t, small, "runs=1"), run.Options{Trace: true})
	assertNoTemporaries(t, dir)
}

// The run directory's scenario.yaml names its files by absolute paths, so it
// runs again from anywhere.
func TestRunDirectoryScenarioRunsFromAnywhere(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	var b strings.Builder
	for n := range 100 {
		fmt.Fprintf(&b, "%d 1:%d 2:%g\n", 2*(n%2)-1, n%5, float64(n%7)/7)
	}
	if err := os.WriteFile(filepath.Join(src, "d.svm"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := `name: svm
iterations: 3
data: {kind: libsvm, agents: 4, samples: [1, 2], dim: 2, test_samples: 20, libsvm: {file: d.svm}}
algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 2}}
output: {plot: false}
`
	p, err := scenarios.Parse([]byte(yaml), filepath.Join(src, "s.yaml"), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := execute(t, p, run.Options{})
	again, err := scenarios.LoadFile(filepath.Join(out, "scenario.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f := again.Base.Data.LIBSVM.File; f != filepath.Join(src, "d.svm") {
		t.Errorf("scenario.yaml names the data file %q, want %q", f, filepath.Join(src, "d.svm"))
	}
	second, _ := execute(t, again, run.Options{})
	if !bytes.Equal(read(t, filepath.Join(out, "metrics.csv")), read(t, filepath.Join(second, "metrics.csv"))) {
		t.Error("the run directory's scenario does not reproduce its metrics")
	}
}

// Curve labels with commas, quotes and non-ASCII text survive metrics.csv.
func TestLabelsRoundTripThroughMetricsCSV(t *testing.T) {
	t.Parallel()
	labels := []string{`a, "b"`, `c,d`, `μ = 0.1; "quoted"`}
	src := small + "output: {plot: false}\ncurves:\n"
	for _, l := range labels {
		src += fmt.Sprintf("  - {label: %s, set: {runs: 1}}\n", strconv.Quote(l))
	}
	dir, _ := execute(t, plan(t, src), run.Options{})
	rows := readCSV(t, filepath.Join(dir, "metrics.csv"))
	var got []string
	for _, r := range rows[1:] {
		if len(got) == 0 || got[len(got)-1] != r[0] {
			got = append(got, r[0])
		}
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", labels) {
		t.Errorf("labels read back from metrics.csv: %q, want %q", got, labels)
	}
}

// Plans beyond the limits are refused before running, naming the field that
// drives the estimate, and a plan within them passes.
func TestEstimatesRefuseWhatCannotRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		overrides []string
		opts      run.Options
		want      string
	}{
		{[]string{"runs=9223372036854775807"}, run.Options{}, "runs: the plan needs about"},
		{[]string{"iterations=9223372036854775807"}, run.Options{}, "iterations: the plan needs about"},
		{[]string{"data.dim=100000000"}, run.Options{}, "data.dim: the plan needs about"},
		// Every one of 10⁷ agents training in every round: each is built, and
		// held, at once (ten million agents of which four train fit).
		{[]string{"data.agents=10000000", "algorithm.fedavg.participants=10000000"}, run.Options{MemoryLimit: 16e9}, "data.agents: the plan needs about"},
		{[]string{"runs=1000", "iterations=1000000000"}, run.Options{MemoryLimit: 1e15}, "iterations: the plan would run for about"},
		{[]string{"runs=100"}, run.Options{Trace: true, TraceLimit: 1e5}, "more than the trace limit of 100 kB"},
	}
	for _, c := range cases {
		err := run.CheckWith(plan(t, small, c.overrides...), c.opts)
		if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a scenario error containing %q", c.overrides, err, c.want)
		}
	}
	if err := run.CheckWith(plan(t, small), run.Options{Trace: true, MemoryLimit: 1e9}); err != nil {
		t.Errorf("a small plan is refused: %v", err)
	}
}

// The trace size estimate is within a factor of two of the truth for both
// families (the limit needs the order of magnitude, not the digits).
func TestTraceEstimateMatchesTraces(t *testing.T) {
	t.Parallel()
	fig4, err := scenarios.LoadFile("../../scenarios/decentralized/fig4.yaml", []string{"runs=1", "iterations=10", "output.plot=false"})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*scenarios.Plan{"fedavg": plan(t, small, "output.plot=false"), "diffusion": fig4} {
		opts := run.Options{Trace: true}
		want := run.EstimatePlan(p, opts).Trace
		dir, _ := execute(t, p, opts)
		st, err := os.Stat(filepath.Join(dir, trace.StoreFile))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: estimated %.0f bytes, wrote %d", name, want, st.Size())
		if r := want / float64(st.Size()); r < 0.5 || r > 2 {
			t.Errorf("%s: estimated %.0f bytes, wrote %d", name, want, st.Size())
		}
	}
}

// A missing LIBSVM file is found by Check, before anything runs.
func TestCheckReadsDataFiles(t *testing.T) {
	t.Parallel()
	src := `name: svm
data: {kind: libsvm, agents: 4, dim: 2, libsvm: {file: missing.svm}}
algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 2}}
`
	err := run.Check(plan(t, src))
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "data.libsvm.file: missing LIBSVM file") {
		t.Errorf("Check with a missing LIBSVM file: %v", err)
	}
}

const lgh = `name: lgh
runs: 2
iterations: 20
data: {agents: 8, samples: 20, dim: 3}
loss: {rho: 0.01}
algorithm: {kind: diffusion, step_size: 0.1}
topology: {graph: ring}
privacy: {scheme: local-graph-homomorphic, variance: 0.01}
output: {plot: false}
`

// Key pairs drawn from the operating system's randomness give other public
// keys in every execution but the same metrics: the masks still cancel.
// Metrics agree to rounding, not bit for bit: the masks differ, so does the
// rounding of their cancellation (see actors/diffusion
// TestLGHFollowsNoiseFreeRun: at most ~2e-13σ per aggregate and iteration,
// here σ = 0.1, 20 iterations of a stable recursion). A relative 1e-9 on MSDs
// of order 1e-2..1 is far above that and far below a mask that did not
// cancel (σ² = 0.01 would move the MSD by about 1e-2). The reference engine
// honours the option too.
func TestKeysFromTheOperatingSystem(t *testing.T) {
	t.Parallel()
	seeded, _ := execute(t, plan(t, lgh), run.Options{Trace: true})
	want := metricValues(t, seeded)
	var keys []map[string]bool
	for i := range 2 {
		dir, _ := execute(t, plan(t, lgh, "privacy.key_randomness=os"), run.Options{Trace: true})
		compareMetrics(t, fmt.Sprintf("os execution %d", i), metricValues(t, dir), want)
		keys = append(keys, publicKeys(t, dir))
	}
	seededKeys := publicKeys(t, seeded)
	for k := range keys[0] {
		if keys[1][k] || seededKeys[k] {
			t.Errorf("public key %s appears in two executions", k)
		}
	}
	ref, _ := execute(t, plan(t, lgh, "privacy.key_randomness=os"), run.Options{Engine: run.Reference})
	compareMetrics(t, "reference engine", metricValues(t, ref), want)
	again, _ := execute(t, plan(t, lgh), run.Options{Trace: true})
	if !bytes.Equal(read(t, filepath.Join(again, trace.StoreFile)), read(t, filepath.Join(seeded, trace.StoreFile))) {
		t.Error("seeded keys: two executions wrote different traces")
	}
}

func metricValues(t *testing.T, dir string) [][]float64 {
	t.Helper()
	rows := readCSV(t, filepath.Join(dir, "metrics.csv"))
	var out [][]float64
	for _, r := range rows[1:] {
		var v []float64
		for _, s := range r[2:] {
			x := math.NaN() // an empty cell: the dB of an exact zero
			if s != "" {
				var err error
				if x, err = strconv.ParseFloat(s, 64); err != nil {
					t.Fatal(err)
				}
			}
			v = append(v, x)
		}
		out = append(out, v)
	}
	return out
}

func compareMetrics(t *testing.T, name string, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d metric rows, want %d", name, len(got), len(want))
	}
	for i := range got {
		for j := range got[i] {
			if d := math.Abs(got[i][j] - want[i][j]); d > 1e-9*math.Abs(want[i][j]) {
				t.Errorf("%s: row %d column %d is %v, want %v", name, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// publicKeys returns the public keys a traced execution sent.
func publicKeys(t *testing.T, dir string) map[string]bool {
	t.Helper()
	keys := map[string]bool{}
	tr, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	err = tr.Scan(trace.Filter{}, func(r *trace.Record) error {
		if r.Type == "PublicKey" {
			keys[r.Fields["key"].(string)] = true
		}
		return nil
	})
	if err != nil || len(keys) == 0 {
		t.Fatalf("no public keys in the trace (%v)", err)
	}
	return keys
}
