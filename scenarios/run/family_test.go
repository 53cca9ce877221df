package run

import (
	"errors"
	"fmt"
	"maple/algorithms/data/idxtest"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// test-msd-only is a family that lists an MSD column without MSDColumns, as a
// family written before the multi-class models would.
func init() {
	Register(Family{
		Family: scenarios.Family{
			Kind: "test-msd-only", Summary: "test family", Schemes: []string{"none"},
			Defaults: func(*scenarios.Scenario) any { return &struct{}{} },
			Validate: func(*scenarios.Validator, *scenarios.Scenario) {},
		},
		Columns: func(*scenarios.Scenario) []rundir.Column { return []rundir.Column{{Name: "msd", Decibel: true}} },
		Run:     func(*Job, *inputs.Problem, *TraceSink) error { return fmt.Errorf("must not run") },
	})
}

// A family that reports an MSD is refused, before anything runs, on a curve
// without an optimum, instead of measuring against a w^o that does not exist.
func TestFamilyMSDWithoutOptimumIsRefused(t *testing.T) {
	src := `name: x
data: {kind: blobs, agents: 4, samples: 10, dim: 2, blobs: {separation: 1}}
loss: {kind: mlp, hidden: 2}
algorithm: {kind: test-msd-only}
`
	_, err := Execute(plan(t, src), t.TempDir(), Options{})
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "loss.optimum: algorithm test-msd-only reports msd against the optimum w^o, but the mlp loss has no unique minimizer") {
		t.Errorf("err = %v", err)
	}
}

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

// curveEstimate returns the estimate of the first curve of p and its model
// dimension, as the checks before running see them.
func curveEstimate(t *testing.T, p *scenarios.Plan) Estimate {
	t.Helper()
	opts := Options{}
	opts.defaults()
	return costOf(p, &opts, false).curves[0].est
}

// Image data take their features from the IDX header (rows × columns) when
// data.dim is 0, so their estimate is that of the real model; a missing file
// still gives a non-zero estimate (one feature), and the run reports the
// file. (The test family has no estimate of its own: the runner's generic
// one counts the model's coordinates per message.)
func TestEstimateReadsTheIDXHeader(t *testing.T) {
	dir := t.TempDir()
	px, lb := idxtest.Images(30)
	idxtest.Write(t, filepath.Join(dir, "images.gz"), idxtest.UnsignedBytes, []int{30, 3, 3}, px)
	idxtest.Write(t, filepath.Join(dir, "labels.gz"), idxtest.UnsignedBytes, []int{30}, lb)
	const src = `name: idx
data: {kind: idx, agents: 3, samples: 10, test_samples: 5, idx: {images: %s, labels: labels.gz}}
loss: {kind: softmax, classes: 3, optimum: none}
algorithm: {kind: test-msd-only}
`
	for _, c := range []struct {
		images   string
		features int
	}{{"images.gz", 9}, {"missing.gz", 1}} {
		p, err := scenarios.Parse(fmt.Appendf(nil, src, c.images), filepath.Join(dir, "s.yaml"), dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := inputs.Features(p.Curves[0].Scenario, dir); got != c.features {
			t.Errorf("%s: %d features, want %d", c.images, got, c.features)
		}
		e := curveEstimate(t, p)
		want := float64(3 * (c.features + 1))
		if e.VectorLen != want || e.Bytes <= 0 || e.Ops <= 0 {
			t.Errorf("%s: estimate %+v, want %v coordinates per message and positive memory and operations", c.images, e, want)
		}
	}
}

// A panic in a run is an InternalError carrying the stack, not a crash: here
// a job without its worker's problem cache.
func TestPanicInARunIsAnInternalError(t *testing.T) {
	p := plan(t, "name: x\nalgorithm: {kind: test-msd-only}\n")
	j := &Job{Curve: p.Curves[0], Dir: p.Dir, Opts: &Options{}}
	err := j.protect()
	var ie *InternalError
	if !errors.As(err, &ie) || !strings.Contains(ie.Stack, "ProblemCache") {
		t.Fatalf("protect returned %v, want an InternalError with the stack", err)
	}
}
