package all

import (
	"context"
	"fmt"
	"maple/algorithms/data/idxtest"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"maple/algorithms/data"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// blobs is FedAvg with softmax regression on three well separated Gaussian
// clusters in 5 dimensions: the centres lie ≈ 5·√10 ≈ 16 apart against a unit
// spread, so the classes are separable up to a probability far below 1e-6.
const blobs = `name: blobs
seed: 3
runs: 2
iterations: 30
data:
  kind: blobs
  agents: 20
  samples: [10, 70]
  dim: 5
  test_samples: 500
  blobs: {separation: 5}
  partition: {kind: dirichlet, alpha: 0.5}
loss: {kind: softmax, classes: 3, rho: 0.001}
algorithm:
  kind: fedavg
  step_size: 0.1
  fedavg: {participants: 5, local_steps: 5, batch: 10}
output: {plot: false}
`

// FedAvg with softmax regression on a separable 3-class problem, dealt out
// with Dirichlet label skew, reaches at least 95% test accuracy, and both
// engines write the same metrics: the multi-class model runs through the
// protocol unchanged.
func TestSoftmaxFedAvgSeparatesThreeClasses(t *testing.T) {
	t.Parallel()
	p := plan(t, blobs)
	a, res := onBothEngines(t, p, "softmax")
	ma, _ := os.ReadFile(filepath.Join(a, "metrics.csv"))
	c := res.Summary.Curves[0]
	if acc := float64(c.Final["accuracy"]); acc < 0.95 {
		t.Errorf("final test accuracy %v, want ≥ 0.95", acc)
	}
	if e, acc := c.Final["test_error"], c.Final["accuracy"]; math.Abs(float64(e+acc)-1) > 1e-15 {
		t.Errorf("test error %v and accuracy %v do not add up to 1", e, acc)
	}
	header := strings.SplitN(string(ma), "\n", 2)[0]
	for _, col := range []string{"msd", "test_error", "accuracy", "cross_entropy"} {
		if !strings.Contains(header, col) {
			t.Errorf("metrics.csv header %q lacks %s", header, col)
		}
	}
	if s, ok := c.Details["partition"]; !ok || !strings.Contains(fmt.Sprint(s), "20") {
		t.Errorf("summary partition = %v", s)
	}
}

// The MLP has no optimum: its runs report no MSD, its summary says so, and
// asking for one is refused, naming the field. Decentralized learning runs
// it too, reporting the disagreement and the test metrics only.
func TestMLPReportsNoMSD(t *testing.T) {
	t.Parallel()
	const mlp = `name: mlp
iterations: 10
data: {kind: blobs, agents: 6, samples: 20, dim: 3, test_samples: 100, blobs: {separation: 3}}
loss: {kind: mlp, classes: 3, hidden: 4}
algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 3, batch: 5}}
output: {plot: false}
`
	_, res := execute(t, plan(t, mlp), run.Options{})
	c := res.Summary.Curves[0]
	if _, ok := c.Final["msd"]; ok {
		t.Error("an MLP run reports an MSD")
	}
	if c.Details["optimum"] != "none (loss.optimum: none)" || c.Details["solver"] != nil {
		t.Errorf("details: optimum %v, solver %v", c.Details["optimum"], c.Details["solver"])
	}
	if _, err := scenarios.Parse([]byte(mlp), "t.yaml", t.TempDir(), []string{"loss.optimum=solve"}); err == nil ||
		!strings.Contains(err.Error(), "loss.optimum: the mlp loss is not convex") {
		t.Errorf("optimum solve for the MLP: %v", err)
	}
	if _, err := scenarios.Parse([]byte(mlp), "t.yaml", t.TempDir(), []string{"privacy.scheme=update-noise", "privacy.accountant={b: 1, b_prime: 1, norm: l2}"}); err == nil ||
		!strings.Contains(err.Error(), "privacy.accountant: the papers' ε bound needs the optimum") {
		t.Errorf("accountant without an optimum: %v", err)
	}
	decentralized := strings.Replace(mlp, "algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 3, batch: 5}}",
		"algorithm: {kind: diffusion, step_size: 0.1}\ntopology: {graph: ring}", 1)
	_, res = execute(t, plan(t, decentralized), run.Options{})
	final := res.Summary.Curves[0].Final
	var names []string
	for name := range final {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"accuracy_average", "accuracy_centroid", "cross_entropy_average", "cross_entropy_centroid", "disagreement", "disagreement_db", "test_error_average", "test_error_centroid"}
	if !slices.Equal(names, want) {
		t.Errorf("decentralized MLP columns %v, want %v", names, want)
	}
}

// An IDX dataset written by the test runs end to end with its own test
// files; a missing file names the Debian package to install, exit 2.
func TestIDXScenario(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	px, lb := idxtest.Images(300)
	idxtest.Write(t, filepath.Join(dir, "train-images.gz"), idxtest.UnsignedBytes, []int{300, 3, 3}, px)
	idxtest.Write(t, filepath.Join(dir, "train-labels.gz"), idxtest.UnsignedBytes, []int{300}, lb)
	px, lb = idxtest.Images(60)
	idxtest.Write(t, filepath.Join(dir, "test-images.gz"), idxtest.UnsignedBytes, []int{60, 3, 3}, px)
	idxtest.Write(t, filepath.Join(dir, "test-labels.gz"), idxtest.UnsignedBytes, []int{60}, lb)
	src := `name: idx
iterations: 40
data:
  kind: idx
  agents: 10
  samples: 30
  idx: {images: train-images.gz, labels: train-labels.gz, test_images: test-images.gz, test_labels: test-labels.gz, package: dataset-test}
  partition: {kind: shards, shards: 2}
loss: {kind: softmax, classes: 3, optimum: none}
algorithm: {kind: fedavg, step_size: 0.5, fedavg: {participants: 5, local_steps: 3, batch: 5}}
`
	p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Execute(p, t.TempDir(), run.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Summary.Curves[0]
	if acc := float64(c.Final["accuracy"]); acc < 0.9 {
		t.Errorf("final accuracy %v on a trivially separable task", acc)
	}
	reports, err := run.DescribeData(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := reports[0].Summary
	if s.Train != 300 || s.Test != 60 || reports[0].Features != 9 || reports[0].Parameters != 30 || s.Classes.Max > 2 {
		t.Errorf("data report %+v, summary %+v", reports[0], s)
	}
	p.Curves[0].Scenario.Data.IDX.Labels = "missing-labels.gz"
	_, err = run.Execute(p, t.TempDir(), run.Options{})
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "data.idx.labels: "+filepath.Join(dir, "missing-labels.gz")+" does not exist: install the Debian package dataset-test (apt-get install dataset-test)") {
		t.Errorf("missing file: %v", err)
	}
}

// Per-agent files are read as they are: agent k holds exactly the samples of
// k.csv, in file order, and the regression targets of a LIBSVM directory are
// real numbers.
func TestDirectoryData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	agents := filepath.Join(dir, "agents")
	os.Mkdir(agents, 0o755)
	sizes := []int{7, 12, 9}
	for k, n := range sizes {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%d,%d,%g\n", (i+k)%2, i, float64(k)/10)
		}
		os.WriteFile(filepath.Join(agents, fmt.Sprintf("%d.csv", k)), []byte(b.String()), 0o644)
	}
	os.WriteFile(filepath.Join(agents, "README"), []byte("not an agent\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "test.csv"), []byte("0,1,0\n1,2,0.1\n"), 0o644)
	src := `name: dir
iterations: 5
data: {kind: directory, agents: 3, samples: [7, 12], directory: {path: agents, test: test.csv}}
loss: {kind: softmax, classes: 2}
algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 2, batch: 3}}
output: {plot: false}
`
	p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := inputs.BuildProblem(context.Background(), p.Curves[0], dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range pr.Sets {
		if s.Len() != sizes[k] || s.X[2*(s.Len()-1)] != float64(sizes[k]-1) || s.X[1] != float64(k)/10 {
			t.Errorf("agent %d: %d samples, features %v", k, s.Len(), s.X)
		}
	}
	if _, err := run.Execute(p, t.TempDir(), run.Options{}); err != nil {
		t.Fatal(err)
	}
	// data.samples bounds the files' sizes on both sides: the pre-run
	// estimates and the mini-batch checks rely on it.
	tight, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, []string{"data.samples=[7, 11]"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inputs.BuildProblem(context.Background(), tight.Curves[0], dir, 1); !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "data.samples: agent 1's file 1.csv holds 12 samples, more than data.samples max 11") {
		t.Errorf("a file above data.samples max: %v", err)
	}
	os.Rename(filepath.Join(agents, "1.csv"), filepath.Join(agents, "01.csv"))
	if _, err := run.Execute(p, t.TempDir(), run.Options{}); !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "without leading zeros") {
		t.Errorf("badly named file: %v", err)
	}
	os.Remove(filepath.Join(agents, "01.csv"))
	if _, err := run.Execute(p, t.TempDir(), run.Options{}); !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "holds no file for agent 1") {
		t.Errorf("missing agent file: %v", err)
	}

	svm := filepath.Join(dir, "svm")
	os.Mkdir(svm, 0o755)
	os.WriteFile(filepath.Join(svm, "0.svm"), []byte("-1.5 1:1\n2.25 2:1\n"), 0o644)
	os.WriteFile(filepath.Join(svm, "1.svm"), []byte("0.5 3:2\n"), 0o644)
	src = `name: svm
iterations: 3
data: {kind: directory, agents: 2, samples: [1, 2], directory: {path: svm, format: libsvm}}
loss: {kind: least-squares}
algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 2}}
output: {plot: false}
`
	p, err = scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err = inputs.BuildProblem(context.Background(), p.Curves[0], dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if y := pr.Sets[0].Y; y[0] != -1.5 || y[1] != 2.25 || pr.Sets[0].Dim != 3 || pr.Sets[1].Dim != 3 || len(pr.WOpt) != 3 {
		t.Errorf("targets %v, dims %d %d, w^o %v", y, pr.Sets[0].Dim, pr.Sets[1].Dim, pr.WOpt)
	}
}

// Dirichlet partitions of pooled data go to the summary, and a partition
// that cannot give every agent data.samples min refuses with the field.
func TestPartitionErrorsNameTheField(t *testing.T) {
	t.Parallel()
	src := strings.Replace(blobs, "alpha: 0.5", "alpha: 0.01", 1)
	_, err := run.Execute(plan(t, src), t.TempDir(), run.Options{})
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "data: partition.alpha: 100 Dirichlet(0.01) draws") {
		t.Errorf("err = %v", err)
	}
	fedplt := "name: x\ndata: {kind: blobs, agents: 4, samples: 10, dim: 2, blobs: {separation: 1}}\nloss: {kind: softmax}\nalgorithm: {kind: fedplt}\n"
	if _, err := scenarios.Parse([]byte(fedplt), "t.yaml", t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "loss.kind: fedplt is written for the generalized linear losses") {
		t.Errorf("fedplt with softmax regression: %v", err)
	}
	for _, c := range []struct{ set, want string }{
		{"data.partition={kind: shards, alpha: 1}", "data.partition.alpha: does not apply"},
		{"loss.hidden=3", "loss.hidden: does not apply"},
		{"loss.kind=logistic", "loss.kind: multi-class data (kind blobs) need loss softmax or mlp"},
		{"data.partition.kind=zipf", `data.partition.kind: unknown partition "zipf"`},
	} {
		if _, err := scenarios.Parse([]byte(blobs), "t.yaml", t.TempDir(), []string{c.set}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.set, err, c.want)
		}
	}
}

// A LIBSVM file of real targets (a regression file such as cadata) is read
// with least squares: the targets stay as they are, no test set is held out
// (regression has no test metric) and w^o is solved in closed form.
func TestLIBSVMRegressionTargets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var b strings.Builder
	for n := range 40 {
		fmt.Fprintf(&b, "%g 1:%d 2:%g\n", 0.5*float64(n)-3.25, n%5, float64(n%7)/7)
	}
	os.WriteFile(filepath.Join(dir, "r.svm"), []byte(b.String()), 0o644)
	src := `name: reg
data: {kind: libsvm, agents: 4, samples: 10, libsvm: {file: r.svm}}
loss: {kind: least-squares}
algorithm: {kind: fedavg, step_size: 0.01}
`
	p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := inputs.BuildProblem(context.Background(), p.Curves[0], dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	var targets []float64
	for _, s := range pr.Sets {
		targets = append(targets, s.Y...)
	}
	slices.Sort(targets)
	if pr.Test != nil || len(targets) != 40 || targets[0] != -3.25 || targets[39] != 16.25 || pr.Solver.Method != "closed-form" {
		t.Errorf("test set %v, targets %v, solver %+v", pr.Test, targets, pr.Solver)
	}
}

// Standardized IDX features have mean 0 over the agents' training samples.
func TestIDXStandardize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	px, lb := idxtest.Images(90)
	idxtest.Write(t, filepath.Join(dir, "i.gz"), idxtest.UnsignedBytes, []int{90, 3, 3}, px)
	idxtest.Write(t, filepath.Join(dir, "l.gz"), idxtest.UnsignedBytes, []int{90}, lb)
	src := `name: std
data: {kind: idx, agents: 3, samples: 20, test_samples: 10, idx: {images: i.gz, labels: l.gz, scale: standardize}}
loss: {kind: softmax, classes: 3, optimum: none}
algorithm: {kind: fedavg, step_size: 0.1}
`
	p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := inputs.BuildProblem(context.Background(), p.Curves[0], dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	mean := make([]float64, 9)
	n := 0
	for _, s := range pr.Sets {
		for i := range s.Len() {
			for j, x := range s.Row(i) {
				mean[j] += x
			}
			n++
		}
	}
	for j, m := range mean {
		if math.Abs(m/float64(n)) > 1e-12 {
			t.Errorf("feature %d: mean %v after standardization", j, m/float64(n))
		}
	}
	if n != 80 || pr.Test.Len() != 10 {
		t.Errorf("%d training and %d test samples, want 80 and 10", n, pr.Test.Len())
	}
}

// readIDX reads the test files while it reads the training files, but
// reports their errors as a sequential read would: the training files'
// first, then the test files', then how they fit together; and what it
// decodes does not depend on how many cores share the work.
func TestIDXReadErrorsInFileOrder(t *testing.T) {
	dir := t.TempDir()
	px, lb := idxtest.Images(60)
	idxtest.Write(t, filepath.Join(dir, "i.gz"), idxtest.UnsignedBytes, []int{60, 3, 3}, px)
	idxtest.Write(t, filepath.Join(dir, "l.gz"), idxtest.UnsignedBytes, []int{60}, lb)
	idxtest.Write(t, filepath.Join(dir, "ti.gz"), idxtest.UnsignedBytes, []int{20, 9}, px[:180])
	idxtest.Write(t, filepath.Join(dir, "tl.gz"), idxtest.UnsignedBytes, []int{20}, lb[:20])
	idxtest.Write(t, filepath.Join(dir, "wide.gz"), idxtest.UnsignedBytes, []int{20, 10}, px[:200])
	build := func(idx string, test int) (*inputs.Problem, error) {
		src := fmt.Sprintf(`name: order
data: {kind: idx, agents: 3, samples: 20, test_samples: %d, idx: {%s}}
loss: {kind: softmax, classes: 3, optimum: none}
algorithm: {kind: fedavg, step_size: 0.1}
`, test, idx)
		p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		return inputs.BuildProblem(context.Background(), p.Curves[0], dir, 1)
	}
	for _, tc := range []struct{ idx, want string }{
		{"images: i.gz, labels: missing.gz, test_images: missing.gz, test_labels: tl.gz", "data.idx.labels: "},
		{"images: i.gz, labels: l.gz, test_images: missing.gz, test_labels: tl.gz", "data.idx.test_images: "},
		{"images: i.gz, labels: l.gz, test_images: wide.gz, test_labels: tl.gz", "data.idx.test_images: test samples have 10 features, training samples 9"},
	} {
		if _, err := build(tc.idx, 0); !scenarios.IsUserError(err) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.idx, err, tc.want)
		}
	}
	files := "images: i.gz, labels: l.gz, test_images: ti.gz, test_labels: tl.gz"
	if _, err := build(files, 21); !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "data.test_samples: 21 test samples asked for, the test files hold 20") {
		t.Errorf("too many test samples: err = %v", err)
	}
	problems := make([]*inputs.Problem, 2)
	for i, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		p, err := build(files, 15)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		problems[i] = p
	}
	one, three := problems[0], problems[1]
	if one.Test.Len() != 15 || !slices.Equal(rows(one.Test), rows(three.Test)) || !slices.Equal(one.Test.Y, three.Test.Y) {
		t.Errorf("test sets of %d and %d samples differ", one.Test.Len(), three.Test.Len())
	}
	for k, s := range one.Sets {
		if !slices.Equal(rows(s), rows(three.Sets[k])) || !slices.Equal(s.Y, three.Sets[k].Y) {
			t.Errorf("agent %d's set differs between GOMAXPROCS 1 and 3", k)
		}
	}
}

// rows returns the features of every sample of s, one after the other.
func rows(s *data.Set) []float64 {
	x := make([]float64, s.Len()*s.Dim)
	for n := range s.Len() {
		s.DenseRow(x[n*s.Dim:(n+1)*s.Dim], n)
	}
	return x
}
