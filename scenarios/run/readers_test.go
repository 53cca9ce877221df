package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/internal/fileio/fileiotest"
	"maple/rundir"
	"maple/scenarios"
)

// test-net is a family with a topology that models the step-time table and
// the availability windows, so that the runner's readers of those files can
// be tested on their own.
func init() {
	Register(Family{
		Family: scenarios.Family{
			Kind: "test-net", Summary: "test family", Schemes: []string{"none"}, Topology: true,
			Systems: []string{scenarios.FieldStepTime, scenarios.FieldAvailability},
			Defaults: func(sc *scenarios.Scenario) any {
				sc.Topology = &scenarios.Topology{Graph: "ring", Weights: "metropolis", Regenerate: "once"}
				return &struct{}{}
			},
			Validate: func(*scenarios.Validator, *scenarios.Scenario) {},
		},
		Columns: func(*scenarios.Scenario) []rundir.Column { return []rundir.Column{{Name: "value"}} },
		Run:     func(*Job, *Problem, *TraceSink) error { return fmt.Errorf("must not run") },
	})
}

// Every file the runner reads is opened through fileio: a named pipe (which
// would block the reader until something writes to it) or a device such as
// /dev/zero (which never ends) is refused by name, with the field that names
// it, without being read. On main the pipes here were read (their writer
// feeds them valid content so that the test cannot hang) and /dev/zero was
// read without end.
func TestReadersRefuseSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := func(content string) string { return fileiotest.FIFO(t, "pipe", content) }
	const base = "name: x\nruns: 1\ndata: {agents: 4, samples: 2}\nloss: {optimum: none}\nalgorithm: {kind: test-net}\n"
	network := func(c *scenarios.CurveSpec) error {
		_, err := BuildNetwork(context.Background(), c, dir, 1)
		return err
	}
	systemsModel := func(c *scenarios.CurveSpec) error {
		_, err := SystemsModel(context.Background(), c, dir)
		return err
	}
	cases := []struct {
		name, src string
		read      func(c *scenarios.CurveSpec) error
		want      string
	}{
		{"edge list", base + "topology: {graph: file, file: " + fifo("0 1\n1 2\n2 3\n3 0\n") + "}\n", network,
			"topology.file: cannot open "},
		{"matrix", base + "topology: {graph: matrix, weights: file, matrix: " + fifo("1 0\n0 1\n") + "}\n", network,
			"topology.matrix: cannot open "},
		{"step-time table", base + "topology: {graph: ring}\nnetwork: {step_time: {kind: table, file: " + fifo("0,1\n") + "}}\n", systemsModel,
			"network.step_time.file: cannot open "},
		{"step-time table /dev/zero", base + "topology: {graph: ring}\nnetwork: {step_time: {kind: table, file: /dev/zero}}\n", systemsModel,
			"network.step_time.file: cannot open /dev/zero: not a regular file: a character device"},
		{"availability", base + "topology: {graph: ring}\nnetwork: {availability: " + fifo("0,0,1\n") + "}\n", systemsModel,
			"network.availability: cannot open "},
	}
	for _, c := range cases {
		p := plan(t, c.src)
		err := c.read(p.Curves[0])
		if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v; want a scenario error with %q, not a regular file", c.name, err, c.want)
		}
	}
}

// The data files are refused the same way, before anything runs: the checks
// (CheckWith, which maple run makes before it creates the run directory, and
// maple validate) read the LIBSVM file and every agent's file of directory
// data.
func TestDataReadersRefuseSpecialFiles(t *testing.T) {
	agents := t.TempDir()
	os.WriteFile(filepath.Join(agents, "0.csv"), []byte("1,0.5\n0,1\n"), 0o644)
	os.Symlink("/dev/zero", filepath.Join(agents, "1.csv"))
	pipes := t.TempDir()
	os.WriteFile(filepath.Join(pipes, "0.csv"), []byte("1,0.5\n0,1\n"), 0o644)
	fileiotest.FIFOAt(t, filepath.Join(pipes, "1.csv"), "1,0.5\n0,1\n")
	const agentsSrc = "name: x\ndata: {kind: directory, agents: 2, samples: 2, directory: {path: %s, format: csv}}\nloss: {kind: least-squares, optimum: none}\nalgorithm: {kind: test-msd-only}\n"
	cases := []struct {
		name, src, want string
	}{
		{"LIBSVM file", "name: x\ndata: {kind: libsvm, agents: 2, samples: 1, libsvm: {file: " + fileiotest.FIFO(t, "svm", "1 1:1\n-1 1:2\n") + "}}\nloss: {kind: logistic, optimum: none}\nalgorithm: {kind: test-msd-only}\n",
			"data.libsvm.file: cannot open "},
		{"agent file linked to /dev/zero", fmt.Sprintf(agentsSrc, agents), "data.directory.path: cannot open " + filepath.Join(agents, "1.csv") + ": not a regular file: a character device"},
		{"agent file a named pipe", fmt.Sprintf(agentsSrc, pipes), "data.directory.path: cannot open " + filepath.Join(pipes, "1.csv") + ": not a regular file: a named pipe"},
	}
	for _, c := range cases {
		err := Check(plan(t, c.src))
		if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v; want a scenario error with %q", c.name, err, c.want)
		}
	}
}

// An element type of the images file that the scaling cannot take is the
// images' fault, and the error names data.idx.images (main named the labels).
func TestIDXImagesErrorNamesTheImages(t *testing.T) {
	dir := t.TempDir()
	px, lb := images(30)
	writeIDX(t, filepath.Join(dir, "images.gz"), []int{30, 3, 3}, px)
	writeIDX(t, filepath.Join(dir, "labels.gz"), []int{30}, lb)
	// The same pixels as signed bytes (element type 0x09).
	signed := filepath.Join(dir, "signed.gz")
	writeIDXType(t, signed, 0x09, []int{30, 3, 3}, px)
	const src = `name: idx
data: {kind: idx, agents: 3, samples: 10, test_samples: 5, idx: {images: signed.gz, labels: labels.gz, scale: unit}}
loss: {kind: softmax, classes: 3, optimum: none}
algorithm: {kind: test-msd-only}
`
	p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = BuildProblem(context.Background(), p.Curves[0], dir, 1)
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "data.idx.images: "+signed+": scaling to [0, 1] needs unsigned-byte pixels") {
		t.Errorf("signed pixels: %v", err)
	}
}

// BuildProblem and BuildNetwork stop once their context is done: the
// readers, the solve and the graph generators observe it.
func TestBuildersObserveTheirContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := plan(t, "name: x\ndata: {agents: 4, samples: 20}\nalgorithm: {kind: test-net}\ntopology: {graph: erdos-renyi, probability: 0.5}\n")
	if _, err := BuildProblem(ctx, p.Curves[0], p.Dir, 1); !errors.Is(err, context.Canceled) && !strings.Contains(fmt.Sprint(err), "context canceled") {
		t.Errorf("BuildProblem with a cancelled context: %v", err)
	}
	if _, err := BuildNetwork(ctx, p.Curves[0], p.Dir, 1); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("BuildNetwork with a cancelled context: %v", err)
	}
}

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
		Run: func(j *Job, _ *Problem, _ *TraceSink) error {
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
