package all

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"maple/actors/trace"
	"maple/scenarios"
	"maple/scenarios/run"
)

// hostileFedAvg turns every systems feature on: compute times per step with
// slow devices, bandwidth, jitter, loss, duplication, dropouts, crashes and an
// availability trace, a deadline server and sign-flip adversaries.
const hostileFedAvg = small + `network:
  latency: 0.05
  jitter: 0.02
  bandwidth: 4000
  step_time: {kind: lognormal, median: 0.1, sigma: 0.5}
  classes:
    - {name: slow, fraction: 0.25, slowdown: 10, latency: 0.1, dropout: 0.3}
  loss: 0.05
  duplicate: 0.05
  dropout: 0.1
  availability: avail.csv
  crashes: {rate: 0.01, at: [{agent: 2, round: 10}]}
output: {x_axis: time, plot: false}
`

// systemsPlan parses src in a directory holding the availability trace.
func systemsPlan(t *testing.T, src string, overrides ...string) *scenarios.Plan {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "avail.csv"), []byte("agent,from,to\n3,0,2\n3,5,1e9\n7,1,1e9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := scenarios.Parse([]byte(src), "t.yaml", dir, overrides)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var fedavgPolicies = [][]string{
	{"algorithm.fedavg.collect={kind: deadline, seconds: 1.5}", "algorithm.fedavg.adversary={kind: sign-flip, fraction: 0.2}"},
	{"algorithm.fedavg.collect={kind: first-k, k: 3, seconds: 3, reweight: false}", "algorithm.fedavg.participants=6", "algorithm.fedavg.server=median"},
	{"algorithm.fedavg.server={kind: fedasync, alpha: 0.5, staleness: polynomial, timeout: 4}"},
	{"algorithm.fedavg.server={kind: fedbuff, buffer: 2, staleness: hinge, timeout: 4}", "algorithm.fedavg.adversary={kind: gaussian, fraction: 0.2, std: 0.3}"},
}

// Under every fault and time feature, the actor engine and the event-driven
// reference write the same metrics.csv byte for byte: models, virtual times
// and the per-round counts of dropped, late and lost messages.
func TestSystemsEnginesAgree(t *testing.T) {
	t.Parallel()
	for _, set := range fedavgPolicies {
		p := systemsPlan(t, hostileFedAvg, set...)
		a, res := execute(t, p, run.Options{Engine: run.Actors})
		r, _ := execute(t, p, run.Options{Engine: run.Reference})
		ma, _ := os.ReadFile(filepath.Join(a, "metrics.csv"))
		mr, _ := os.ReadFile(filepath.Join(r, "metrics.csv"))
		if !bytes.Equal(ma, mr) {
			t.Errorf("%v: metrics differ between engines:\n%s\n---\n%s", set, head(ma), head(mr))
		}
		if !strings.HasPrefix(string(ma), "curve,iteration,msd,msd_std,msd_db,time,time_std,dropped,dropped_std,late,late_std,lost,lost_std\n") {
			t.Errorf("%v: header %q", set, head(ma))
		}
		d, _ := res.Summary.Curves[0].Details["systems"].(map[string]any)
		if d["lost"] == nil || d["virtual_time"] == nil || d["classes"] == nil {
			t.Errorf("%v: systems details %v", set, d)
		}
	}
}

func head(b []byte) string {
	lines := strings.SplitN(string(b), "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}

// Same scenario and seed give byte-identical metrics.csv and trace.jsonl at
// GOMAXPROCS 1 and 4, with every fault enabled, for a synchronous and an
// asynchronous server.
func TestSystemsOutputsAreByteIdenticalAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p := systemsPlan(t, hostileFedAvg, "curves=[{label: deadline, set: {algorithm.fedavg.collect: {kind: deadline, seconds: 1.5}}}, {label: fedbuff, set: {algorithm.fedavg.server: {kind: fedbuff, buffer: 2, timeout: 4}}}]")
	var metrics, traces [][]byte
	for _, c := range []struct{ procs, workers int }{{1, 1}, {4, 4}} {
		runtime.GOMAXPROCS(c.procs)
		dir, _ := execute(t, p, run.Options{Trace: true, Workers: c.workers})
		m, _ := os.ReadFile(filepath.Join(dir, "metrics.csv"))
		metrics, traces = append(metrics, m), append(traces, traceLines(t, dir))
	}
	if !bytes.Equal(metrics[0], metrics[1]) {
		t.Error("metrics.csv differs between GOMAXPROCS 1 and 4")
	}
	if !bytes.Equal(traces[0], traces[1]) || !bytes.Contains(traces[0], []byte(`"lost":true`)) || !bytes.Contains(traces[0], []byte(`"duplicate":true`)) {
		t.Error("trace.jsonl differs between GOMAXPROCS 1 and 4, or shows no lost and duplicated messages")
	}
}

// With the systems model switched on but every rate zero (a fixed compute
// time, time on the x axis), the model metrics are today's, digit for digit.
func TestZeroFaultRatesKeepTodaysNumbers(t *testing.T) {
	t.Parallel()
	plain, _ := execute(t, plan(t, small), run.Options{})
	timed, _ := execute(t, plan(t, small, "network.step_time={kind: fixed, value: 0.5}", "output.x_axis=time",
		"network.loss=0", "network.dropout=0"), run.Options{})
	a := readCSV(t, filepath.Join(plain, "metrics.csv"))
	b := readCSV(t, filepath.Join(timed, "metrics.csv"))
	if len(a) != len(b) {
		t.Fatalf("%d and %d rows", len(a), len(b))
	}
	for i := range a {
		// Columns curve, iteration, msd, msd_std, msd_db, then the time
		// column.
		if strings.Join(a[i][1:5], ",") != strings.Join(b[i][1:5], ",") {
			t.Fatalf("row %d: %v without the systems model, %v with it", i, a[i], b[i])
		}
	}
	if b[0][5] != "time" || b[2][5] == "0" {
		t.Errorf("time column %v", b[:3])
	}
	// Every metric is also drawn against virtual time.
	for _, f := range []string{"msd.png", "msd-by-time.png"} {
		if _, err := os.Stat(filepath.Join(timed, f)); err != nil {
			t.Errorf("with output.x_axis time: %v", err)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// Under wait-all, a dropout stops the run with one error naming the round,
// the agents the server waits for and why they did not answer; the
// reference engine fails with the same words.
func TestWaitAllDropoutFailsClearly(t *testing.T) {
	t.Parallel()
	p := plan(t, small, "network.dropout=0.3")
	_, aerr := run.Execute(p, t.TempDir(), run.Options{Engine: run.Actors})
	_, rerr := run.Execute(p, t.TempDir(), run.Options{Engine: run.Reference})
	if aerr == nil || rerr == nil {
		t.Fatalf("errors %v and %v, want failures", aerr, rerr)
	}
	for _, want := range []string{"run stalled", "server: round 1 waits for the replies of agent/", "dropped out in round 1"} {
		if !strings.Contains(aerr.Error(), want) {
			t.Errorf("actor error %q lacks %q", aerr, want)
		}
	}
	if aerr.Error() != rerr.Error() {
		t.Errorf("engines fail differently:\n%v\n%v", aerr, rerr)
	}
}

// Bad systems fields are one line naming the file, line and field; fields a
// family does not model are refused, naming the families that do.
func TestBadSystemsFields(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		src, want string
	}{
		{small + "network: {loss: 1.5}\n", "t.yaml:9: network.loss: must be a probability in [0, 1], got 1.5"},
		{small + "network:\n  step_time: {kind: uniform}\n", "network.step_time.range: kind uniform needs a range"},
		{small + "network:\n  step_time: {kind: fixed, value: 1, median: 2}\n", "network.step_time.median: does not apply to kind fixed"},
		{small + "network:\n  classes:\n    - {name: a, fraction: 0.7}\n    - {name: b, fraction: 0.7}\n", "network.classes: the classes' fractions add up to 1.4"},
		{small + "network:\n  classes:\n    - {name: a, fraction: 0.5, slowdown: 0}\n", "t.yaml:11: network.classes[0].slowdown: must be a positive number"},
		{small + "network:\n  crashes: {at: [{agent: 40, round: 3}]}\n", "network.crashes.at[0].agent: agent 40 does not exist"},
		{small + "output: {x_axis: seconds}\n", `output.x_axis: unknown value "seconds"`},
		{strings.Replace(small, "participants: 4", "participants: 4, collect: {kind: first-k, k: 9}", 1), "algorithm.fedavg.collect.k: the first 9 replies of a round of 4 draws"},
		{strings.Replace(small, "participants: 4", "participants: 4, server: {kind: fedbuff, buffer: 5}", 1), "algorithm.fedavg.server.buffer: a buffer of 5 updates"},
		{strings.Replace(small, "participants: 4", "participants: 4, server: fedasync, collect: {kind: deadline}", 1), "algorithm.fedavg.collect: does not apply: server fedasync is asynchronous"},
		{strings.Replace(small, "participants: 4", "participants: 4, importance: {agents: partial}", 1) + "network: {dropout: 0.1}\n", "algorithm.fedavg.importance: importance sampling assumes every sampled reply arrives"},
		{strings.Replace(strings.Replace(small, "kind: fedavg", "kind: graphfl", 1), "fedavg: {participants: 4, local_steps: [1, 3], batch: [1, 5]}", "graphfl: {}", 1) + "network: {loss: 0.1}\n",
			"network.loss: algorithm.kind graphfl does not model it (it is modelled by: "},
	} {
		_, err := scenarios.Parse([]byte(c.src), "t.yaml", ".", nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\ngot  %v\nwant %s", c.src, err, c.want)
		}
	}
	// A missing or malformed availability trace is found before running.
	p := plan(t, small, "network.availability=missing.csv")
	if err := run.Check(p); err == nil || !strings.Contains(err.Error(), "network.availability: cannot open") {
		t.Errorf("missing trace: %v", err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.csv"), []byte("agent,from,to\n1,5,2\n"), 0o644)
	p, _ = scenarios.Parse([]byte(small+"network: {availability: bad.csv}\n"), "t.yaml", dir, nil)
	if err := run.Check(p); err == nil || !strings.Contains(err.Error(), "bad.csv:2: window [5, 2] ends before it starts") {
		t.Errorf("bad trace: %v", err)
	}
}

// smallDiffusion is ATC on a random geometric graph of 10 agents.
const smallDiffusion = `name: atc
runs: 2
iterations: 20
data: {agents: 10, samples: [20, 30]}
algorithm: {kind: diffusion, step_size: 0.05}
topology: {graph: geometric, radius: 0.5, min_degree: 2}
output: {plot: false}
`

var diffusionVariants = [][]string{
	{"topology.link_failure=0.3", "network.dropout=0.1", "network.crashes={at: [{agent: 4, round: 12}]}"},
	{"topology.link_failure=0.3", "privacy.scheme=local-graph-homomorphic", "privacy.variance=0.1"},
	{"topology.link_failure=0.3", "privacy.scheme=local-graph-homomorphic", "privacy.variance=0.1", "algorithm.diffusion.dropped_partner=drop-mask"},
	{"topology.link_failure=0.3", "privacy.scheme=local-graph-homomorphic", "privacy.variance=0.1", "privacy.keys=oracle", "algorithm.diffusion.dropped_partner=re-key"},
	{"algorithm.diffusion.mode=async", "algorithm.diffusion.wait=0.05", "output.x_axis=time", "network.latency=0.02", "network.jitter=0.01",
		"network.loss=0.1", "network.duplicate=0.05", "network.dropout=0.05", "network.step_time={kind: uniform, range: [0.5, 1.5], redraw: per-step}",
		"network.classes=[{name: slow, fraction: 0.2, slowdown: 10}]", "privacy.scheme=random", "privacy.variance=0.01"},
}

// Decentralized runs on time-varying graphs (with the dropped-partner
// policies) and asynchronous runs under faults give the same metrics.csv on
// both engines.
func TestDiffusionSystemsEnginesAgree(t *testing.T) {
	t.Parallel()
	for _, set := range diffusionVariants {
		p := plan(t, smallDiffusion, set...)
		a, res := execute(t, p, run.Options{Engine: run.Actors})
		r, _ := execute(t, p, run.Options{Engine: run.Reference})
		ma, _ := os.ReadFile(filepath.Join(a, "metrics.csv"))
		mr, _ := os.ReadFile(filepath.Join(r, "metrics.csv"))
		if !bytes.Equal(ma, mr) {
			t.Errorf("%v: metrics differ between engines:\n%s\n---\n%s", set, head(ma), head(mr))
		}
		d, _ := res.Summary.Curves[0].Details["systems"].(map[string]any)
		if strings.Contains(strings.Join(set, " "), "link_failure") && d["disconnected_rounds"] == nil {
			t.Errorf("%v: systems details %v lack disconnected_rounds", set, d)
		}
		lgh, ok := d["lgh"].(map[string]any)
		if ok != strings.Contains(strings.Join(set, " "), "local-graph") {
			t.Errorf("%v: lgh details %v", set, d["lgh"])
		}
		if ok {
			r, _ := lgh["residual_max"].(float64)
			repaired := strings.Contains(strings.Join(set, " "), "dropped_partner")
			if lgh["uncancelled_pairs"] == 0 || repaired != (r < 1e-12) {
				t.Errorf("%v: lgh details %v", set, lgh)
			}
		}
	}
	// The reference engine has no clock for synchronous decentralized runs.
	p := plan(t, smallDiffusion, "output.x_axis=time")
	if _, err := run.Execute(p, t.TempDir(), run.Options{Engine: run.Reference}); err == nil || !strings.Contains(err.Error(), "output.x_axis: the reference engine has no virtual time") {
		t.Errorf("x_axis time on the reference: %v", err)
	}
}

// Decentralized runs with every fault they model give byte-identical
// metrics.csv and trace.jsonl at GOMAXPROCS 1 and 4.
func TestDiffusionSystemsByteIdenticalAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p := plan(t, smallDiffusion, "curves=[{label: tv, set: {topology.link_failure: 0.3, network.dropout: 0.1, privacy.scheme: local-graph-homomorphic, privacy.variance: 0.1, algorithm.diffusion.dropped_partner: re-key}}, {label: async, set: {algorithm.diffusion.mode: async, network.loss: 0.1, network.duplicate: 0.1, network.jitter: 0.01, network.latency: 0.02}}]")
	var metrics, traces [][]byte
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		dir, _ := execute(t, p, run.Options{Trace: true, Workers: procs})
		m, _ := os.ReadFile(filepath.Join(dir, "metrics.csv"))
		metrics, traces = append(metrics, m), append(traces, traceLines(t, dir))
	}
	if !bytes.Equal(metrics[0], metrics[1]) || !bytes.Equal(traces[0], traces[1]) {
		t.Error("outputs differ between GOMAXPROCS 1 and 4")
	}
	for _, typ := range []string{"DiffusionLinks", "DiffusionRekey", "DiffusionRekeyedShare", "DiffusionWake"} {
		if !bytes.Contains(traces[0], []byte(`"type":"`+typ+`"`)) {
			t.Errorf("the trace shows no %s", typ)
		}
	}
}

// Fields the decentralized family cannot honour in a mode are refused.
func TestDiffusionSystemsRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"network.loss=0.1"}, "network.loss: does not apply: synchronous agents wait for every share"},
		{[]string{"algorithm.diffusion.mode=async", "algorithm.diffusion.strategy=cta"}, "algorithm.diffusion.strategy: mode async runs strategy atc"},
		{[]string{"algorithm.diffusion.mode=async", "privacy.scheme=graph-homomorphic", "privacy.variance=0.1"}, "privacy.scheme: graph-homomorphic noise cancels only"},
		{[]string{"algorithm.diffusion.mode=async", "topology.link_failure=0.2"}, "topology.link_failure: does not apply: mode async has no rounds"},
		{[]string{"algorithm.diffusion.dropped_partner=re-key"}, "algorithm.diffusion.dropped_partner: does not apply"},
		{[]string{"topology.link_failure=0.2", "privacy.scheme=local-graph-homomorphic", "privacy.variance=0.1", "privacy.keys=paper"}, "privacy.keys: paper keys are exchanged every iteration"},
		{[]string{"network.availability=a.csv"}, "network.availability: algorithm.kind diffusion does not model it"},
		{[]string{"topology.link_failure=1"}, "topology.link_failure: must be a probability in [0, 1)"},
	} {
		_, err := scenarios.Parse([]byte(smallDiffusion), "t.yaml", ".", c.set)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v:\ngot  %v\nwant %s", c.set, err, c.want)
		}
	}
}

// traceLines returns the records of a run directory's trace as JSON lines.
func traceLines(t *testing.T, dir string) []byte {
	t.Helper()
	tr, err := trace.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var buf bytes.Buffer
	err = tr.Scan(trace.Filter{}, func(rec *trace.Record) error {
		b, err := json.Marshal(rec)
		buf.Write(append(b, '\n'))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
