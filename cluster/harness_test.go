package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/zap"

	"maple/cluster/wire"
	"maple/scenarios"
	"maple/scenarios/run"

	_ "maple/families/all" // the workers run every family
)

// The tests run every cluster member as a process of its own, as in use (a
// process runs one protoactor remote: its start sets gRPC's global logger,
// which the connections of an earlier remote in the same process read, a
// data race): the test binary re-executed with workerEnv set runs a worker
// instead of the tests (TestMain), configured by these environment
// variables, and with coordinatorEnv set a coordinator. Each worker listens
// on loopback only, ends when the test that started it stops it, when its
// standard input closes (the test process ended) or after workerLifetime,
// whichever comes first.
const (
	workerEnv      = "MAPLE_CLUSTER_TEST_WORKER"
	coordinatorEnv = "MAPLE_CLUSTER_TEST_COORDINATOR" // a coordSpec, in JSON
	slotsEnv       = "MAPLE_CLUSTER_TEST_SLOTS"
	holdEnv        = "MAPLE_CLUSTER_TEST_HOLD" // positions of jobs held, comma-separated, or "all"
	gateEnv        = "MAPLE_CLUSTER_TEST_GATE" // held jobs wait until this file exists
	otherBuildEnv  = "MAPLE_CLUSTER_TEST_OTHER_BUILD"
	wiretapEnv     = "MAPLE_CLUSTER_TEST_WIRETAP" // the file that records what the worker sends
	secretEnv      = "MAPLE_CLUSTER_TEST_SECRET"  // the worker's secret, if not testSecret
	workerLifetime = 4 * time.Minute
)

// otherBuild is a build other than the test binary's.
func otherBuild() *wire.Build {
	b := *thisBuild()
	b.Revision, b.BinarySha256 = "0123456789abcdef", "feed"
	return &b
}

// testSecret is the cluster's secret in the tests.
var testSecret = []byte("0123456789abcdef-maple-test")

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(workerMain())
	}
	if spec := os.Getenv(coordinatorEnv); spec != "" {
		os.Exit(coordinatorMain(spec))
	}
	os.Exit(m.Run())
}

// workerMain runs a worker for a test. It prints "listening ADDR" once it
// is a member and "took N" when it starts the job at position N.
func workerMain() int {
	var health net.Listener
	var err error
	if os.Getenv(workerEnv) == "fd" {
		health, err = net.FileListener(os.NewFile(3, "health"))
	} else {
		health, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	slots, _ := strconv.Atoi(os.Getenv(slotsEnv))
	logger, _ := zap.NewDevelopment(zap.IncreaseLevel(zap.InfoLevel))
	hold, gate := os.Getenv(holdEnv), os.Getenv(gateEnv)
	var hooks workerHooks
	if os.Getenv(otherBuildEnv) != "" {
		hooks.build = otherBuild()
	}
	if path := os.Getenv(wiretapEnv); path != "" {
		if hooks.tap, err = wiretap(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	secret := testSecret
	if s := os.Getenv(secretEnv); s != "" {
		secret = []byte(s)
	}
	hooks.beforeJob = func(ctx context.Context, pos int) {
		fmt.Printf("took %d\n", pos)
		if hold != "all" && !strings.Contains(","+hold+",", fmt.Sprintf(",%d,", pos)) {
			return
		}
		for ctx.Err() == nil {
			if _, err := os.Stat(gate); gate != "" && err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	w, err := startWorker(WorkerConfig{Health: health, Secret: secret, Slots: slots, Logger: logger}, hooks)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("listening %s\n", health.Addr())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	stdin := make(chan struct{})
	go func() {
		bufio.NewReader(os.Stdin).ReadString(0)
		close(stdin)
	}()
	select {
	case <-stop:
	case <-stdin:
	case <-time.After(workerLifetime):
	}
	w.Stop()
	return 0
}

// coordSpec describes the plan a coordinator process runs, and how.
type coordSpec struct {
	// Bundled names a bundled scenario, File a scenario file; Sets are the
	// overrides.
	Bundled, File string
	Sets          []string
	Workers       []string
	Trace         bool
	TracePayload  bool
	Engine        run.Engine
	Out           string
	Wait          time.Duration
	// OtherBuild makes the coordinator present another build; Secret, if
	// set, replaces the cluster's; CancelAfter interrupts the execution
	// once that many runs finished; RequestTimeout, if set, bounds requests;
	// Wiretap, if set, is the file that records what the coordinator sends.
	OtherBuild     bool
	Secret         string
	CancelAfter    int
	RequestTimeout time.Duration
	Wiretap        string
}

// coordinatorMain runs a coordinator for a test and prints how its
// execution ended on its last line: "ok", "interrupted N" (N runs written)
// or "error user|other MESSAGE".
func coordinatorMain(js string) int {
	var spec coordSpec
	if err := json.Unmarshal([]byte(js), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p, err := loadSpec(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if spec.RequestTimeout > 0 {
		requestTimeout = spec.RequestTimeout
	}
	secret := testSecret
	if spec.Secret != "" {
		secret = []byte(spec.Secret)
	}
	logger, _ := zap.NewDevelopment(zap.IncreaseLevel(zap.InfoLevel))
	c, err := NewCoordinator(Config{Workers: spec.Workers, Secret: secret, Wait: spec.Wait, Logger: logger})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if spec.OtherBuild {
		c.hello = otherBuild()
	}
	if spec.Wiretap != "" {
		if c.tap, err = wiretap(spec.Wiretap); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), workerLifetime)
	defer cancel()
	opts := run.Options{Trace: spec.Trace, TracePayload: spec.TracePayload, Engine: spec.Engine, Executor: c}
	if spec.CancelAfter > 0 {
		opts.Progress = func(done, _ int) {
			if done == spec.CancelAfter {
				cancel()
			}
		}
	}
	_, err = run.ExecuteContext(ctx, p, spec.Out, opts)
	var intr *run.Interrupted
	switch {
	case err == nil:
		fmt.Println("ok")
	case errors.As(err, &intr):
		fmt.Printf("interrupted %d\n", intr.Completed)
	case scenarios.IsUserError(err):
		fmt.Printf("error user %s\n", err)
	default:
		fmt.Printf("error other %s\n", err)
	}
	return 0
}

// loadSpec loads the plan of spec.
func loadSpec(spec coordSpec) (*scenarios.Plan, error) {
	if spec.Bundled != "" {
		return scenarios.LoadBundled(spec.Bundled, spec.Sets)
	}
	return scenarios.LoadFile(spec.File, spec.Sets)
}

// coordinate runs a coordinator process for spec (into a new run directory)
// and returns the directory and how the execution ended (coordinatorMain).
func coordinate(t testing.TB, spec coordSpec) (dir, result string) {
	t.Helper()
	dir, result, _ = coordinateCPU(t, spec)
	return dir, result
}

// coordinateCPU is coordinate that also returns the CPU time (user and
// system) the coordinator process used.
func coordinateCPU(t testing.TB, spec coordSpec) (dir, result string, cpu time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := coordinatorProcess(t, ctx, &spec)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	result = lines[len(lines)-1]
	if err != nil || result == "" {
		t.Fatalf("coordinator: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "DATA RACE") || strings.Contains(stderr.String(), "panic:") {
		t.Errorf("the coordinator raced or panicked:\n%s", stderr.String())
	}
	if t.Failed() || result != "ok" {
		t.Logf("coordinator's log:\n%s", stderr.String())
	}
	return spec.Out, result, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// coordinatorProcess returns the command that runs a coordinator for spec,
// bounded by ctx, filling in spec's defaults.
func coordinatorProcess(t testing.TB, ctx context.Context, spec *coordSpec) *exec.Cmd {
	if spec.Out == "" {
		spec.Out = t.TempDir()
	}
	if spec.Wait == 0 {
		spec.Wait = time.Minute
	}
	js, _ := json.Marshal(spec)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), coordinatorEnv+"="+string(js))
	return cmd
}

// proc is a worker process of a test.
type proc struct {
	addr  string
	cmd   *exec.Cmd
	lines chan string // its standard output, line by line
	log   *os.File    // its standard error
}

// workerOpts configure a worker process.
type workerOpts struct {
	slots   int
	hold    string // jobs held: "all", or positions
	gate    string
	other   bool   // the worker plays another build
	procs   int    // GOMAXPROCS of the worker, if set
	secret  string // the worker's secret, if not testSecret
	wiretap string // the file that records what the worker sends, if set
	// listener, if set, is the worker's health endpoint, made by the test
	// before the worker starts (so that a coordinator can list it first).
	listener *net.TCPListener
}

// spawnWorker starts a worker process and waits until it is a member. The
// test stops it (SIGTERM, then SIGKILL) when it ends.
func spawnWorker(t testing.TB, o workerOpts) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), workerLifetime)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	mode := "listen"
	if o.listener != nil {
		f, err := o.listener.File()
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.ExtraFiles = []*os.File{f}
		mode = "fd"
	}
	cmd.Env = append(os.Environ(), workerEnv+"="+mode, fmt.Sprintf("%s=%d", slotsEnv, max(o.slots, 1)), holdEnv+"="+o.hold, gateEnv+"="+o.gate,
		"TMPDIR="+t.TempDir()) // a killed worker cannot remove its scratch directory: the test does

	if o.other {
		cmd.Env = append(cmd.Env, otherBuildEnv+"=1")
	}
	if o.procs > 0 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMAXPROCS=%d", o.procs))
	}
	if o.secret != "" {
		cmd.Env = append(cmd.Env, secretEnv+"="+o.secret)
	}
	if o.wiretap != "" {
		cmd.Env = append(cmd.Env, wiretapEnv+"="+o.wiretap)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 1000)}
	if p.log, err = os.CreateTemp(t.TempDir(), "worker-*.log"); err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = p.log
	cmd.WaitDelay = 10 * time.Second
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if o.listener != nil {
		o.listener.Close() // the worker holds its own copy
	}
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			p.lines <- s.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(func() {
		defer cancel()
		if cmd.ProcessState == nil {
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		}
		b, _ := os.ReadFile(p.log.Name())
		if strings.Contains(string(b), "DATA RACE") || strings.Contains(string(b), "panic:") {
			t.Errorf("worker %s raced or panicked", p.addr)
		}
		if t.Failed() {
			t.Logf("worker %s's log:\n%s", p.addr, b)
		}
	})
	line := p.expect(t, "listening ")
	p.addr = strings.TrimPrefix(line, "listening ")
	return p
}

// expect waits (at most a minute) for the next line of the worker's output
// that starts with prefix, and returns it.
func (p *proc) expect(t testing.TB, prefix string) string {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("worker ended before printing %q", prefix)
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-timeout:
			t.Fatalf("worker printed no %q within a minute", prefix)
		}
	}
}

// cpu returns the CPU time (user and system) the worker used so far.
func (p *proc) cpu(t testing.TB) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (which ends with the last ")"): state
	// is the first, utime and stime the 12th and 13th, in clock ticks.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is the kernel's clock ticks per second (USER_HZ), the unit of
// /proc/PID/stat's times: 100 on Linux.
const clockTicks = 100

// kill ends the worker at once (SIGKILL), as a crash would.
func (p *proc) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
}

// reserve returns a loopback listener for a worker started later.
func reserve(t *testing.T) *net.TCPListener {
	t.Helper()
	l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// wiretap returns a tap (memberConfig.tap) that copies every byte written
// to and read from the connections it wraps into a new file at path: what
// an observer of the links sees.
func wiretap(path string) (func(net.Conn) net.Conn, error) {
	f, err := os.Create(path) // open until the process ends
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	return func(c net.Conn) net.Conn { return &tapped{Conn: c, mu: &mu, f: f} }, nil
}

// tapped is a connection under a wiretap.
type tapped struct {
	net.Conn
	mu *sync.Mutex
	f  *os.File
}

func (t *tapped) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	t.record(p[:n])
	return n, err
}

func (t *tapped) Write(p []byte) (int, error) {
	t.record(p)
	return t.Conn.Write(p)
}

func (t *tapped) record(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.f.Write(p)
}
