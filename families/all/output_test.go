package all

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"maple/figures"
	"maple/rundir"
	"maple/scenarios/run"
)

// readTable returns metrics.csv of a run directory as its header lines and
// its rows, each a map from column name to cell.
func readTable(t *testing.T, dir string) (headers int, rows []map[string]string) {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(read(t, filepath.Join(dir, "metrics.csv")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var header []string
	for _, r := range recs {
		if r[0] == "curve" && r[1] == "iteration" {
			header, headers = r, headers+1
			continue
		}
		row := map[string]string{}
		for k, name := range header {
			row[name] = r[k]
		}
		rows = append(rows, row)
	}
	return headers, rows
}

// The disagreement of diffusion is exactly 0 at iteration 0, every agent
// starting from the same w0: its dB cell is left empty, not −Inf, and
// metrics.csv and summary.json hold no infinity (JSON has none).
func TestZeroHasNoDecibels(t *testing.T) {
	t.Parallel()
	dir, _ := execute(t, plan(t, lgh, "privacy.scheme=none", "runs=1", "iterations=3"), run.Options{})
	_, rows := readTable(t, dir)
	if r := rows[0]; r["iteration"] != "0" || r["disagreement"] != "0" || r["disagreement_db"] != "" {
		t.Errorf("iteration %s: disagreement %q, dB %q; want 0 and an empty dB cell", r["iteration"], r["disagreement"], r["disagreement_db"])
	}
	if r := rows[1]; r["disagreement_db"] == "" || r["msd_centroid_db"] == "" {
		t.Errorf("iteration %s: dB cells of positive values are empty: %v", r["iteration"], r)
	}
	if csv := string(read(t, filepath.Join(dir, "metrics.csv"))); strings.Contains(csv, "Inf") {
		t.Errorf("metrics.csv holds an infinity:\n%s", csv)
	}
	if !json.Valid(read(t, filepath.Join(dir, "summary.json"))) {
		t.Error("summary.json is not valid JSON")
	}
}

// Curves with different columns — graph federated learning with and without
// server-level noise, which adds centroid_noise — share one header, the
// union of their columns, and a curve leaves the cells of a column it does
// not have empty.
func TestMetricsIsOneTable(t *testing.T) {
	t.Parallel()
	p := plan(t, graphflSmall, "runs=1", "iterations=3",
		"curves=[{label: clear, set: {privacy.scheme: none}}, {label: noisy, set: {privacy.scheme: random}}]")
	dir, _ := execute(t, p, run.Options{})
	headers, rows := readTable(t, dir)
	if headers != 1 {
		t.Errorf("metrics.csv has %d header lines, want 1", headers)
	}
	for _, r := range rows {
		_, has := r["centroid_noise"]
		filled := r["centroid_noise"] != "" && r["centroid_noise_std"] != "" && r["centroid_noise_db"] != ""
		empty := r["centroid_noise"] == "" && r["centroid_noise_std"] == "" && r["centroid_noise_db"] == ""
		if !has || (r["curve"] == "noisy" && !filled && r["iteration"] != "0") || (r["curve"] == "clear" && !empty) {
			t.Errorf("curve %s, iteration %s: centroid_noise cells %q %q %q", r["curve"], r["iteration"], r["centroid_noise"], r["centroid_noise_std"], r["centroid_noise_db"])
		}
		if r["msd_centroid"] == "" {
			t.Errorf("curve %s, iteration %s: shared column msd_centroid is empty", r["curve"], r["iteration"])
		}
	}
	if got := slices.IndexFunc(rows, func(r map[string]string) bool { return r["curve"] == "noisy" }); got < 0 {
		t.Error("no rows of the noisy curve")
	}
}

// A sweep of three or more positive values draws the steady state against
// them; the figures' title is the scenario's description.
func TestSweepDrawsTheSteadyStateAgainstTheParameter(t *testing.T) {
	t.Parallel()
	src := small + "description: Step sizes\nsweep:\n  algorithm.step_size: [0.01, 0.02, 0.04]\n"
	dir, res := execute(t, plan(t, src, "runs=2"), run.Options{Engine: run.Reference})
	for _, f := range []string{"steady-msd-vs-step_size.png", "steady-msd-vs-step_size.svg", "msd.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s (files %v)", f, res.Files)
		}
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "msd.svg"))
	if !strings.Contains(string(svg), ">Step sizes<") || strings.Contains(string(svg), ">small<") {
		t.Error("the figure's title is not the scenario's description")
	}
}

// A column that reports the swept value itself (the Gamma mechanism's θ) is
// not drawn against it; the others are. The run draws no figure: the
// figures it would draw are figures.Charts of its run directory's curves,
// as maple plot draws them (rendering the sixteen PNGs cost the most of
// this test under the race detector).
func TestSweepSkipsTheSweptColumn(t *testing.T) {
	t.Parallel()
	src := "name: g\nruns: 1\niterations: 6\noutput: {plot: false}\nalgorithm:\n  kind: gamma-mechanism\n" +
		"  gamma-mechanism: {l_range: [1, 2], theta: 1, epsilon_max: 6, samples: 200}\n" +
		"sweep:\n  algorithm.gamma-mechanism.theta: [0.5, 1, 2]\n"
	dir, _ := execute(t, plan(t, src), run.Options{})
	charts := chartNames(t, dir)
	if !charts["steady-delta-vs-theta"] {
		t.Errorf("no chart steady-delta-vs-theta (charts %v)", charts)
	}
	if charts["steady-theta-vs-theta"] {
		t.Error("θ drawn against θ")
	}
}

// chartNames returns the names of the figures maple would draw from a run
// directory (figures.Charts of its curves).
func chartNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	r, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	charts, err := figures.Charts(figures.Options{GroupBy: r.Output.GroupBy}, r.Curves())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range charts {
		names[c.Name] = true
	}
	return names
}
