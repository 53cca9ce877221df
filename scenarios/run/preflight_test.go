package run

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"maple/algorithms/loss"
	"maple/scenarios"
)

// curveEstimate returns the estimate of the first curve of p and its model
// dimension, as the checks before running see them.
func curveEstimate(t *testing.T, p *scenarios.Plan) Estimate {
	t.Helper()
	opts := Options{}
	opts.defaults()
	return costOf(p, &opts, false).curves[0].est
}

// The estimates size the model by the loss's parameter vector, not by the
// features: a message carries loss.Dim(M) coordinates, and a FedAvg run's
// operations, linear in the model dimension, scale exactly with it as the
// classes or hidden units grow.
func TestEstimatesUseTheModelDimension(t *testing.T) {
	const src = `name: blobs
data: {kind: blobs, agents: 4, samples: 20, dim: 50}
algorithm: {kind: fedavg, step_size: 0.1}
`
	cases := []struct {
		overrides []string
		model     loss.Loss
	}{
		{[]string{"loss.classes=2"}, loss.Loss{Kind: loss.Softmax, Classes: 2}},
		{[]string{"loss.classes=20"}, loss.Loss{Kind: loss.Softmax, Classes: 20}},
		{[]string{"loss.kind=mlp", "loss.classes=3", "loss.hidden=10"}, loss.Loss{Kind: loss.MLP, Classes: 3, Hidden: 10}},
		{[]string{"loss.kind=mlp", "loss.classes=3", "loss.hidden=100"}, loss.Loss{Kind: loss.MLP, Classes: 3, Hidden: 100}},
	}
	ops := make([]float64, len(cases))
	for i, c := range cases {
		e := curveEstimate(t, plan(t, src, c.overrides...))
		if want := float64(c.model.Dim(50)); e.VectorLen != want {
			t.Errorf("%v: messages carry %v coordinates, want the model's %v", c.overrides, e.VectorLen, want)
		}
		ops[i] = e.Ops
	}
	for _, pair := range [][2]int{{0, 1}, {2, 3}} {
		a, b := cases[pair[0]], cases[pair[1]]
		want := float64(b.model.Dim(50)) / float64(a.model.Dim(50))
		if got := ops[pair[1]] / ops[pair[0]]; math.Abs(got/want-1) > 1e-12 {
			t.Errorf("%v → %v: operations grow %v×, want the model dimension's %v×", a.overrides, b.overrides, got, want)
		}
	}
}

// Image data take their features from the IDX header (rows × columns) when
// data.dim is 0, so their estimate is that of the real model; a missing file
// still gives a non-zero estimate (one feature), and the run reports the
// file.
func TestEstimateReadsTheIDXHeader(t *testing.T) {
	dir := t.TempDir()
	px, lb := images(30)
	writeIDX(t, filepath.Join(dir, "images.gz"), []int{30, 3, 3}, px)
	writeIDX(t, filepath.Join(dir, "labels.gz"), []int{30}, lb)
	const src = `name: idx
data: {kind: idx, agents: 3, samples: 10, test_samples: 5, idx: {images: %s, labels: labels.gz}}
loss: {kind: softmax, classes: 3, optimum: none}
algorithm: {kind: diffusion, step_size: 0.1}
topology: {graph: ring}
`
	for _, c := range []struct {
		images   string
		features int
	}{{"images.gz", 9}, {"missing.gz", 1}} {
		p, err := scenarios.Parse(fmt.Appendf(nil, src, c.images), filepath.Join(dir, "s.yaml"), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := features(p.Curves[0].Scenario, dir); got != c.features {
			t.Errorf("%s: %d features, want %d", c.images, got, c.features)
		}
		e := curveEstimate(t, p)
		want := float64(3 * (c.features + 1))
		if e.VectorLen != want || e.Bytes <= 0 || e.Ops <= 0 {
			t.Errorf("%s: estimate %+v, want %v coordinates per message and positive memory and operations", c.images, e, want)
		}
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
