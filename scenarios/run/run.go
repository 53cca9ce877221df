// Package run executes a loaded scenario plan: it runs every Monte-Carlo run
// of every curve on the actor engine (or the actor-free reference), in
// parallel across cores, averages the runs, and writes the run directory
// (through packages rundir and figures): the resolved scenario, metrics.csv,
// summary.json, plots and, when tracing, trace.jsonl.zst.
//
// The runner knows no algorithm family. Each family registers itself
// (Register) from its own package under families/, with what it takes to
// check, estimate and execute a curve; the runner exports what the families
// share — a Job and its TraceSink, the systems log, the accountant, the
// column helpers. What a job reads and builds from its scenario — its
// Problem, the network, the systems model, the files — is package inputs.
//
// Results do not depend on the number of workers: each run is a pure function
// of its run seed, results are stored by (curve, run) index, and averages are
// taken in run order.
package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.uber.org/zap"

	"maple/actors"
	"maple/actors/trace"
	"maple/algorithms/rng"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// Engine selects what executes the algorithm.
type Engine string

const (
	// Actors runs every party as an actor exchanging messages.
	Actors Engine = "actors"
	// Reference runs the actor-free reference implementation: the same
	// iterates, no messages, no trace.
	Reference Engine = "reference"
)

// Options configure an execution.
type Options struct {
	// Engine is Actors (default) or Reference.
	Engine Engine
	// Trace records every message in trace.jsonl.zst (actor engine only); it is
	// also switched on by the scenario's trace field.
	Trace bool
	// TracePayload records message vectors in full.
	TracePayload bool
	// Workers is the number of runs executed in parallel on this machine;
	// 0 means GOMAXPROCS.
	Workers int
	// Executor runs the jobs; nil runs them on this machine, Workers at a
	// time (package cluster runs them on worker processes).
	Executor Executor
	// Logger receives progress and engine logs. Nil discards them.
	Logger *zap.Logger
	// Progress, if set, is called after each finished run with the number
	// of runs done and the total.
	Progress func(done, total int)
	// TraceLimit is the largest trace, in bytes, a plan may be estimated to
	// write: 0 means DefaultTraceLimit and a negative value no limit.
	TraceLimit float64
	// MemoryLimit is the memory, in bytes, a plan may be estimated to need:
	// 0 means the machine's (or its container's) memory.
	MemoryLimit float64
	// Abort, once closed, abandons the writing of an interrupted
	// execution's finished runs (a second interrupt): ExecuteContext then
	// removes what it wrote and returns an *Interrupted error with
	// Abandoned set.
	Abort <-chan struct{}
}

// defaults fills the options left zero.
func (o *Options) defaults() {
	if o.Engine == "" {
		o.Engine = Actors
	}
	if o.Logger == nil {
		o.Logger = zap.NewNop()
	}
}

// Result summarizes an execution.
type Result struct {
	// Summary is what summary.json holds.
	Summary *rundir.Summary
	// Files lists the files written, relative to the run directory.
	Files []string
}

// Job is one Monte-Carlo run of one curve: what a family's Run function
// executes, and where it puts the results.
type Job struct {
	// Curve is the curve, Run the index of the run, RunSeed the seed every
	// random stream of the run derives from, and Dir the scenario's
	// directory (relative file names are resolved against it).
	Curve   *scenarios.CurveSpec
	index   int // curve index
	pos     int // index in the plan's list of jobs (Jobs)
	Run     int
	RunSeed uint64
	Dir     string
	// Opts are the execution's options: the engine, tracing.
	Opts    *Options
	logger  *zap.Logger
	trace   string // temporary trace file, if tracing
	system  *actors.System
	cache   *inputs.ProblemCache
	ctx     context.Context // the execution's: interrupts the run
	started bool            // the job was handed out (it may have a trace file)
	ended   bool            // its end was reported (err says how)

	// Table receives the run's metrics, Stats the other facts the summary
	// reports of it.
	Table *rundir.Table
	Stats RunStats
	err   error
}

// RunStats are the per-run facts the summary reports besides metrics.
type RunStats struct {
	messages uint64
	duration float64
	// Warnings are what the run warns about and Details the facts of run
	// 0 that summary.json reports under the curve's details.
	Warnings []string
	Details  map[string]any
	// audit and auditUpper are what the run recorded for the curve's
	// privacy.audit (audit.go).
	audit      *AuditRecord
	auditUpper *AuditUpper
}

// Execute runs the plan and writes the run directory outDir, which must
// exist. Errors in the user's input are *scenarios.Error values.
func Execute(plan *scenarios.Plan, outDir string, opts Options) (*Result, error) {
	return ExecuteContext(context.Background(), plan, outDir, opts)
}

// ExecuteContext is Execute with a context that interrupts the execution:
// workers start no run once ctx is done, and actor runs in progress stop
// before their next delivery. The runs that finished are then written as
// usual — for each curve its first runs, up to the first that did not finish,
// so that the outputs are those of a plan with that many runs — with
// summary.json marked partial, and ExecuteContext returns the Result with an
// *Interrupted error. Runs that finish are computed exactly as without a
// context. Every output file is written atomically (a temporary file renamed
// into place), summary.json last, so a directory with a summary.json is
// complete.
func ExecuteContext(ctx context.Context, plan *scenarios.Plan, outDir string, opts Options) (*Result, error) {
	opts.defaults()
	if err := checkWith(ctx, plan, opts); err != nil {
		if ctx.Err() != nil {
			return nil, &Interrupted{Planned: planned(plan)}
		}
		return nil, err
	}
	warnLong(plan, &opts)
	tracing := opts.Trace || opts.TracePayload || plan.Base.Trace
	traceDir := ""
	if tracing {
		traceDir = outDir
	}
	jobs := Jobs(plan, &opts, traceDir)
	err := runJobs(ctx, plan, jobs, &opts)
	interrupted := errors.Is(err, errInterrupted)
	if err != nil && !interrupted {
		return nil, err
	}
	done := jobs
	if interrupted {
		done = finished(jobs)
		removeTraces(jobs, done)
		if len(done) == 0 {
			return nil, &Interrupted{Planned: len(jobs)}
		}
	}
	res := &Result{}
	if tracing {
		if err := mergeTraces(done, filepath.Join(outDir, trace.StoreFile), opts.Abort); err != nil {
			removeTraces(done, nil)
			return nil, abandoned(err, len(jobs))
		}
		res.Files = append(res.Files, trace.StoreFile)
	}
	files, summary, err := writeOutputs(plan, done, outDir, &opts, interrupted)
	if err != nil {
		if errors.Is(err, errAbandoned) {
			for _, f := range append(files, res.Files...) {
				os.Remove(filepath.Join(outDir, f))
			}
		}
		return nil, abandoned(err, len(jobs))
	}
	res.Files = append(files, res.Files...)
	res.Summary = summary
	if interrupted {
		return res, &Interrupted{Completed: len(done), Planned: len(jobs)}
	}
	return res, nil
}

// Interrupted is the error of an execution stopped through its context.
type Interrupted struct {
	// Completed is the number of runs written (0: nothing was written) and
	// Planned the number the plan has.
	Completed, Planned int
	// Abandoned is set when Options.Abort stopped the writing of the
	// finished runs: nothing was written.
	Abandoned bool
}

// errAbandoned is what the output writers return once Options.Abort is
// closed.
var errAbandoned = errors.New("writing abandoned")

// abandoned turns errAbandoned into an *Interrupted error and returns any
// other error as it is.
func abandoned(err error, planned int) error {
	if errors.Is(err, errAbandoned) {
		return &Interrupted{Planned: planned, Abandoned: true}
	}
	return err
}

// Error implements error.
func (e *Interrupted) Error() string {
	if e.Abandoned {
		return "interrupted again while writing the finished runs: abandoned them, nothing written"
	}
	if e.Completed == 0 {
		return fmt.Sprintf("interrupted before any of the %d runs finished: nothing written", e.Planned)
	}
	return fmt.Sprintf("interrupted: wrote the %d finished runs of %d (summary.json is marked partial)", e.Completed, e.Planned)
}

// Unwrap returns context.Canceled.
func (e *Interrupted) Unwrap() error { return context.Canceled }

// InternalError is a panic in maple's own code during a run: a bug, not a
// problem with the user's input.
type InternalError struct {
	// Value is what was passed to panic, and Stack the panicking goroutine's
	// stack.
	Value any
	Stack string
}

// Error implements error.
func (e *InternalError) Error() string { return fmt.Sprintf("internal error: %v", e.Value) }

// Jobs lists the plan's jobs, one per curve and Monte-Carlo run, in (run,
// curve) order. Run r of every curve uses the same run seed, so curves are
// compared on the same data and draws, and a slot taking consecutive jobs
// can reuse the data it built (inputs.ProblemCache). Results are stored by (curve,
// run), so the order in which jobs finish does not reach the outputs. With
// traceDir set, each job records its trace in a temporary store there.
func Jobs(plan *scenarios.Plan, opts *Options, traceDir string) []*Job {
	var jobs []*Job
	runs := 0
	for _, c := range plan.Curves {
		runs = max(runs, c.Scenario.Runs)
	}
	for r := 0; r < runs; r++ {
		for ci, c := range plan.Curves {
			if r >= c.Scenario.Runs {
				continue
			}
			j := &Job{Curve: c, index: ci, pos: len(jobs), Run: r, RunSeed: rng.RunSeed(c.Scenario.Seed, r), Dir: plan.Dir, Opts: opts}
			if traceDir != "" {
				j.trace = filepath.Join(traceDir, fmt.Sprintf(".trace-%04d-%06d.part", ci, r))
			}
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// interruptedBy reports whether err is a job's failure because ctx was done:
// a computation that observed the interruption (a solve, a reference, a
// reader), whatever its error became on the way (a scenario error formats
// the cause as text). A panic is a bug whenever it happens.
func interruptedBy(ctx context.Context, err error) bool {
	var ie *InternalError
	return err != nil && ctx.Err() != nil && !errors.As(err, &ie)
}

// Context returns the execution's context, done once the execution is
// interrupted: families pass it to the long computations of a run — solves,
// graph generators, readers, the reference implementations — which then stop
// with its error, and the run is discarded as unfinished.
func (j *Job) Context() context.Context {
	if j.ctx == nil {
		return context.Background()
	}
	return j.ctx
}

// finished returns, for each curve, its jobs up to the first that did not
// finish, in job order.
func finished(jobs []*Job) []*Job {
	stopped := map[int]bool{}
	var done []*Job
	for _, j := range jobs { // (run, curve) order: a curve's runs ascend
		if j.err != nil {
			stopped[j.index] = true
		}
		if !stopped[j.index] {
			done = append(done, j)
		}
	}
	return done
}

// removeTraces deletes the temporary trace files of the jobs not in keep.
func removeTraces(jobs, keep []*Job) {
	kept := map[*Job]bool{}
	for _, j := range keep {
		kept[j] = true
	}
	for _, j := range jobs {
		if j.trace != "" && j.started && !kept[j] {
			os.Remove(j.trace)
		}
	}
}

// execute runs one job.
func (j *Job) execute() error {
	sc := j.Curve.Scenario
	dataSeed := j.RunSeed
	if sc.Data.Regenerate == "once" {
		dataSeed = rng.RunSeed(sc.Seed, 0)
	}
	p, err := j.cache.Get(j.Context(), j.Curve, j.Dir, dataSeed, familyOf(sc).Lazy)
	if err != nil {
		return err
	}
	j.Stats.Details = p.Details()
	var sink *TraceSink
	if j.trace != "" {
		if sink, err = newTraceSink(j.trace); err != nil {
			return err
		}
		defer sink.close()
	}
	if err := familyOf(j.Curve.Scenario).Run(j, p, sink); err != nil {
		if scenarios.IsUserError(err) {
			return err
		}
		return fmt.Errorf("curve %q, run %d: %w", j.Curve.Label, j.Run, err)
	}
	// The solver's report, whose gradient norm a pass of the family's may
	// have computed during the run (inputs.Pass).
	if err := p.Settle(j.Context(), j.Stats.Details); err != nil {
		return err
	}
	if err := j.checkAudit(); err != nil {
		return &InternalError{Value: fmt.Sprintf("curve %q, run %d: %v", j.Curve.Label, j.Run, err)}
	}
	if seededKeys(sc) {
		j.Stats.Warnings = append(j.Stats.Warnings, SeededKeysWarning)
	}
	if n := sc.Network; j.Opts.Engine == Reference && (n.Latency != 0 || n.Jitter != 0 || n.GradientTime != 0) {
		j.Stats.Warnings = append(j.Stats.Warnings, "network.latency, network.jitter and network.gradient_time model virtual time, which the reference engine does not simulate: the metrics do not depend on them, and no virtual_time is reported (run with --engine actors for it)")
	}
	if sink != nil {
		return sink.close()
	}
	return nil
}

// ActorOptions returns the engine options of the job's actor run.
func (j *Job) ActorOptions(obs actors.Observer, sink *TraceSink) actors.Options {
	n := j.Curve.Scenario.Network
	o := actors.Options{
		RunSeed:  j.RunSeed,
		Run:      j.Run,
		Curve:    j.Curve.Label,
		Timing:   actors.Timing{Latency: n.Latency, Jitter: n.Jitter, Bandwidth: n.Bandwidth, Loss: n.Loss, Duplicate: n.Duplicate},
		Observer: obs,
		Logger:   j.logger,
		System:   j.system,
		Done:     j.Context().Done(),
	}
	if sink != nil {
		o.Trace = actors.TraceOptions{Sink: sink.write, Payload: j.Opts.TracePayload, Encoded: true}
	}
	return o
}

// Finish records what an actor run reports besides metrics.
func (j *Job) Finish(r *actors.Run) {
	j.Stats.messages = r.Messages()
	j.Stats.duration = r.Duration()
	j.Stats.Warnings = r.Warnings()
}

// TraceSink writes one run's trace records to a temporary compressed store.
type TraceSink struct {
	f      *os.File
	w      *trace.StoreWriter
	closed bool
}

func newTraceSink(path string) (*TraceSink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &TraceSink{f: f, w: trace.NewStoreWriter(f)}, nil
}

func (s *TraceSink) write(rec *trace.Record) error { return s.w.Write(rec) }

func (s *TraceSink) close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	err := s.w.Close()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mergeTraces concatenates the runs' stores in (curve, run) order into
// path, atomically, without recompressing (trace.Concat), and removes them.
// Closing abort stops it with errAbandoned.
func mergeTraces(jobs []*Job, path string, abort <-chan struct{}) error {
	var stores []*trace.Store
	for _, j := range jobs {
		f, err := os.Open(j.trace)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		s, err := trace.ReadStore(abortableAt{f, abort}, info.Size(), j.trace)
		if err != nil {
			return err
		}
		stores = append(stores, s)
	}
	err := rundir.WriteAtomic(path, func(out io.Writer) error { return trace.Concat(out, stores) })
	for _, j := range jobs {
		os.Remove(j.trace)
	}
	return err
}

// abortableAt is a ReaderAt that fails with errAbandoned once abort is
// closed.
type abortableAt struct {
	r     io.ReaderAt
	abort <-chan struct{}
}

func (a abortableAt) ReadAt(p []byte, off int64) (int, error) {
	select {
	case <-a.abort:
		return 0, errAbandoned
	default:
		return a.r.ReadAt(p, off)
	}
}

// Version is maple's release version, recorded in every summary.
const Version = "0.1.0"

// planned returns the number of runs of the plan.
func planned(plan *scenarios.Plan) int {
	n := 0
	for _, c := range plan.Curves {
		n += c.Scenario.Runs
	}
	return n
}
