package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	"maple/actors"
	afedavg "maple/actors/fedavg"
)

// TestMain lets a test run the test binary as maple itself (with
// MAPLE_TEST_MAIN=1), to send it signals. The tests run maple from the
// repository root, where the bundled scenarios and the docs are, as a user
// of the commands in the docs would.
func TestMain(m *testing.M) {
	if os.Getenv("MAPLE_TEST_MAIN") == "1" {
		os.Exit(Execute(os.Args[1:], os.Stdout, os.Stderr))
	}
	if err := os.Chdir(".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	originDir, _ = os.Getwd()
	os.Exit(m.Run())
}

// aliasBomb is a few hundred bytes of nested anchors expanding to 10⁹ values.
const aliasBomb = `&a [x, x, x, x, x, x, x, x, x, x]
y: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
z: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
w: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
v: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
u: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
s: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
r: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
q: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
`

// flowBomb is the same on one line, for --set.
const flowBomb = "[&a [x, x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a], " +
	"&c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c], " +
	"&e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d], &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e], " +
	"&g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f], &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]]"

const tiny = `name: tiny
runs: 1
iterations: 3
data: {agents: 5, samples: 20}
algorithm: {kind: fedavg, step_size: 0.05, fedavg: {participants: 2}}
output: {plot: false}
`

// Hostile and extreme inputs: each is refused with exit status 2 and one line
// naming what is wrong, quickly, and leaves no runs/ directory behind; a panic
// is an internal error (status 3), not a crash with status 2.
func TestHostileInputs(t *testing.T) {
	t.Chdir(t.TempDir())
	files := map[string]string{
		"tiny.yaml":             tiny,
		"bomb-description.yaml": tiny + "description: " + aliasBomb,
		"bomb-label.yaml":       tiny + "x: " + aliasBomb + "curves:\n  - {label: *i, set: {runs: 2}}\n",
		"bomb-sweep.yaml":       tiny + "x: " + aliasBomb + "sweep:\n  algorithm.step_size: *i\n",
		"two.yaml":              tiny + "---\nname: second\n",
		"escape.yaml":           strings.Replace(tiny, "name: tiny", "name: ../../escape", 1),
		"newline.yaml":          strings.Replace(tiny, "name: tiny", `name: "two\nlines"`, 1),
		"svm.yaml":              strings.Replace(tiny, "data: {agents: 5, samples: 20}", "data: {kind: libsvm, agents: 5, libsvm: {file: missing.svm}}", 1),
		"full/summary.json":     "{}",
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, errOut := maple(t, "run", "tiny.yaml", "--trace", "--out", "traced"); code != 0 {
		t.Fatalf("traced run: exit %d\n%s%s", code, out, errOut)
	}
	const huge = "9223372036854775807"
	fig4 := filepath.Join(originDir, "scenarios/decentralized/fig4.yaml")
	t.Setenv("TMPDIR", t.TempDir()) // for the stack trace of the panic
	cases := []struct {
		args []string
		code int    // the exit status
		want string // the first line of stderr starts with "maple: " + want
	}{
		{[]string{"run", "bomb-description.yaml"}, 2, "bomb-description.yaml: scenario too large once its aliases are expanded"},
		{[]string{"validate", "bomb-label.yaml"}, 2, "bomb-label.yaml: scenario too large once its aliases are expanded"},
		{[]string{"run", "bomb-sweep.yaml"}, 2, "bomb-sweep.yaml: scenario too large once its aliases are expanded"},
		{[]string{"run", "--set", "description=" + flowBomb}, 2, "--set description=[&a [x, x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, …: description: scenario too large"},
		{[]string{"run", "/dev/zero"}, 2, "/dev/zero: cannot read scenario: not a regular file: a character device"},
		{[]string{"run", "--set", "runs=" + huge}, 2, "--set runs=" + huge + ": runs: the plan needs about"},
		{[]string{"run", "--set", "iterations=" + huge}, 2, "--set iterations=" + huge + ": iterations: the plan needs about"},
		{[]string{"run", "--set", "data.dim=100000000"}, 2, "--set data.dim=100000000: data.dim: the plan needs about"},
		{[]string{"validate", "svm.yaml"}, 2, "svm.yaml:4: data.libsvm.file: missing LIBSVM file missing.svm: get it from https://"},
		// 10⁷ agents of 1000 samples, every one training at once: about 260
		// GB of data and agents (drawn lazily, two of them would fit).
		{[]string{"validate", "tiny.yaml", "--set", "data.agents=10000000", "--set", "data.samples=1000", "--set", "algorithm.fedavg.participants=10000000"}, 2, "--set data.agents=10000000: data.agents: the plan needs about 2"},
		{[]string{"run", "--workers", "-5"}, 2, "--workers: must be a positive number of parallel runs"},
		{[]string{"run", "two.yaml"}, 2, "two.yaml:7: a second YAML document starts here"},
		{[]string{"run", "escape.yaml"}, 2, `escape.yaml:1: name: names the run directory, so it must not contain / or \, got "../../escape"`},
		{[]string{"run", "newline.yaml"}, 2, `newline.yaml:1: name: must be one line of text without control characters, got "two\nlines"`},
		// Compressed, Fig. 4's 20 runs trace to about 0.75 GB; 100 runs would not fit the 1 GB default.
		{[]string{"run", fig4, "--trace", "--set", "runs=100"}, 2, fig4 + ": trace: tracing would write about 4"},
		{[]string{"run", "--trace-limit", "lots"}, 2, `--trace-limit: expected a positive size such as 500MB or 20GB, or none, got "lots"`},
		{[]string{"run", "tiny.yaml", "--out", "full"}, 2, "--out full: the directory is not empty (it holds summary.json)"},
		{[]string{"run", "tiny.yaml", "--force"}, 2, "--force only applies with --out"},
		{[]string{"trace", "traced", "--type", "Bogus"}, 2, `traced: unknown message type "Bogus": the trace holds Done, GlobalModel, LocalModel, Start, Tick`},
		{[]string{"trace", "traced", "--actor", "agent/9"}, 2, `traced: unknown actor "agent/9": the trace holds agent/`},
		{[]string{"trace", "traced", "--curve", "nope"}, 2, `traced: unknown curve "nope": the trace holds "tiny"`},
		{[]string{"trace", "traced", "--run", "4"}, 2, `traced: unknown run 4: the trace holds runs 0`},
		{[]string{"test-panic"}, 3, "internal error: test panic in a command"},
	}
	for _, c := range cases {
		code, _, errOut := maple(t, c.args...)
		first, _, _ := strings.Cut(errOut, "\n")
		lines := 1 // a user error is one line; an internal error adds a request for a report
		if c.code == 3 {
			lines = 2
		}
		if code != c.code || strings.Count(errOut, "\n") != lines || !strings.HasPrefix(first, "maple: "+c.want) {
			t.Errorf("%.80q: exit %d, stderr %q\nwant exit %d and %d line(s) starting with %q", c.args, code, errOut, c.code, lines, "maple: "+c.want)
		}
	}
	if _, err := os.Stat("runs"); !os.IsNotExist(err) {
		t.Errorf("refused runs left a runs/ directory behind (%v)", err)
	}
}

// originDir is the repository root, where the tests start (t.Chdir moves
// away from it).
var originDir string

// Re-running into a directory that holds an earlier run's outputs is refused;
// with --force maple's files are replaced, so no stale trace stays beside the
// new results.
func TestForceReplacesAnEarlierRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if code, _, errOut := maple(t, "run", "--out", dir, "--trace", "--set", "runs=1", "--set", "iterations=3"); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, _ := maple(t, "run", "--out", dir, "--set", "runs=1", "--set", "iterations=3"); code != 2 {
		t.Errorf("a second run into the same directory: exit %d, want 2", code)
	}
	if code, _, errOut := maple(t, "run", "--out", dir, "--force", "--set", "runs=1", "--set", "iterations=3"); code != 0 {
		t.Fatal(errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "trace.jsonl.zst")); !os.IsNotExist(err) {
		t.Error("--force left the earlier run's trace.jsonl.zst")
	}
}

func init() {
	// Test-only ways to panic: a hidden command and a FedAvg server.
	addCommand(func(*globalFlags) *cobra.Command {
		return &cobra.Command{Use: "test-panic", Hidden: true, RunE: func(*cobra.Command, []string) error {
			panic("test panic in a command")
		}}
	})
	afedavg.RegisterServer(afedavg.Server{Name: "test-panic", Behaviour: func(afedavg.ServerParts) actors.Behaviour { return panicking{} }, ActorOnly: true})
}

type panicking struct{}

func (panicking) Receive(*actors.Context, proto.Message) error { panic("test panic in a behaviour") }

// A panic — in the command or in an actor — exits with status 3 (not 2, as an
// unrecovered Go panic would), a line naming the error and a line asking for
// a report; the stack trace goes to a file, not the terminal.
func TestPanicExitsThree(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	cases := map[string][]string{
		"command": {"test-panic"},
		"actor":   {"run", "--out", filepath.Join(t.TempDir(), "o"), "--set", "algorithm.fedavg.server=test-panic", "--set", "runs=1"},
	}
	for name, args := range cases {
		code, _, errOut := maple(t, args...)
		// The actor engine also logs the failure (at the default level,
		// errors are logged); the last two lines are the report.
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		lines = lines[max(0, len(lines)-2):]
		if code != 3 || len(lines) != 2 || !strings.HasPrefix(lines[0], "maple: ") || !strings.Contains(lines[1], "this is a bug in maple") || strings.Contains(errOut, "goroutine ") {
			t.Errorf("%s: exit %d, stderr %q; want exit 3, the error and a request for a report", name, code, errOut)
			continue
		}
		file := regexp.MustCompile(`the stack trace is in (\S+)\)`).FindStringSubmatch(lines[1])
		if file == nil {
			t.Errorf("%s: no stack trace file named in %q", name, lines[1])
			continue
		}
		if b, err := os.ReadFile(file[1]); err != nil || !strings.Contains(string(b), "goroutine") {
			t.Errorf("%s: stack trace file %s: %v", name, file[1], err)
		}
	}
}

// SIGINT or SIGTERM during a run stops it, writes the finished runs with
// summary.json marked partial, removes the temporary traces, says so on
// stderr and exits with status 130. The test runs its own binary as maple
// and signals it once a run's trace file shows that two runs are done.
func TestSignalWritesFinishedRuns(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		dir := filepath.Join(t.TempDir(), "out")
		cmd := exec.Command(os.Args[0], "run", "--out", dir, "--trace", "--trace-limit", "none", "--workers", "1",
			"--set", "runs=1000", "--set", "iterations=50", "--set", "output.plot=false")
		cmd.Env = append(os.Environ(), "MAPLE_TEST_MAIN=1")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		third := filepath.Join(dir, ".trace-0000-000002.part") // run 2 started: runs 0 and 1 are done
		var err error
	wait:
		for {
			select {
			case err = <-exited:
				t.Fatalf("%v: maple exited before the signal: %v\n%s", sig, err, stderr.String())
			case <-time.After(10 * time.Millisecond):
				if _, serr := os.Stat(third); serr == nil {
					cmd.Process.Signal(sig)
					err = <-exited
					break wait
				}
			}
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("%v: maple ended with %v, want exit status 130\n%s", sig, err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "maple: interrupted: wrote the ") {
			t.Errorf("%v: stderr does not say what was written:\n%s", sig, stderr.String())
		}
		var summary struct {
			Partial       bool `json:"partial"`
			RunsCompleted int  `json:"runs_completed"`
			RunsPlanned   int  `json:"runs_planned"`
		}
		if err := json.Unmarshal(read(t, filepath.Join(dir, "summary.json")), &summary); err != nil {
			t.Fatal(err)
		}
		if !summary.Partial || summary.RunsCompleted < 2 || summary.RunsPlanned != 1000 {
			t.Errorf("%v: summary %+v, want partial with at least 2 of 1000 runs", sig, summary)
		}
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if strings.Join(names, " ") != "metrics.csv scenario.yaml summary.json trace.jsonl.zst" {
			t.Errorf("%v: the run directory holds %v", sig, names)
		}
	}
}
