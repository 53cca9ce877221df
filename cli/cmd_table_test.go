package cli

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fedpltSmall shrinks a Fed-PLT scenario to a size the tests can afford.
var fedpltSmall = []string{"--set", "data.agents=8", "--set", "data.samples=40", "--set", "data.test_samples=20", "--set", "runs=2"}

// A Fed-PLT run with random participation, mini-batches and privacy noise
// writes byte-identical metrics and traces at any GOMAXPROCS and number of
// parallel runs (the figures, drawn from the metrics alone, are
// TestOutputsAreByteIdenticalAcrossGOMAXPROCS's).
func TestFedPLTOutputsAreByteIdenticalAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	extra := append([]string{"scenarios/fedplt/table6.yaml", "--set", "iterations=6",
		"--set", "algorithm.fedplt.participation={kind: bernoulli, probability: [0.3, 0.9]}",
		"--set", "algorithm.fedplt.solvers=[{agents: [0, 2], kind: sgd, batch: 5}, {agents: [3, 4], kind: noisy-gd, noise: 0.01, clip: 4}]",
		"--set", "curves=[{label: a, set: {algorithm.fedplt.rho: 0.5}}]", "--set", "output.plot=false"}, fedpltSmall...)
	dir0 := checkByteIdentical(t, "", 2, extra)
	if _, out, _ := maple(t, "trace", dir0, "--type", "PLTUpdate", "--limit", "1"); !strings.Contains(out, " PLTUpdate ") {
		t.Error("the trace holds no PLTUpdate")
	}
}

// smallFedPLT is a scenario small enough for the CLI tests.
const smallFedPLT = `name: small
runs: 1
iterations: 5
data:
  kind: logistic
  agents: 8
  samples: 40
  test_samples: 20
algorithm:
  kind: fedplt
output:
  plot: false
`

// Impossible Fed-PLT settings exit with status 2 and one line naming the
// field — including a step above the stability bound, which only the data
// reveal.
func TestFedPLTBadInputExitsTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, dir, "small.yaml", smallFedPLT)
	cases := []struct {
		sets  []string
		field string
	}{
		{[]string{"algorithm.fedplt.rho=0"}, "algorithm.fedplt.rho"},
		{[]string{"algorithm.fedplt.rho=-1"}, "algorithm.fedplt.rho"},
		{[]string{"algorithm.fedplt.local_epochs=0"}, "algorithm.fedplt.local_epochs"},
		{[]string{"algorithm.fedplt.participation={kind: bernoulli, probability: [0, 0.5]}"}, "algorithm.fedplt.participation.probability"},
		{[]string{"algorithm.fedplt.participation={kind: bernoulli, probability: 1.5}"}, "algorithm.fedplt.participation.probability"},
		{[]string{"algorithm.fedplt.solver.step=5"}, "algorithm.fedplt.solver.step"},
		{[]string{"algorithm.fedplt.solvers=[{agents: [1, 2], kind: gd, step: 5}]"}, "algorithm.fedplt.solvers[0].step"},
		{[]string{"algorithm.fedplt.method=fedlin", "algorithm.fedplt.participation={kind: subset, fraction: 0.5}"}, "algorithm.fedplt.participation.kind"},
		{[]string{"network.gradient_time=1"}, "network.gradient_time"},
		{[]string{"algorithm.step_size=0.1"}, "algorithm.step_size"},
		// The monitor measures ‖x̄ − x⋆‖ and the stacked error against the
		// reference solution: without one the run used to panic (exit 3).
		{[]string{"loss.optimum=none"}, "loss.optimum"},
		// Solver fields of another kind would be silently ignored: a noise
		// level with plain GD adds no noise and reports no privacy.
		{[]string{"algorithm.fedplt.solver.noise=0.1"}, "algorithm.fedplt.solver.noise"},
		{[]string{"algorithm.fedplt.solver.clip=2"}, "algorithm.fedplt.solver.clip"},
		{[]string{"algorithm.fedplt.solvers=[{agents: [0, 1], kind: gd, batch: 5}]"}, "algorithm.fedplt.solvers[0].batch"},
		// Another method's parameters would be silently ignored too.
		{[]string{"algorithm.fedplt.fedpd.eta=2"}, "algorithm.fedplt.fedpd"},
		{[]string{"algorithm.fedplt.method=led", "algorithm.fedplt.rho=0.5"}, "algorithm.fedplt.rho"},
	}
	for _, tc := range cases {
		args := []string{"run", "--out", filepath.Join(dir, "out"), file}
		for _, s := range tc.sets {
			args = append(args, "--set", s)
		}
		code, out, errOut := maple(t, args...)
		if code != 2 || !strings.Contains(errOut, tc.field+":") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("--set %v: exit %d, stderr %q (stdout %q); want exit 2 and one line naming %s", tc.sets, code, errOut, out, tc.field)
		}
	}
}

// A run that diverges stops there and is reported with its round.
func TestFedPLTDivergenceIsReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeFile(t, dir, "small.yaml", smallFedPLT)
	out := filepath.Join(dir, "out")
	// LED with a correction step 25 times its stable range.
	code, stdout, errOut := maple(t, "run", "--out", out, file, "--set", "iterations=200",
		"--set", "algorithm.fedplt.method=led", "--set", "algorithm.fedplt.led.beta=5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(stdout, "DIVERGED at iteration") {
		t.Errorf("the terminal output does not report the divergence:\n%s", stdout)
	}
	summary := string(read(t, filepath.Join(out, "summary.json")))
	if !strings.Contains(summary, `"diverged_at": `) || !strings.Contains(summary, `"diverged_at_round": `) {
		t.Errorf("the summary does not report the divergence round:\n%s", summary)
	}
}

// maple table prints the paper's layout with maple's numbers beside the
// paper's, in text, CSV and Markdown.
func TestTableCommand(t *testing.T) {
	t.Parallel()
	small := append([]string{"--set", "runs=1"}, fedpltSmall[:6]...)
	for format, want := range map[string][]string{
		"text":     {"Table II", "Fed-PLT", "13.5k (9)", "maple", "paper", "Nonconvex"},
		"csv":      {"table,row,column,quantity,maple,maple_iterations,converged,paper,paper_iterations", "Table II,FedLin,Convex,time,"},
		"markdown": {"| Fed-PLT |", "| Convex: maple | Convex: paper |", "70.5k (47)"},
	} {
		args := append([]string{"table", "--out", t.TempDir(), "--format", format, "scenarios/fedplt/table2.yaml"}, small...)
		code, out, errOut := maple(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", format, code, errOut)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s output lacks %q:\n%s", format, w, out)
			}
		}
	}
	dir := t.TempDir()
	plain := writeFile(t, dir, "plain.yaml", "name: p\nalgorithm:\n  kind: fedplt\n")
	if code, _, errOut := maple(t, "table", plain); code != 2 || !strings.Contains(errOut, "algorithm.fedplt.table") {
		t.Errorf("a scenario without table cells: exit %d, %q", code, errOut)
	}
}
