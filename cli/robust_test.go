package cli

import (
	"bufio"
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

// originDir is the repository root, where the tests start (t.Chdir moves
// away from it).
var originDir string

// Re-running into a directory that holds an earlier run's outputs is refused;
// with --force maple's files are replaced, so no stale trace stays beside the
// new results.
func TestForceReplacesAnEarlierRun(t *testing.T) {
	t.Parallel()
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
	// A command that handles interrupts like maple run, then never
	// finishes its writing: a step that ignores the abandonment.
	addCommand(func(*globalFlags) *cobra.Command {
		return &cobra.Command{Use: "test-hang", Hidden: true, RunE: func(cmd *cobra.Command, _ []string) error {
			_, abort, stop := interruption(cmd.Context(), cmd.ErrOrStderr())
			defer stop()
			fmt.Fprintln(cmd.ErrOrStderr(), "ready")
			<-abort
			select {}
		}}
	})
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
	t.Parallel()
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

// A second SIGINT or SIGTERM ends maple at once even when a step of the
// writing ignores it: here a command that never finishes, which exits with
// status 130 a moment (abandonGrace) after the second signal, saying so.
func TestSecondSignalEndsTheProcess(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := exec.Command(os.Args[0], "test-hang")
		cmd.Env = append(os.Environ(), "MAPLE_TEST_MAIN=1")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() }) // if it failed to exit
		lines := bufio.NewScanner(stderr)
		var said []string
		next := func() string {
			if !lines.Scan() {
				return ""
			}
			said = append(said, lines.Text())
			return lines.Text()
		}
		if l := next(); l != "ready" {
			t.Fatalf("%v: first line %q", sig, l)
		}
		cmd.Process.Signal(sig)
		if l := next(); !strings.HasPrefix(l, "maple: interrupted: ") {
			t.Fatalf("%v: after the first signal %q", sig, l)
		}
		cmd.Process.Signal(sig)
		for next() != "" {
		}
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(strings.Join(said, "\n"), "maple: interrupted again: still writing after 1s, exiting") {
			t.Errorf("%v: %v, stderr %q; want exit status 130 and the reason", sig, err, said)
		}
	}
}
