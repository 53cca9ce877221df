package cli

import (
	"bytes"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// walkArgs shrinks the bundled random-walk figures to test size.
var walkArgs = map[string][]string{
	"fig2": {"scenarios/randomwalk/fig2.yaml", "--set", "runs=2", "--set", "iterations=60", "--set", "data.agents=12", "--set", "output.plot=false"},
	"fig3": {"scenarios/randomwalk/fig3.yaml", "--set", "runs=2", "--set", "iterations=40", "--set", "output.plot=false",
		"--set", "algorithm.randomwalk.walks=2", "--set", "network.latency=0.01", "--set", "network.jitter=0.02"},
}

// Random walks and gossip give byte-identical metrics and traces at
// GOMAXPROCS 1 and 4 (with several workers), and the reference engine writes
// the same metrics as the actor engine.
func TestRandomWalkOutputsAreByteIdentical(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for name, extra := range walkArgs {
		var metrics, traces [][]byte
		for i, procs := range []int{1, 4, 4} {
			runtime.GOMAXPROCS(procs)
			dir := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", "--out", dir}, extra...)
			switch i {
			case 1:
				args = append(args, "--workers", "3", "--trace")
			case 2:
				args = append(args, "--engine", "reference")
			default:
				args = append(args, "--trace")
			}
			if code, out, errOut := maple(t, args...); code != 0 {
				t.Fatalf("%s, %v: exit %d\n%s%s", name, args, code, out, errOut)
			}
			metrics = append(metrics, read(t, filepath.Join(dir, "metrics.csv")))
			if i < 2 {
				traces = append(traces, read(t, filepath.Join(dir, "trace.jsonl.zst")))
			}
		}
		if !bytes.Equal(metrics[0], metrics[1]) || !bytes.Equal(traces[0], traces[1]) {
			t.Errorf("%s: metrics or traces differ between GOMAXPROCS 1 and 4", name)
		}
		if !bytes.Equal(metrics[0], metrics[2]) {
			t.Errorf("%s: metrics differ between the actor engine and the reference:\n%s\n---\n%s", name, metrics[0], metrics[2])
		}
	}
}

// A traced walk shows the set-up exchange and the token's path, and maple
// trace path prints that path; an unknown walk, run or curve exits 2 listing
// the valid ones.
func TestTracedWalkAndItsPath(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	args := append([]string{"run", "--out", dir, "--trace"}, walkArgs["fig3"]...)
	args = append(args, "--set", "curves=[{label: gamma, set: {privacy.scheme: gamma}}]")
	if code, out, errOut := maple(t, args...); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	_, out, _ := maple(t, "trace", dir, "--type", "WalkAnnounce", "--run", "0")
	if n := strings.Count(out, " WalkAnnounce "); n == 0 || !strings.Contains(out, "log_weight=") || !strings.Contains(out, "round=0") {
		t.Errorf("no set-up exchange in the trace (%d announcements):\n%.300s", n, out)
	}
	code, out, errOut := maple(t, "trace", "path", dir, "--walk", "1", "--run", "1")
	if code != 0 || !strings.HasPrefix(out, `walk 1, run 1, curve "gamma, walks=2, latency=0.01, jitter=0.02": starts at node/`) || !strings.Contains(out, " -> node/") {
		t.Errorf("trace path: exit %d\n%s%s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--walk", "5"}, "has no walk 5 (walks: 0, 1)"},
		{[]string{"--walk", "0", "--run", "7"}, "has no run 7 in the trace (runs: 0, 1)"},
		{[]string{"--walk", "0", "--curve", "nope"}, `no curve "nope" in the trace (curves: "gamma, walks=2, latency=0.01, jitter=0.02")`},
		{nil, "give either the walk to follow (--walk N)"},
	} {
		code, _, errOut := maple(t, append([]string{"trace", "path", dir}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestPrivacyGamma(t *testing.T) {
	t.Parallel()
	code, out, errOut := maple(t, "privacy", "gamma", "--epsilon", "3", "--delta", "0.06")
	// Spec random-walk §3.3: θ/inf L = 0.8028 for sup L/inf L = 2, ε = 3, δ = 0.06.
	if code != 0 || !strings.Contains(out, "theta       0.80276") || !strings.Contains(out, "delta       0.06 ") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = maple(t, "privacy", "gamma", "--epsilon", "1", "--theta", "10", "--inf-l", "1", "--sup-l", "10")
	if code != 0 || !strings.Contains(out, "delta       0.77989") {
		t.Errorf("--theta: exit %d\n%s", code, out)
	}
	// The floor is a lower bound on δ only for ε ≥ ln(sup L/inf L): at
	// ε = 0.1 < ln 2, θ = 2 gives δ = 0.678, below the floor 0.695.
	code, out, _ = maple(t, "privacy", "gamma", "--epsilon", "0.1", "--theta", "2")
	if code != 0 || !strings.Contains(out, "delta       0.67788") || !strings.Contains(out, "floor       0.694649") ||
		strings.Contains(out, "no θ gives less") || !strings.Contains(out, "dips slightly below it") {
		t.Errorf("--epsilon 0.1 --theta 2: exit %d\n%s", code, out)
	}
	if _, out, _ = maple(t, "privacy", "gamma", "--epsilon", "1", "--theta", "2"); !strings.Contains(out, "no θ gives less") {
		t.Errorf("--epsilon 1 --theta 2: the floor bounds δ at ε ≥ ln 2\n%s", out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--epsilon", "1", "--delta", "1e-5"}, "no θ reaches δ = 1e-05 at ε = 1 with sup L/inf L = 2 (the floor δ_∞ is 0.18394)"},
		{[]string{"--delta", "0.1"}, "--epsilon"},
		{[]string{"--epsilon", "1"}, "exactly one of --delta"},
		{[]string{"--epsilon", "1", "--theta", "-1"}, "--theta: need θ > 0"},
		{[]string{"--epsilon", "1", "--delta", "0.1", "--inf-l", "0"}, "--inf-l, --sup-l"},
	} {
		code, _, errOut := maple(t, append([]string{"privacy", "gamma"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

const walkScenario = `name: walk
runs: 1
iterations: 10
data: {kind: mixture, agents: 6, samples: 1, dim: 2}
algorithm:
  kind: randomwalk
  step_size: 0.01
  randomwalk: {target: importance}
topology: {graph: file, file: edges.txt}
`

// Bad random-walk input is refused before anything runs: exit 2 and one line
// naming the file, the line and the field.
func TestBadRandomWalkInputExitsTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	write("edges.txt", "0 1\n1 2\n3 4\n4 5\n") // two components
	write("ring.txt", "0 1\n1 2\n2 3\n3 4\n4 5\n5 0\n")
	ring := strings.Replace(walkScenario, "edges.txt", "ring.txt", 1)
	cases := []struct {
		name, src string
		want      []string
	}{
		{"disconnected", walkScenario, []string{":9: topology.file:", "not strongly connected"}},
		{"theta", strings.Replace(ring, "{target: importance}", "{target: importance, mechanism: {theta: 0}}", 1) + "privacy: {scheme: gamma}\n",
			[]string{":8: algorithm.randomwalk.mechanism.theta:", "θ must be a positive number"}},
		{"q", strings.Replace(ring, "{target: importance}", "{target: importance, exponent: 0.5}", 1),
			[]string{":8: algorithm.randomwalk.exponent:", "(1/2, 1]"}},
		{"q above 1", strings.Replace(ring, "{target: importance}", "{target: importance, exponent: 1.5}", 1),
			[]string{"algorithm.randomwalk.exponent:"}},
		{"no data", strings.Replace(ring, "samples: 1", "samples: 0", 1), []string{":4: data.samples:"}},
		{"unreachable delta", ring + "privacy: {scheme: gamma}\n", []string{"algorithm.randomwalk.mechanism.delta:", "cannot be reached"}},
		{"gamma on uniform", strings.Replace(ring, "target: importance", "target: uniform", 1) + "privacy: {scheme: gamma}\n",
			[]string{"privacy.scheme:", "needs protocol walk and target importance"}},
		{"weights", strings.Replace(ring, "file: ring.txt}", "file: ring.txt, weights: averaging}", 1), []string{"topology.weights:", "does not apply"}},
		{"variance", ring + "privacy: {variance: 0.5}\n", []string{"privacy.variance:", "does not apply"}},
		{"gossip walks", strings.Replace(ring, "{target: importance}", "{protocol: gossip, walks: 2}", 1), []string{"algorithm.randomwalk.walks:", "protocol gossip has no walk"}},
	}
	for _, c := range cases {
		path := write(c.name+".yaml", c.src)
		for _, cmd := range []string{"validate", "run"} {
			args := []string{cmd, path}
			if cmd == "run" {
				args = append(args, "--out", filepath.Join(dir, "o"))
			}
			code, _, errOut := maple(t, args...)
			if code != 2 || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s, %s: exit %d, stderr %q; want exit 2 and one line", c.name, cmd, code, errOut)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("%s, %s: stderr %q lacks %q", c.name, cmd, errOut, w)
				}
			}
		}
	}
}
