package run

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// test-flat is a family whose runs record a constant: curve "a" the value
// −24 and curve "b" its neighbour one ULP up, two curves equal but for their
// last bit, as local graph-homomorphic masks and no noise give.
func init() {
	Register(Family{
		Family: scenarios.Family{
			Kind: "test-flat", Summary: "test family", Schemes: []string{"none"},
			Defaults: func(*scenarios.Scenario) any { return &struct{}{} },
			Validate: func(*scenarios.Validator, *scenarios.Scenario) {},
		},
		Columns: func(*scenarios.Scenario) []rundir.Column { return []rundir.Column{{Name: "value", Label: "value"}} },
		Run: func(j *Job, _ *inputs.Problem, _ *TraceSink) error {
			sc := j.Curve.Scenario
			v := -24.0
			if j.Curve.Label == "b" {
				v = math.Nextafter(v, 0)
			}
			j.Table = rundir.NewTable(sc.Iterations, sc.Output.Every, 1)
			for r := range j.Table.Iterations {
				j.Table.Set(r, 0, v)
			}
			return nil
		},
	})
}

const flatScenario = `name: flat
runs: 1
iterations: 3
data: {agents: 2, samples: 2}
loss: {optimum: none}
algorithm: {kind: test-flat}
curves:
  - {label: a, set: {seed: 1}}
  - {label: b, set: {seed: 1}}
`

// readSummary reads dir's summary.json.
func readSummary(t *testing.T, dir string) rundir.Summary {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s rundir.Summary
	if err := json.Unmarshal(js, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Two curves equal but for their last bit give an axis a few ULPs wide: the
// figure is drawn (on main the tick loop never ended, allocating until the
// process died), and the complete directory's summary has nothing pending.
func TestCurvesEqualToTheLastBitAreDrawn(t *testing.T) {
	dir := t.TempDir()
	res, err := Execute(plan(t, flatScenario), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := readSummary(t, dir); s.Pending != "" {
		t.Errorf("a complete run's summary says %q is pending", s.Pending)
	}
	if _, err := os.Stat(filepath.Join(dir, "value.png")); err != nil || !strings.Contains(strings.Join(res.Files, " "), "value.svg") {
		t.Errorf("the figure is missing: %v, files %v", err, res.Files)
	}
}

// A failure in drawing loses no number: metrics.csv and summary.json are in
// place, the summary says the figures are pending, and no staging directory
// is left.
func TestFailureInDrawingKeepsTheNumbers(t *testing.T) {
	draw := drawFigures
	defer func() { drawFigures = draw }()
	drawFigures = func(context.Context, string, *scenarios.Plan, []rundir.Curve) ([]string, error) {
		return nil, errors.New("the disk is full")
	}
	dir := t.TempDir()
	_, err := Execute(plan(t, flatScenario), dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "drawing the figures: the disk is full (metrics.csv and summary.json are written)") {
		t.Errorf("error %v", err)
	}
	if s := readSummary(t, dir); s.Pending != rundir.PendingFigures || len(s.Curves) != 2 {
		t.Errorf("summary: pending %q, %d curves; want %q and 2", s.Pending, len(s.Curves), rundir.PendingFigures)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "metrics.csv scenario.yaml summary.json" {
		t.Errorf("the run directory holds %v", names)
	}
}
