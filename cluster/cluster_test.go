package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"maple/actors/trace"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// testTimeout bounds every execution of a test: a cluster that never
// finishes fails the test instead of hanging it.
const testTimeout = 3 * time.Minute

// local runs the plan of spec in this process and returns its run
// directory.
func local(t testing.TB, spec coordSpec) string {
	t.Helper()
	p, err := loadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	dir := t.TempDir()
	if _, err := run.ExecuteContext(ctx, p, dir, run.Options{Trace: spec.Trace, TracePayload: spec.TracePayload, Engine: spec.Engine}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// sameRunDirectory checks that two run directories hold the same files,
// byte for byte.
func sameRunDirectory(t *testing.T, what, want, got string) {
	t.Helper()
	files := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, path)
				out[rel], _ = os.ReadFile(path)
			}
			return nil
		})
		return out
	}
	a, b := files(want), files(got)
	if len(a) < 3 || len(a) != len(b) {
		t.Errorf("%s: %d files, want %d", what, len(b), len(a))
	}
	for f, data := range a {
		if !bytes.Equal(data, b[f]) {
			t.Errorf("%s: %s differs from the in-process run's", what, f)
		}
	}
}

// sweep is a bundled sweep, small: 4 curves × 2 runs, without figures
// (which the coordinator draws as a local run does; the command-line tests
// compare them).
func sweep() coordSpec {
	return coordSpec{Bundled: "fedavg/step-size-sweep.yaml", Sets: []string{"runs=2", "iterations=6", "output.plot=false"}}
}

// A plan run on 1 worker or 3 (at GOMAXPROCS 1, 2 and 3), trace on or
// off, writes the run directory of the same plan run in process, byte for byte; so do a plan
// whose data files the coordinator ships to the workers, traced with the
// payloads, and a plan on the reference engine.
func TestClusterWritesTheInProcessRunDirectory(t *testing.T) {
	t.Parallel()
	var addrs []string
	for i := range 3 {
		addrs = append(addrs, spawnWorker(t, workerOpts{slots: 2, procs: i + 1}).addr) // GOMAXPROCS 1, 2, 3
	}
	for _, tracing := range []bool{false, true} {
		spec := sweep()
		spec.Trace = tracing
		want := local(t, spec)
		for _, n := range []int{1, 3} {
			spec.Workers = addrs[:n]
			got, result := coordinate(t, spec)
			if result != "ok" {
				t.Fatalf("%d workers, trace %v: %s", n, tracing, result)
			}
			sameRunDirectory(t, fmt.Sprintf("%d workers, trace %v", n, tracing), want, got)
		}
	}
	files := coordSpec{File: filesScenario(t), Trace: true, TracePayload: true, Workers: addrs}
	got, result := coordinate(t, files)
	if result != "ok" {
		t.Fatal(result)
	}
	sameRunDirectory(t, "shipped files", local(t, files), got)
	reference := sweep()
	reference.Engine, reference.Workers = run.Reference, addrs
	if got, result = coordinate(t, reference); result != "ok" {
		t.Fatal(result)
	}
	sameRunDirectory(t, "reference engine", local(t, reference), got)
}

// filesScenario writes a scenario that reads a data directory of agent
// files and a test file (two curves, two runs) and returns its path.
func filesScenario(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	agents := filepath.Join(dir, "agents")
	os.Mkdir(agents, 0o755)
	for k, n := range []int{7, 12, 9} {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%d,%d,%g\n", (i+k)%2, i, float64(k)/10)
		}
		os.WriteFile(filepath.Join(agents, fmt.Sprintf("%d.csv", k)), []byte(b.String()), 0o644)
	}
	os.WriteFile(filepath.Join(agents, "README"), []byte("not an agent\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "test.csv"), []byte("0,1,0\n1,2,0.1\n"), 0o644)
	src := `name: files
iterations: 5
runs: 2
data: {kind: directory, agents: 3, samples: [7, 12], directory: {path: agents, test: test.csv}}
loss: {kind: softmax, classes: 2}
algorithm: {kind: fedavg, step_size: 0.1, fedavg: {participants: 2, batch: 3}}
curves: [{label: a, set: {}}, {label: b, set: {algorithm.step_size: 0.05}}]
output: {plot: false}
`
	path := filepath.Join(dir, "s.yaml")
	os.WriteFile(path, []byte(src), 0o644)
	return path
}

// stateful is a bundled scenario whose curves include behaviours that keep
// state between rounds on the server and on every client (SCAFFOLD, FedNova,
// FedDyn, FedProx), small: 10 curves × 1 run, without figures.
func stateful() coordSpec {
	return coordSpec{Bundled: "fedavg/fedprox-drift.yaml", Sets: []string{"runs=1", "iterations=6", "output.plot=false"}}
}

// A worker killed mid-plan (SIGKILL) leaves the cluster; the jobs it held
// run on a worker that joins later, and the outputs are still those of the
// in-process run — SCAFFOLD's among them, whose server and clients keep
// their control variates within the job that runs them.
func TestKilledWorkersJobsRunElsewhere(t *testing.T) {
	t.Parallel()
	spec := stateful()
	want := local(t, spec)
	late := reserve(t)
	victim := spawnWorker(t, workerOpts{slots: 2, hold: "all"})
	spec.Workers = []string{victim.addr, late.Addr().String()}
	type result struct{ dir, result string }
	done := make(chan result, 1)
	go func() {
		dir, r := coordinate(t, spec)
		done <- result{dir, r}
	}()
	victim.expect(t, "took ")
	victim.expect(t, "took ")
	victim.kill(t)
	heir := spawnWorker(t, workerOpts{slots: 2, listener: late})
	r := <-done
	if r.result != "ok" {
		t.Fatal(r.result)
	}
	sameRunDirectory(t, "after a worker was killed", want, r.dir)
	heir.expect(t, "took 0") // the victim's first job ran on the heir
}

// A worker that joins while the plan runs gets jobs.
func TestLateWorkerGetsJobs(t *testing.T) {
	t.Parallel()
	spec := sweep()
	want := local(t, spec)
	gate := filepath.Join(t.TempDir(), "go")
	late := reserve(t)
	first := spawnWorker(t, workerOpts{slots: 1, hold: "1", gate: gate})
	spec.Workers = []string{first.addr, late.Addr().String()}
	type result struct{ dir, result string }
	done := make(chan result, 1)
	go func() {
		dir, r := coordinate(t, spec)
		done <- result{dir, r}
	}()
	first.expect(t, "took 1") // job 0 done, job 1 held: the first worker is busy
	second := spawnWorker(t, workerOpts{slots: 1, listener: late})
	second.expect(t, "took ") // the late worker took a job
	os.WriteFile(gate, nil, 0o644)
	r := <-done
	if r.result != "ok" {
		t.Fatal(r.result)
	}
	sameRunDirectory(t, "with a late worker", want, r.dir)
}

// An interrupted coordinator keeps what finished, as an in-process run
// does on SIGINT: the metrics and trace of the partial directory are those
// of the plan with fewer runs, and no temporary file is left.
func TestInterruptedCoordinatorKeepsFinishedRuns(t *testing.T) {
	t.Parallel()
	fewer := local(t, coordSpec{Bundled: "fedavg/thesis-regression.yaml", Sets: []string{"runs=2", "iterations=6", "output.plot=false"}, Trace: true})
	w := spawnWorker(t, workerOpts{slots: 1, hold: "2,3", gate: filepath.Join(t.TempDir(), "never")})
	dir, result := coordinate(t, coordSpec{Bundled: "fedavg/thesis-regression.yaml", Sets: []string{"runs=4", "iterations=6", "output.plot=false"},
		Trace: true, Workers: []string{w.addr}, CancelAfter: 2})
	if result != "interrupted 2" {
		t.Fatalf("%s, want an interruption with 2 runs written", result)
	}
	for _, f := range []string{rundir.MetricsFile, trace.StoreFile} {
		a, _ := os.ReadFile(filepath.Join(fewer, f))
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the two-run plan's", f)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("temporary file %s left in the run directory", e.Name())
		}
	}
}

// Workers and coordinators of different builds refuse each other, and a
// plan with no other worker fails with a message that says why.
func TestOtherBuildsAreRefused(t *testing.T) {
	t.Parallel()
	spec := coordSpec{Bundled: "fedavg/thesis-regression.yaml", Sets: []string{"runs=1", "iterations=6", "output.plot=false"}, Wait: 2 * time.Second}
	spec.Workers, spec.OtherBuild = []string{spawnWorker(t, workerOpts{}).addr}, true
	if _, result := coordinate(t, spec); !strings.Contains(result, "refused this coordinator: its executable (SHA-256 feed) differs") ||
		!strings.Contains(result, "no worker of the cluster took the plan's jobs") {
		t.Errorf("the worker refuses: %s", result)
	}
	spec.Workers, spec.OtherBuild = []string{spawnWorker(t, workerOpts{other: true}).addr}, false
	if _, result := coordinate(t, spec); !strings.Contains(result, "refused worker 127.0.0.1:") || !strings.Contains(result, "its executable (SHA-256 feed) differs") {
		t.Errorf("the coordinator refuses: %s", result)
	}
}

// A coordinator and a worker that do not hold the same secret get nothing
// done, and the coordinator says why, naming the worker as listed: the
// worker refused its seal (its log says it ignored a forged message).
func TestMismatchedSecretsAreNamed(t *testing.T) {
	t.Parallel()
	w := spawnWorker(t, workerOpts{secret: "the worker's secret, not the cluster's"})
	_, result := coordinate(t, coordSpec{Bundled: "fedavg/thesis-regression.yaml", Sets: []string{"runs=1", "iterations=6", "output.plot=false"},
		Workers: []string{w.addr}, Wait: 2 * time.Second})
	want := "worker " + w.addr + " refused this coordinator's seal: the two do not hold the same cluster secret"
	if !strings.Contains(result, "no worker of the cluster took the plan's jobs") || !strings.Contains(result, want) {
		t.Errorf("%s\nwant the reason: %s", result, want)
	}
	if b, _ := os.ReadFile(w.log.Name()); !strings.Contains(string(b), errForged.Error()) {
		t.Errorf("the worker's log does not say it ignored a forged message:\n%s", b)
	}
}

// What crosses the links is sealed: a wiretap on every connection the
// coordinator and the worker dial records the messages passing (protoactor
// names their type in clear) but not the scenario's text, the data files
// shipped, the results (each job's metrics table, as its in-process run
// encodes it) or what the worker tells about itself (its build), and the
// run directory is still the in-process run's.
func TestLinksCarryNoPlaintext(t *testing.T) {
	t.Parallel()
	taps := t.TempDir()
	toWorker, toCoordinator := filepath.Join(taps, "coordinator"), filepath.Join(taps, "worker")
	w := spawnWorker(t, workerOpts{wiretap: toCoordinator})
	const textMarker, dataMarker = "the-scenario-text-marker", "0.7182818284"
	spec := coordSpec{File: filesScenario(t), Sets: []string{"runs=1", "description=" + textMarker}, Trace: true, TracePayload: true,
		Workers: []string{w.addr}, Wiretap: toWorker}
	test := filepath.Join(filepath.Dir(spec.File), "test.csv")
	b, _ := os.ReadFile(test)
	if err := os.WriteFile(test, append(b, "1,3,"+dataMarker+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	got, result := coordinate(t, spec)
	if result != "ok" {
		t.Fatal(result)
	}
	sameRunDirectory(t, "under the wiretap", local(t, spec), got)
	w.cmd.Process.Signal(syscall.SIGTERM) // the worker's tap holds all it sent once it ended
	w.cmd.Wait()
	for _, c := range []struct {
		file    string
		secrets []string
	}{
		{toWorker, []string{textMarker, dataMarker, runtime.Version()}},
		{toCoordinator, append(tables(t, spec), runtime.Version(), thisBuild().Platform)},
	} {
		captured, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(captured, []byte("maple.cluster.Sealed")); n < 1 || len(captured) < 1000 {
			t.Errorf("%s: the tap recorded %d bytes, naming Sealed %d times: it did not see the messages", filepath.Base(c.file), len(captured), n)
		}
		for _, s := range c.secrets {
			if bytes.Contains(captured, []byte(s)) {
				t.Errorf("what the %s sent holds %.40q in clear", filepath.Base(c.file), s)
			}
		}
	}
}

// tables runs the jobs of spec's plan in process and returns their metrics
// tables as a worker sends them (run.Outcome.Table).
func tables(t *testing.T, spec coordSpec) []string {
	t.Helper()
	p, err := loadSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	opts := &run.Options{Engine: run.Actors}
	slot := run.NewSlot(opts)
	defer slot.Close()
	var out []string
	for _, j := range run.Jobs(p, opts, "") {
		if err := slot.Execute(context.Background(), j); err != nil {
			t.Fatal(err)
		}
		o, err := j.Outcome()
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Table) < 64 {
			t.Fatalf("a table of %d bytes is too short to tell", len(o.Table))
		}
		out = append(out, string(o.Table))
	}
	return out
}

// Plans parse the same in every process: a coordinator's plan and the one a
// worker rebuilds from its text have the same fingerprint, and changing a
// curve changes it.
func TestFingerprint(t *testing.T) {
	a, _ := scenarios.LoadBundled("fedavg/step-size-sweep.yaml", []string{"runs=2"})
	b, _ := scenarios.Parse(a.Source, a.File, a.Dir, a.Sets)
	c, _ := scenarios.LoadBundled("fedavg/step-size-sweep.yaml", []string{"runs=3"})
	if !bytes.Equal(fingerprint(a), fingerprint(b)) || bytes.Equal(fingerprint(a), fingerprint(c)) {
		t.Error("fingerprints do not follow the plans")
	}
}

// A worker that ran a plan runs the next plan on that plan's files, even
// when they changed under the same names.
func TestWorkerRereadsChangedFiles(t *testing.T) {
	t.Parallel()
	w := spawnWorker(t, workerOpts{slots: 1})
	// One run: the last job of the first plan and the first of the second
	// read the same data, as far as their scenarios tell.
	spec := coordSpec{File: filesScenario(t), Sets: []string{"runs=1"}, Workers: []string{w.addr}}
	for round := range 2 {
		if round == 1 {
			first := filepath.Join(filepath.Dir(spec.File), "agents", "0.csv")
			b, _ := os.ReadFile(first)
			os.WriteFile(first, bytes.ReplaceAll(b, []byte(",0\n"), []byte(",3\n")), 0o644)
		}
		got, result := coordinate(t, spec)
		if result != "ok" {
			t.Fatal(result)
		}
		sameRunDirectory(t, fmt.Sprintf("plan %d", round), local(t, spec), got)
	}
}

// A worker whose coordinator's process dies drops the coordinator's plan:
// the job it was running stops.
func TestWorkerDropsTheDeadCoordinatorsPlan(t *testing.T) {
	t.Parallel()
	w := spawnWorker(t, workerOpts{slots: 1, hold: "all"})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	spec := sweep()
	spec.Workers = []string{w.addr}
	cmd := coordinatorProcess(t, ctx, &spec)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.expect(t, "took 0")
	cmd.Process.Kill()
	cmd.Wait()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(w.log.Name()); strings.Contains(string(b), "plan closed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker did not drop the plan of its dead coordinator within a minute")
		}
	}
}
