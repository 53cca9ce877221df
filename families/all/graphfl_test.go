package all

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// graphflSmall is a small graph federated learning scenario: 4 servers on a
// ring, 5 clients each.
const graphflSmall = `name: gfl
runs: 2
iterations: 12
data: {agents: 20, samples: [10, 20]}
loss: {rho: 0.05}
algorithm:
  kind: graphfl
  step_size: 0.2
  graphfl: {servers: 4, participants: 2, local_steps: [1, 3], batch: [1, 5]}
topology: {graph: ring}
privacy: {variance: 0.01}
output: {plot: false}
`

// column returns the values of the named column of metrics.csv, row by row.
func column(t *testing.T, dir, name string) []string {
	t.Helper()
	rows := readCSV(t, filepath.Join(dir, "metrics.csv"))
	col := -1
	for i, h := range rows[0] {
		if h == name {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("metrics.csv has no column %s: %v", name, rows[0])
	}
	var out []string
	for _, r := range rows[1:] {
		out = append(out, r[0]+" "+r[1]+" "+r[col])
	}
	return out
}

// With one server, graph federated learning is federated averaging: the same
// scenario with algorithm.kind fedavg (the client parameters under
// algorithm.fedavg) gives the same MSD in every round, to the last digit, for
// every client-level privacy scheme, and, for classification, the same test
// error. The same random streams are consumed in the same order, and the
// metrics are computed the same way.
func TestGraphFLWithOneServerEqualsFedAvg(t *testing.T) {
	t.Parallel()
	const clients = `{participants: 4, local_steps: [1, 3], batch: [1, 5], batch_sampling: with-replacement, schedule: per-round}`
	for _, data := range []string{"{agents: 12, samples: [10, 20]}", "{kind: logistic, agents: 12, samples: [30, 40], dim: 4, test_samples: 100}"} {
		for _, scheme := range []string{"none", "model-noise", "update-noise"} {
			common := "name: p1\nruns: 2\niterations: 15\noutput: {plot: false}\ndata: " + data + "\nprivacy: {scheme: " + scheme + ", variance: 0.02}\n"
			fed := common + "algorithm: {kind: fedavg, step_size: 0.1, fedavg: " + clients + "}\n"
			gfl := common + "algorithm: {kind: graphfl, step_size: 0.1, graphfl: {servers: 1, " + clients[1:] + "}\n"
			a, _ := execute(t, plan(t, fed), run.Options{})
			b, _ := execute(t, plan(t, gfl), run.Options{})
			pairs := [][2]string{{"msd", "msd_centroid"}}
			if strings.Contains(data, "logistic") {
				pairs = append(pairs, [2]string{"test_error", "test_error_centroid"})
			}
			for _, pair := range pairs {
				want, got := column(t, a, pair[0]), column(t, b, pair[1])
				if strings.Join(want, "\n") != strings.Join(got, "\n") {
					t.Errorf("%s, %s: graphfl %s differs from fedavg %s:\n%v\n%v", data, scheme, pair[1], pair[0], got[:3], want[:3])
				}
			}
		}
	}
}

// The actor engine and the reference write byte-identical metrics for every
// privacy scheme at both levels.
func TestGraphFLEnginesWriteIdenticalMetrics(t *testing.T) {
	t.Parallel()
	for _, set := range [][]string{
		{"privacy.scheme=none"},
		{"privacy.scheme=random", "privacy.self_noise=true"},
		{"privacy.scheme=random-broadcast"},
		{"privacy.scheme=graph-homomorphic", "algorithm.graphfl.client_noise=update-noise"},
		{"privacy.scheme=local-graph-homomorphic", "algorithm.graphfl.client_noise=model-noise"},
		{"privacy.scheme=local-graph-homomorphic", "privacy.keys=oracle"},
		{"privacy.scheme=model-noise"},
		{"algorithm.graphfl.client_noise=update-noise"},
	} {
		p := plan(t, graphflSmall, set...)
		a, _ := execute(t, p, run.Options{Engine: run.Actors})
		r, _ := execute(t, p, run.Options{Engine: run.Reference})
		ma, _ := os.ReadFile(filepath.Join(a, "metrics.csv"))
		mr, _ := os.ReadFile(filepath.Join(r, "metrics.csv"))
		if !bytes.Equal(ma, mr) {
			t.Errorf("%v: metrics differ between engines", set)
		}
	}
}

// Same scenario and seed give byte-identical metrics.csv and trace.jsonl at
// GOMAXPROCS 1 and 4 and with 1 or 3 workers, with local graph-homomorphic
// masks (whose traces carry public keys) and client noise.
func TestGraphFLOutputsAreByteIdenticalAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p := plan(t, graphflSmall, "privacy.scheme=local-graph-homomorphic", "algorithm.graphfl.client_noise=update-noise", "runs=3",
		"curves=[{label: lgh, set: {}}, {label: gh, set: {privacy.scheme: graph-homomorphic}}]")
	var metrics, traces [][]byte
	for _, c := range []struct{ procs, workers int }{{1, 1}, {4, 4}, {4, 3}} {
		runtime.GOMAXPROCS(c.procs)
		dir, _ := execute(t, p, run.Options{Trace: true, Workers: c.workers})
		m, _ := os.ReadFile(filepath.Join(dir, "metrics.csv"))
		tr, _ := os.ReadFile(filepath.Join(dir, "trace.jsonl.zst"))
		metrics, traces = append(metrics, m), append(traces, tr)
	}
	for i := 1; i < len(metrics); i++ {
		if !bytes.Equal(metrics[0], metrics[i]) {
			t.Errorf("metrics.csv of execution %d differs from execution 0", i)
		}
		if !bytes.Equal(traces[0], traces[i]) || len(traces[i]) == 0 {
			t.Errorf("trace.jsonl.zst of execution %d differs from execution 0", i)
		}
	}
}

// The summary reports, for run 0, the graph-homomorphic residual, the
// traffic by message type, the set-up of local graph-homomorphic masks and the
// privacy accounting at both levels: the bound of the papers beside the
// empirical ε of paired runs.
func TestGraphFLSummaryDetails(t *testing.T) {
	t.Parallel()
	_, res := execute(t, plan(t, graphflSmall, "privacy.scheme=graph-homomorphic", "algorithm.graphfl.client_noise=model-noise",
		"privacy.accountant={b: 1, b_prime: 1, epsilon: 10, norm: l2}"), run.Options{})
	d := res.Summary.Curves[0].Details
	if r, ok := d["gh_residual_max"].(float64); !ok || !(r < 1e-12) {
		t.Errorf("gh_residual_max = %v", d["gh_residual_max"])
	}
	traffic, _ := d["traffic"].(map[string]any)
	for _, typ := range []string{"GlobalModel", "LocalModel", "ServerShare", "Tick", "Done"} {
		if traffic[typ] == nil {
			t.Errorf("traffic lacks %s: %v", typ, traffic)
		}
	}
	// Ring of 4: every server sends 2 shares a round.
	if s, _ := traffic["ServerShare"].(map[string]any); s["messages_per_round"] != 8.0 {
		t.Errorf("ServerShare traffic %v, want 8 messages per round", s)
	}
	for _, key := range []string{"privacy", "client_privacy"} {
		r, _ := d[key].(map[string]any)
		bound, _ := r["epsilon_bound_final"].(float64)
		emp, _ := r["epsilon_empirical_final"].(float64)
		sens, _ := r["epsilon_sensitivity_final"].(float64)
		if !(bound > 0 && emp > 0 && sens > 0) || r["sigma_for_target"] == nil {
			t.Errorf("%s: bound %v, empirical %v, sensitivity %v, σ for target %v", key, bound, emp, sens, r["sigma_for_target"])
		}
	}
	// The server-level sensitivity stays within its high-probability bound
	// here (B = B′ = 1 against models of norm ≈ 1), so the realised chain is
	// below the bound.
	r := d["privacy"].(map[string]any)
	if r["within_bound"] != 1.0 || !(r["epsilon_sensitivity_final"].(float64) <= r["epsilon_bound_final"].(float64)) {
		t.Errorf("server-level accounting %v", r)
	}
}

// Bad configurations are refused before anything runs, naming the field.
func TestGraphFLUserErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("edges.txt", "0 1\n2 3\n")                                            // two components
	write("bad.txt", "0.5 0.5 0 0\n0.5 0.5 0 0\n0 0 0.5 0.5\n0 0 0.4 0.5\n")    // column 2 sums to 0.9
	write("noself.txt", "0 0.5 0 0.5\n0.5 0 0.5 0\n0 0.5 0 0.5\n0.5 0 0.5 0\n") // a_pp = 0
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"algorithm.graphfl.participants=6"}, "algorithm.graphfl.participants: L = 6 clients cannot be sampled without replacement from the K = 5"},
		{[]string{"algorithm.graphfl.servers=3"}, "data.agents: 20 clients cannot be split evenly"},
		{[]string{"topology={graph: file, file: edges.txt}"}, "topology.file: combination matrix is not strongly connected"},
		{[]string{"topology={graph: matrix, weights: file, matrix: bad.txt}"}, "topology.matrix: combination matrix is not stochastic"},
		{[]string{"topology={graph: matrix, weights: file, matrix: noself.txt}", "privacy.scheme=graph-homomorphic"}, "self-weight"},
		{[]string{"privacy.scheme=random", "privacy.variance=-1"}, "privacy.variance: must be a positive number"},
		{[]string{"privacy.scheme=none", "privacy.variance=-1"}, "privacy.variance: must be a non-negative number"},
		{[]string{"algorithm.graphfl.client_noise=model-noise", "privacy.scheme=update-noise"}, "algorithm.graphfl.client_noise: privacy.scheme update-noise already sets the client noise"},
		{[]string{"algorithm.graphfl.client_noise=model-noise", "privacy.variance=0"}, "privacy.variance: must be a positive number"},
		{[]string{"algorithm.graphfl.servers=1", "privacy.scheme=random", "topology.graph=complete"}, "privacy.scheme: random perturbs the exchange between servers"},
		{[]string{"privacy.scheme=local-graph-homomorphic", "privacy.keys=paper"}, "privacy.keys: paper keys are not supported between servers"},
		{[]string{"privacy.scheme=local-graph-homomorphic", "privacy.mechanism=gaussian"}, "privacy.mechanism: local graph-homomorphic masks are Laplace"},
		{[]string{"topology={graph: grid, rows: 2, cols: 3}"}, "topology.rows: rows × cols = 2 × 3 must equal algorithm.graphfl.servers = 4"},
		{[]string{"network.gradient_time=-1"}, "network.gradient_time"},
		{[]string{"algorithm.graphfl.participation=full", "algorithm.graphfl.participants=2"}, "algorithm.graphfl.participants: does not apply: participation full takes every client"},
	} {
		p, err := scenarios.Parse([]byte(graphflSmall), filepath.Join(dir, "s.yaml"), dir, c.set)
		if err == nil {
			_, err = run.Execute(p, t.TempDir(), run.Options{})
		}
		if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a user error containing %q", c.set, err, c.want)
		}
	}
}

// privacy.key_randomness os draws the servers' key pairs from the operating
// system: the run completes and its masks still cancel in the centroid.
func TestGraphFLKeysFromTheOperatingSystem(t *testing.T) {
	t.Parallel()
	_, res := execute(t, plan(t, graphflSmall, "privacy.scheme=local-graph-homomorphic", "privacy.key_randomness=os"), run.Options{})
	if r, ok := res.Summary.Curves[0].Details["gh_residual_max"].(float64); !ok || !(r < 1e-12) {
		t.Errorf("gh_residual_max = %v", res.Summary.Curves[0].Details["gh_residual_max"])
	}
	if w := res.Summary.Curves[0].Warnings; len(w) > 0 {
		t.Errorf("warnings %v", w)
	}
}
