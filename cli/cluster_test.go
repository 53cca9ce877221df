package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"maple/cluster"
)

// clusterSecret is the shared secret of the tests' clusters.
const clusterSecret = "a secret the tests share, 32 bytes"

// mapleProcess returns the command that runs maple (this test binary) with
// args, bounded by ctx, with the cluster's secret in its environment and
// its temporary files in the test's.
func mapleProcess(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), "MAPLE_TEST_MAIN=1", cluster.SecretEnv+"="+clusterSecret, "TMPDIR="+t.TempDir())
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// startWorkerProcess starts `maple worker` on a free loopback port, with
// the flags extra, and returns the address it prints; the test stops it
// (SIGTERM) when it ends.
func startWorkerProcess(t *testing.T, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	cmd := mapleProcess(t, ctx, append([]string{"worker", "--listen", "127.0.0.1:0", "--slots", "2"}, extra...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("maple worker: %v\n%s", err, stderr.String())
		}
		cancel()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	const prefix = "maple worker listening on "
	if err != nil || !strings.HasPrefix(line, prefix) {
		t.Fatalf("maple worker printed %q (%v)\n%s", line, err, stderr.String())
	}
	addr, _, _ := strings.Cut(strings.TrimPrefix(line, prefix), " ")
	if !strings.HasPrefix(addr, "127.0.0.1:") || !strings.Contains(line, "(actors at 127.0.0.1:") {
		t.Errorf("the worker does not listen on loopback only: %q", line)
	}
	return addr
}

// freePort returns a loopback port no process listens on, for a moment.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// maple run --cluster writes, from two worker processes, the run directory
// maple run writes alone: every file but provenance.json, byte for byte,
// with the trace.
func TestRunOnAClusterWritesTheSameRunDirectory(t *testing.T) {
	t.Parallel()
	workers := startWorkerProcess(t) + "," + startWorkerProcess(t)
	args := []string{"run", "scenarios/fedavg/step-size-sweep.yaml", "--set", "runs=2", "--set", "iterations=6", "--trace"}
	alone := filepath.Join(t.TempDir(), "alone")
	if code, _, errOut := maple(t, append(args, "--out", alone)...); code != 0 {
		t.Fatalf("maple run: exit %d\n%s", code, errOut)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	together := filepath.Join(t.TempDir(), "cluster")
	cmd := mapleProcess(t, ctx, append(args, "--out", together, "--cluster", workers)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("maple run --cluster: %v\n%s", err, out)
	}
	entries, _ := os.ReadDir(alone)
	for _, e := range entries {
		if e.Name() == "provenance.json" {
			continue
		}
		if !bytes.Equal(read(t, filepath.Join(alone, e.Name())), read(t, filepath.Join(together, e.Name()))) {
			t.Errorf("%s differs", e.Name())
		}
	}
	if len(entries) < 5 {
		t.Errorf("the run directory holds %d files", len(entries))
	}
}

// SIGINT stops a coordinator as it stops a run alone: the finished runs are
// written, summary.json says partial, and maple exits with status 130. The
// worker advertises the address of its actors (--advertise, --remote-port),
// as in a container: the runs it finishes show the coordinator reaches it
// there.
func TestSignalStopsACoordinator(t *testing.T) {
	t.Parallel()
	workers := startWorkerProcess(t, "--advertise", "127.0.0.1", "--remote-port", freePort(t))
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := mapleProcess(t, ctx, "run", "--out", dir, "--trace", "--trace-limit", "none", "--cluster", workers,
		"--set", "runs=1000", "--set", "iterations=50", "--set", "output.plot=false")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Runs 0 and 1 arrived once both their traces are in: the summary
	// counts the runs that finished before the first that did not, and with
	// several slots run 1 may arrive before run 0.
	arrived := func() bool {
		for _, name := range []string{".trace-0000-000000.part", ".trace-0000-000001.part"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				return false
			}
		}
		return true
	}
	var err error
wait:
	for {
		select {
		case err = <-exited:
			t.Fatalf("maple exited before the signal: %v\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
			if arrived() {
				cmd.Process.Signal(syscall.SIGINT)
				err = <-exited
				break wait
			}
		}
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("maple ended with %v, want exit status 130\n%s", err, stderr.String())
	}
	var summary struct {
		Partial       bool `json:"partial"`
		RunsCompleted int  `json:"runs_completed"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(dir, "summary.json")), &summary); err != nil {
		t.Fatal(err)
	}
	if !summary.Partial || summary.RunsCompleted < 2 {
		t.Errorf("summary %+v, want partial with at least 2 runs", summary)
	}
}

// A coordinator whose workers hold another secret says so, naming each
// worker, as soon as the worker refuses its seal and in its final error.
func TestCoordinatorSaysWorkersRefusedItsSeal(t *testing.T) {
	t.Parallel()
	worker := startWorkerProcess(t, "--secret-file", private(t, "the worker's own secret, not the cluster's\n"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := mapleProcess(t, ctx, "run", "--out", filepath.Join(t.TempDir(), "out"), "--cluster", worker, "--cluster-wait", "1s",
		"--set", "runs=1", "--set", "iterations=3")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	why := "worker " + worker + " refused this coordinator's seal: the two do not hold the same cluster secret"
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.HasPrefix(last, "maple: no worker of the cluster took the plan's jobs for 1s") ||
		!strings.Contains(last, why) || strings.Count(string(out), why) != 2 {
		t.Errorf("maple run --cluster: %v\n%s\nwant exit 1 and, logged then in the last line: %s", err, out, why)
	}
}

// Cluster flags that cannot apply are refused with exit status 2, naming
// the flag.
func TestClusterFlagsAreCheckedAsInput(t *testing.T) {
	os.Setenv(cluster.SecretEnv, clusterSecret)
	defer os.Unsetenv(cluster.SecretEnv)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--cluster", "127.0.0.1:7070", "--workers", "2"}, "--workers: with --cluster"},
		{[]string{"run", "--cluster-listen", "10.0.0.1"}, "--cluster-listen only applies with --cluster"},
		{[]string{"run", "--cluster", "localhost"}, `invalid argument "localhost" for "--cluster" flag: expected host:port`},
		{[]string{"run", "--cluster", "127.0.0.1:7070", "--cluster-listen", "0.0.0.0"}, "--cluster-listen: expected the IP address"},
		{[]string{"run", "--cluster", "127.0.0.1:7070", "--cluster-listen", "10.0.0.1:x"}, `--cluster-listen: expected a port number from 0 to 65535, got "x"`},
		{[]string{"run", "--cluster", "127.0.0.1:7070", "--cluster-listen", "example.org"}, "--cluster-listen: expected the IP address"},
		{[]string{"run", "--cluster", "127.0.0.1:7070", "--cluster-wait", "-1s"}, "--cluster-wait: must be a positive duration"},
		{[]string{"run", "--cluster", "127.0.0.1:7070", "--cluster-secret-file", "/nonexistent"}, "--cluster-secret-file:"},
		{[]string{"worker", "--listen", "0.0.0.0:7070"}, "--listen: \"0.0.0.0:7070\" listens on every interface: give --advertise"},
		{[]string{"worker", "--listen", "7070"}, "--listen: expected host:port"},
		{[]string{"worker", "--slots", "-1"}, "--slots: must be a number of jobs from 1 to 1024"},
		{[]string{"worker", "--secret-file", private(t, "short\n")}, "--secret-file: the shared secret has 5 bytes"},
		{[]string{"worker", "--advertise", "10.0.0.11"}, "--advertise needs --remote-port"},
		{[]string{"worker", "--advertise", "10.0.0.11:7071", "--remote-port", "7071"}, `--advertise: expected an IP address or a host name, got "10.0.0.11:7071"`},
		{[]string{"worker", "--listen", "not a host:7070"}, `--listen: expected an IP address or a host name, got "not a host"`},
		{[]string{"worker", "--listen", "192.0.2.1:7070"}, "--listen: 192.0.2.1 is not an address of this host"},
		{[]string{"worker", "--slots", "100000000"}, "--slots: must be a number of jobs from 1 to 1024"},
		{[]string{"worker", "--remote-port", "70000"}, "--remote-port: expected a port number"},
		{[]string{"worker", "--cache", writeFile(t, t.TempDir(), "file", "")}, "is not a directory"},
	} {
		code, _, errOut := maple(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("maple %s: exit %d, %q; want exit 2 and one line with %q", strings.Join(c.args, " "), code, errOut, c.want)
		}
	}
	os.Unsetenv(cluster.SecretEnv)
	if code, _, errOut := maple(t, "worker"); code != 2 || !strings.Contains(errOut, "--secret-file: no shared secret: give a secret file or set "+cluster.SecretEnv) {
		t.Errorf("maple worker without a secret: exit %d, %q", code, errOut)
	}
}

// private writes content to a new file readable only by its owner (mode
// 600, as a secret file must be) and returns its path.
func private(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
