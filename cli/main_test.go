package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// maple runs the command line in-process and returns its exit status and
// output.
func maple(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Execute(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeFile writes content to the file name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The default command must work on a fresh machine: the embedded scenario,
// a run directory with metrics, summary and a plot.
func TestRunWithoutFileUsesTheEmbeddedScenario(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errOut := maple(t, "run", "--out", dir, "--set", "runs=2", "--set", "iterations=20")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, f := range []string{"scenario.yaml", "metrics.csv", "summary.json", "msd.png", "msd.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}
	if !strings.Contains(out, "run directory: "+dir) {
		t.Errorf("output does not name the run directory:\n%s", out)
	}
	// One curve: the header and iterations 0–20.
	if lines := strings.Count(string(read(t, filepath.Join(dir, "metrics.csv"))), "\n"); lines != 22 {
		t.Errorf("metrics.csv has %d lines, want 22 (header + iterations 0–20)", lines)
	}
}

// Same scenario and seed give byte-identical outputs (metrics, summary,
// trace, figures), whatever GOMAXPROCS and the number of parallel runs: for
// federated averaging (the default scenario), for decentralized learning with
// every privacy scheme, whose local graph-homomorphic traces carry X25519
// public keys, and for an MLP.
func TestOutputsAreByteIdenticalAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	// The figures are drawn from the metrics alone, single-threaded: the
	// FedAvg case checks them; the others leave them out (under the race
	// detector, drawing and compressing them is most of a run's time).
	scenarios := map[string][]string{
		"fedavg":    {"--set", "runs=4", "--set", "iterations=15"},
		"diffusion": {"scenarios/decentralized/fig4.yaml", "--set", "runs=2", "--set", "iterations=4", "--set", "sweep={algorithm.diffusion.strategy: [cta]}", "--set", "output.plot=false"},
		"mlp": {"--set", "data.kind=blobs", "--set", "loss.kind=mlp", "--set", "loss.hidden=6", "--set", "data.dim=4",
			"--set", "data.test_samples=200", "--set", "runs=3", "--set", "iterations=8", "--set", "output.plot=false"},
	}
	for name, extra := range scenarios {
		checkByteIdentical(t, name+": ", 2, extra)
	}
}

// checkByteIdentical runs `maple run --out DIR --trace extra...` at
// GOMAXPROCS 1, at GOMAXPROCS procs, and at GOMAXPROCS procs with 3 parallel
// workers, and fails the test, each message starting with prefix, unless the
// three wrote byte-identical outputs: every file but provenance.json (which
// records the command line) — metrics, summary, trace and figures. It
// returns the first run's directory. The caller restores GOMAXPROCS.
func checkByteIdentical(t *testing.T, prefix string, procs int, extra []string) (dir0 string) {
	t.Helper()
	var dirs []string
	for i, procs := range []int{1, procs, procs} {
		runtime.GOMAXPROCS(procs)
		dir := filepath.Join(t.TempDir(), "out")
		args := append([]string{"run", "--out", dir, "--trace"}, extra...)
		if i == 2 {
			args = append(args, "--workers", "3")
		}
		if code, out, errOut := maple(t, args...); code != 0 {
			t.Fatalf("%sGOMAXPROCS=%d: exit %d\n%s%s", prefix, procs, code, out, errOut)
		}
		dirs = append(dirs, dir)
	}
	files, err := os.ReadDir(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Errorf("%sonly %d files written", prefix, len(files))
	}
	for _, f := range files {
		if f.Name() == "provenance.json" {
			continue
		}
		want := read(t, filepath.Join(dirs[0], f.Name()))
		for i := 1; i < len(dirs); i++ {
			if !bytes.Equal(want, read(t, filepath.Join(dirs[i], f.Name()))) {
				t.Errorf("%s%s of execution %d differs from execution 0", prefix, f.Name(), i)
			}
		}
	}
	return dirs[0]
}

const badScenario = `name: bad
data:
  agents: 10
  colour: red
algorithm:
  kind: fedavg
`

func TestUserErrorsExitTwoWithOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.yaml", badScenario)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", bad, "--out", filepath.Join(dir, "o")}, bad + ":4: data.colour: unknown field"},
		{[]string{"validate", bad}, bad + ":4: data.colour: unknown field"},
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, "cannot read scenario"},
		{[]string{"run", "--set", "algorithm.step_size=-1", "--out", filepath.Join(dir, "o2")}, "--set algorithm.step_size=-1: algorithm.step_size: must be a positive number"},
		{[]string{"run", "--no-such-flag"}, "unknown flag"},
		{[]string{"run", "a.yaml", "b.yaml"}, "accepts at most 1 arg"},
		{[]string{"run", "--engine", "quantum"}, "--engine: expected actors or reference"},
		{[]string{"trace", dir}, "has no trace"},
		{[]string{"run", "--out", filepath.Join(dir, "o3"), "--set", "data.kind=libsvm", "--set", "loss.kind=logistic", "--set", "data.dim=22",
			"--set", "data.libsvm.file=" + filepath.Join(dir, "ijcnn1.tr")}, "data.libsvm.file: missing LIBSVM file " + filepath.Join(dir, "ijcnn1.tr") + ": get it from https://"},
		{[]string{"run", "--out", filepath.Join(dir, "o4"), "--set", "algorithm.fedavg.importance.probabilities=[0.5, 0.6]",
			"--set", "algorithm.fedavg.importance.agents=fixed"}, "algorithm.fedavg.importance.probabilities: policy fixed needs one probability per agent"},
	}
	for _, c := range cases {
		code, _, errOut := maple(t, c.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", c.args, code, errOut)
		}
		if !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: stderr %q, want one line containing %q", c.args, errOut, c.want)
		}
	}
}

func TestValidateAcceptsTheBundledScenarios(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("scenarios/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled scenarios found: %v", err)
	}
	files = append(files, "scenarios/quickstart.yaml")
	code, out, errOut := maple(t, append([]string{"validate"}, files...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if strings.Count(out, ": ok (") != len(files) {
		t.Errorf("validate output:\n%s", out)
	}
}

// A traced run holds one line per message, and maple trace filters it by
// round, actor and type.
func TestTraceHoldsEveryMessageAndFilters(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	if code, out, errOut := maple(t, "run", "--out", dir, "--trace", "--set", "runs=1", "--set", "iterations=3",
		"--set", "data.agents=5", "--set", "algorithm.fedavg.participants=2"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// Per round: Tick, 2 GlobalModel, 2 LocalModel, Done; plus one Start.
	_, all, _ := maple(t, "trace", dir, "--json")
	if n := strings.Count(all, "\n"); n != 1+3*6 {
		t.Errorf("the trace has %d records, want 19", n)
	}
	code, out, errOut := maple(t, "trace", dir, "--round", "2", "--type", "GlobalModel")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("round 2 GlobalModel messages:\n%s", out)
	}
	for _, l := range lines {
		if !strings.Contains(l, "round=2 server -> agent/") || !strings.Contains(l, "GlobalModel") || !strings.Contains(l, "dim=2") {
			t.Errorf("unexpected line %q", l)
		}
	}
	_, out, _ = maple(t, "trace", dir, "--actor", "scheduler", "--json")
	if n := strings.Count(out, "\n"); n != 1+3*2 {
		t.Errorf("scheduler sends or receives %d messages, want 7 (Start, and Tick and Done per round):\n%s", n, out)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, _ := maple(t, "version")
	if code != 0 || !strings.HasPrefix(out, "maple ") {
		t.Errorf("version: exit %d, output %q", code, out)
	}
}

const decentralized = `name: ring
runs: 1
iterations: 3
data: {agents: 4, samples: 20, dim: 2}
loss: {rho: 0.01}
algorithm: {kind: diffusion, step_size: 0.1}
topology: {graph: file, file: edges.txt, min_degree: 1}
`

// A bad topology is a user error: exit 2 and one line naming the field, the
// file and what is wrong with it.
func TestBadTopologyExitsTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	write("edges.txt", "0 1\n2 3\n") // two components
	write("bad.txt", "0.5 0.5 0 0\n0.5 0.5 0 0\n0 0 0.5 0.5\n0 0 0.4 0.5\n")
	disconnected := write("disconnected.yaml", decentralized)
	matrix := write("matrix.yaml", strings.Replace(decentralized, "graph: file, file: edges.txt", "graph: matrix, weights: file, matrix: bad.txt", 1))
	cases := []struct {
		path string
		want []string
	}{
		{disconnected, []string{"disconnected.yaml:7: topology.file:", "not strongly connected", "agent 2 never receives information from agent 0"}},
		{matrix, []string{"matrix.yaml:7: topology.matrix:", "column 2 (the weights receiver 2 uses) sums to 0.9, not 1"}},
	}
	for _, c := range cases {
		for _, cmd := range []string{"validate", "run"} {
			args := []string{cmd, c.path}
			if cmd == "run" {
				args = append(args, "--out", filepath.Join(dir, "o"))
			}
			code, _, errOut := maple(t, args...)
			if code != 2 || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s %s: exit %d, stderr %q; want exit 2 and one line", cmd, c.path, code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("%s %s: stderr %q lacks %q", cmd, c.path, errOut, w)
				}
			}
		}
	}
}

// A traced local graph-homomorphic run shows the whole protocol on the links:
// role announcements, public keys and their relays, and the masked shares.
func TestTracedLocalGraphHomomorphicRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errOut := maple(t, "run", "scenarios/decentralized/fig4.yaml", "--out", dir, "--trace",
		"--set", "runs=1", "--set", "iterations=2", "--set", "curves=[{label: lgh, set: {privacy.scheme: local-graph-homomorphic}}]",
		"--set", "sweep={algorithm.diffusion.strategy: [atc]}")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// The set-up is round 0, the shares round 1 and 2.
	for typ, round := range map[string]string{"RoleAssign": "0", "PublicKey": "0", "RelayedPublicKey": "0", "StageShare": "1"} {
		_, out, _ := maple(t, "trace", dir, "--type", typ, "--round", round)
		if !strings.Contains(out, " "+typ+" ") {
			t.Errorf("round %s has no %s message", round, typ)
		}
		_, out, _ = maple(t, "trace", dir, "--type", typ, "--round", map[string]string{"0": "1", "1": "0"}[round])
		if out != "" {
			t.Errorf("%s messages outside round %s:\n%.300s", typ, round, out)
		}
	}
	_, out, _ = maple(t, "trace", dir, "--type", "RoleAssign", "--json")
	if !strings.Contains(out, `"role":"MASK_ROLE_PLUS"`) || !strings.Contains(out, `"role":"MASK_ROLE_MINUS"`) {
		t.Errorf("role announcements do not show the roles:\n%.400s", out)
	}
}

// The reference engine applies every combination rule the actor engine's
// servers offer, so a robust server prints the same steady state on both
// (the quick start once gave −30.7 dB on the reference against −32.95 dB).
func TestReferenceEngineRunsTheRobustServers(t *testing.T) {
	t.Parallel()
	for _, server := range []string{"median", "trimmed-mean"} {
		var lines []string
		for _, engine := range []string{"actors", "reference"} {
			dir := filepath.Join(t.TempDir(), "out")
			code, out, errOut := maple(t, "run", "--out", dir, "--engine", engine, "--set", "runs=2", "--set", "iterations=30",
				"--set", "output.plot=false", "--set", "algorithm.fedavg.server="+server)
			if code != 0 {
				t.Fatalf("%s on %s: exit %d\n%s%s", server, engine, code, out, errOut)
			}
			_, steady, _ := strings.Cut(out, "steady state")
			// The reference engine warns that it has no virtual time.
			kept := slices.DeleteFunc(strings.Split(steady, "\n"), func(l string) bool { return strings.HasPrefix(l, "    warning: ") })
			lines = append(lines, strings.Join(kept, "\n"))
		}
		if lines[0] != lines[1] || !strings.Contains(lines[0], "msd_db=") {
			t.Errorf("%s: actors print %q, reference %q", server, lines[0], lines[1])
		}
	}
}

// A run that ends during the transient says so on the console.
func TestConsoleWarnsOfARunStillTrending(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errOut := maple(t, "run", "--out", dir, "--engine", "reference", "--set", "runs=5", "--set", "iterations=100",
		"--set", "algorithm.step_size=0.01", "--set", "output.plot=false")
	if code != 0 || !strings.Contains(out, "still trending: msd_db changes by -") || !strings.Contains(out, "over iterations 90–100") {
		t.Errorf("exit %d, output:\n%s%s", code, out, errOut)
	}
}

// maple data prints how a scenario's data are dealt out, without running it;
// a scenario whose IDX file is missing names the Debian package, exit 2.
func TestDataCommand(t *testing.T) {
	t.Parallel()
	code, out, errOut := maple(t, "data", "scenarios/quickstart.yaml", "--set", "data.kind=blobs", "--set", "loss.kind=softmax",
		"--set", "data.partition={kind: shards, shards: 1}", "--set", "data.agents=3", "--set", "data.samples=20",
		"--set", "algorithm.fedavg.participants=3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"quickstart, data.kind=blobs, loss.kind=softmax, partition={kind: shards, shards: …, agents=3, samples=20, participants=3: blobs, partition shards, run 0", "3 agents, 60 training samples, 1000 test samples, 2 features, 9 parameters",
		"samples                  20       20       20", "classes (of 3)            1        1"} {
		if !strings.Contains(out, want) {
			t.Errorf("maple data output lacks %q:\n%s", want, out)
		}
	}
	code, _, errOut = maple(t, "data", "scenarios/benchmarks/lr-mnist.yaml", "--set", "data.idx.images=/nonexistent/train.gz")
	if code != 2 || !strings.Contains(errOut, "data.idx.images: /nonexistent/train.gz does not exist: install the Debian package dataset-fashion-mnist") {
		t.Errorf("missing IDX file: exit %d, %s", code, errOut)
	}
}
