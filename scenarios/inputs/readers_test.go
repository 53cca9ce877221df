package inputs

import (
	"context"
	"errors"
	"fmt"
	"maple/algorithms/data/idxtest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"maple/internal/fileio/fileiotest"
	"maple/scenarios"
)

// TestMain checks that the readers leave no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func plan(t *testing.T, src string, overrides ...string) *scenarios.Plan {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "t.yaml", t.TempDir(), overrides)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// test-net is a family with a topology that models the step-time table and
// the availability windows, so that the readers of those files can
// be tested on their own.
func init() {
	scenarios.RegisterFamily(scenarios.Family{
		Kind: "test-net", Summary: "test family", Schemes: []string{"none"}, Topology: true,
		Systems: []string{scenarios.FieldStepTime, scenarios.FieldAvailability},
		Defaults: func(sc *scenarios.Scenario) any {
			sc.Topology = &scenarios.Topology{Graph: "ring", Weights: "metropolis", Regenerate: "once"}
			return &struct{}{}
		},
		Validate: func(*scenarios.Validator, *scenarios.Scenario) {},
	})
	// test-data is a family without a topology, for the data readers.
	scenarios.RegisterFamily(scenarios.Family{
		Kind: "test-data", Summary: "test family", Schemes: []string{"none"},
		Defaults: func(*scenarios.Scenario) any { return &struct{}{} },
		Validate: func(*scenarios.Validator, *scenarios.Scenario) {},
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
// (CheckData, which the runner's checks make before maple run creates the
// run directory, and maple validate) read the LIBSVM file and every agent's
// file of directory data.
func TestDataReadersRefuseSpecialFiles(t *testing.T) {
	agents := t.TempDir()
	os.WriteFile(filepath.Join(agents, "0.csv"), []byte("1,0.5\n0,1\n"), 0o644)
	os.Symlink("/dev/zero", filepath.Join(agents, "1.csv"))
	pipes := t.TempDir()
	os.WriteFile(filepath.Join(pipes, "0.csv"), []byte("1,0.5\n0,1\n"), 0o644)
	fileiotest.FIFOAt(t, filepath.Join(pipes, "1.csv"), "1,0.5\n0,1\n")
	const agentsSrc = "name: x\ndata: {kind: directory, agents: 2, samples: 2, directory: {path: %s, format: csv}}\nloss: {kind: least-squares, optimum: none}\nalgorithm: {kind: test-data}\n"
	cases := []struct {
		name, src, want string
	}{
		{"LIBSVM file", "name: x\ndata: {kind: libsvm, agents: 2, samples: 1, libsvm: {file: " + fileiotest.FIFO(t, "svm", "1 1:1\n-1 1:2\n") + "}}\nloss: {kind: logistic, optimum: none}\nalgorithm: {kind: test-data}\n",
			"data.libsvm.file: cannot open "},
		{"agent file linked to /dev/zero", fmt.Sprintf(agentsSrc, agents), "data.directory.path: cannot open " + filepath.Join(agents, "1.csv") + ": not a regular file: a character device"},
		{"agent file a named pipe", fmt.Sprintf(agentsSrc, pipes), "data.directory.path: cannot open " + filepath.Join(pipes, "1.csv") + ": not a regular file: a named pipe"},
	}
	for _, c := range cases {
		err := CheckData(context.Background(), plan(t, c.src))
		if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v; want a scenario error with %q", c.name, err, c.want)
		}
	}
}

// An element type of the images file that the scaling cannot take is the
// images' fault, and the error names data.idx.images (main named the labels).
func TestIDXImagesErrorNamesTheImages(t *testing.T) {
	dir := t.TempDir()
	px, lb := idxtest.Images(30)
	idxtest.Write(t, filepath.Join(dir, "images.gz"), idxtest.UnsignedBytes, []int{30, 3, 3}, px)
	idxtest.Write(t, filepath.Join(dir, "labels.gz"), idxtest.UnsignedBytes, []int{30}, lb)
	// The same pixels as signed bytes (element type 0x09).
	signed := filepath.Join(dir, "signed.gz")
	idxtest.Write(t, signed, 0x09, []int{30, 3, 3}, px)
	const src = `name: idx
data: {kind: idx, agents: 3, samples: 10, test_samples: 5, idx: {images: signed.gz, labels: labels.gz, scale: unit}}
loss: {kind: softmax, classes: 3, optimum: none}
algorithm: {kind: test-data}
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

// Directory data without data.dim take the features of agent 0's file: the
// fields of a CSV record but the target, the largest index of a LIBSVM file.
func TestDirectoryFeatures(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "0.csv"), []byte("# target, features\n1,0.5,2,3\n0,1,1,1\n"), 0o644)
	if got := directoryFeatures(dir, "csv"); got != 3 {
		t.Errorf("CSV: %d features, want 3", got)
	}
	svm := t.TempDir()
	os.WriteFile(filepath.Join(svm, "0.svm"), []byte("1 1:0.5 7:1\n-1 3:2 # comment 99:1\n"), 0o644)
	if got := directoryFeatures(svm, "libsvm"); got != 7 {
		t.Errorf("LIBSVM: %d features, want 7", got)
	}
	if got := directoryFeatures(filepath.Join(dir, "missing"), "csv"); got != 0 {
		t.Errorf("missing directory: %d features, want 0", got)
	}
}
