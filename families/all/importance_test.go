package all

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// Importance sampling generalizes FedAvg: with uniform policies it must be
// FedAvg exactly, draw for draw. testdata/uniform-fedavg holds the metrics of
// the bundled FedAvg scenarios (2 runs of 30 rounds each) written by maple
// before importance sampling existed; the scenarios must reproduce them byte
// for byte, with the policies left at their defaults and set explicitly.
func TestUniformImportanceIsFedAvgByteForByte(t *testing.T) {
	t.Parallel()
	bundled := map[string]string{
		"quickstart":        "../../scenarios/quickstart.yaml",
		"thesis-regression": "../../scenarios/fedavg/thesis-regression.yaml",
		"step-size-sweep":   "../../scenarios/fedavg/step-size-sweep.yaml",
		"privatized":        "../../scenarios/fedavg/privatized.yaml",
	}
	base := []string{"runs=2", "iterations=30", "output.every=1", "output.plot=false"}
	explicit := append(base[:len(base):len(base)], "algorithm.fedavg.importance={agents: uniform, data: uniform}")
	for name, file := range bundled {
		want, err := os.ReadFile(filepath.Join("testdata", "uniform-fedavg", name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		for _, overrides := range [][]string{base, explicit} {
			p, err := scenarios.LoadFile(file, overrides)
			if err != nil {
				t.Fatal(err)
			}
			dir, _ := execute(t, p, run.Options{Engine: run.Reference})
			got, err := os.ReadFile(filepath.Join(dir, "metrics.csv"))
			if err != nil {
				t.Fatal(err)
			}
			// metrics.csv has since gained the runs' standard deviations
			// and, with an override, a longer curve label: compare the
			// columns the recorded file has.
			if !bytes.Equal(projectCSV(t, got, want, len(overrides) == len(base)), want) {
				t.Errorf("%s with %v: metrics differ from FedAvg's before importance sampling", name, overrides[len(overrides)-1])
			}
		}
	}
}

// Impossible importance-sampling settings are refused before anything runs,
// naming the field.
func TestImportanceValidationNamesTheField(t *testing.T) {
	t.Parallel()
	cases := []struct {
		overrides []string
		want      string
	}{
		{[]string{"algorithm.fedavg.importance.agents=clever"}, `algorithm.fedavg.importance.agents: unknown policy "clever"`},
		{[]string{"algorithm.fedavg.importance.data=fixed"}, `algorithm.fedavg.importance.data: unknown value "fixed"`},
		{[]string{"algorithm.fedavg={participation: full, importance: {agents: partial}}"}, "algorithm.fedavg.importance.agents: policy partial needs partial participation"},
		{[]string{"algorithm.fedavg.participation=full"}, "t.yaml:8: algorithm.fedavg.participants: does not apply: participation full takes every agent"},
		{[]string{"algorithm.fedavg.importance.agents=adaptive", "algorithm.fedavg.schedule=per-round"}, "algorithm.fedavg.importance.agents: policy adaptive needs E_k and B_k fixed per agent"},
		{[]string{"algorithm.fedavg.importance.probabilities=[1]"}, "algorithm.fedavg.importance.probabilities: does not apply"},
		{[]string{"algorithm.fedavg.importance={agents: fixed, probabilities: [0.5, 0.5]}"}, "one probability per agent (data.agents = 12), got 2"},
		{[]string{"algorithm.fedavg.importance={agents: fixed, probabilities: [0.5, 0.5, 0.1, -0.1, 0, 0, 0, 0, 0, 0, 0, 0]}"}, "algorithm.fedavg.importance.probabilities[3]: must be a non-negative number"},
		{[]string{"algorithm.fedavg.importance={agents: fixed, probabilities: [0.5, 0.5, 0.1, 0, 0, 0, 0, 0, 0, 0, 0, 0]}"}, "algorithm.fedavg.importance.probabilities: must sum to 1, got 1.1"},
		{[]string{"algorithm.fedavg.importance={agents: fixed, probabilities: [0.5, 0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}"}, "only 2 agents have a positive probability, fewer than the 4 distinct participants"},
		{[]string{"algorithm.fedavg.participants=13", "algorithm.fedavg.importance.agents=partial"}, "algorithm.fedavg.participants: 13 agents cannot be sampled without replacement"},
		{[]string{"output.baseline=FedAvg"}, `output.baseline: names no curve listed under curves: "FedAvg"`},
		{[]string{"output.claims={other: text}"}, `output.claims: names no curve of the plan: "other"`},
		{[]string{"output.plot_from=-1"}, "output.plot_from: must be at least 0"},
	}
	for _, c := range cases {
		_, err := scenarios.Parse([]byte(small), "t.yaml", t.TempDir(), c.overrides)
		if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.overrides, err, c.want)
		}
	}
	// Full participation without participants is accepted.
	if _, err := scenarios.Parse([]byte(small), "t.yaml", t.TempDir(), []string{"algorithm.fedavg={participation: full}"}); err != nil {
		t.Errorf("full participation: %v", err)
	}
}

// output.baseline compares every curve with the baseline curve of the same
// sweep values; output.claims are copied beside the measurements.
func TestBaselineGainAndClaims(t *testing.T) {
	t.Parallel()
	src := small + `curves:
  - {label: plain, set: {algorithm.fedavg.batch: 1}}
  - {label: "IS, partial", set: {algorithm.fedavg.importance: {agents: partial, data: partial}}}
sweep:
  algorithm.step_size: [0.05, 0.02]
output:
  baseline: plain
  linear: true
  claims: {"IS, partial, step_size=0.02": "better"}
`
	_, res := execute(t, plan(t, src), run.Options{Engine: run.Reference})
	byLabel := map[string]rundir.CurveSummary{}
	for _, c := range res.Summary.Curves {
		byLabel[c.Label] = c
	}
	for _, mu := range []string{"0.05", "0.02"} {
		base, is := byLabel["plain, step_size="+mu], byLabel["IS, partial, step_size="+mu]
		if base.Baseline != "" || base.Gain != nil {
			t.Errorf("the baseline curve compares with %q", base.Baseline)
		}
		want := base.SteadyState["msd_db"] - is.SteadyState["msd_db"]
		if is.Baseline != base.Label || is.Gain["msd_db"] != want {
			t.Errorf("%s: baseline %q gain %v, want %q and %v", is.Label, is.Baseline, is.Gain, base.Label, want)
		}
	}
	if c := byLabel["IS, partial, step_size=0.02"].Claim; c != "better" {
		t.Errorf("claim %q, want %q", c, "better")
	}
}

// projectCSV returns the columns of the CSV got that the CSV like has, in
// its order; unless labels, the curve column is copied from like.
func projectCSV(t *testing.T, got, like []byte, labels bool) []byte {
	t.Helper()
	g, err := csv.NewReader(bytes.NewReader(got)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	l, err := csv.NewReader(bytes.NewReader(like)).ReadAll()
	if err != nil || len(l) != len(g) {
		t.Fatalf("%d rows against %d recorded (%v)", len(g), len(l), err)
	}
	index := map[string]int{}
	for i, name := range g[0] {
		index[name] = i
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	for r, row := range g {
		var out []string
		for _, name := range l[0] {
			i, ok := index[name]
			if !ok {
				t.Fatalf("metrics.csv lacks the column %s", name)
			}
			out = append(out, row[i])
			if name == "curve" && !labels && r > 0 {
				out[len(out)-1] = l[r][0]
			}
		}
		if err := w.Write(out); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return buf.Bytes()
}
