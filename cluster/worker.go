package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"maple/cluster/wire"
	"maple/scenarios"
	"maple/scenarios/inputs"
	"maple/scenarios/run"
)

// requestTimeout bounds a request and its answer between members (a
// greeting, a chunk of a file or of a result): a member that does not
// answer in time is taken for gone.
var requestTimeout = 30 * time.Second

// inlineLimit is the largest result a JobDone carries itself; larger ones
// are fetched in chunks.
const inlineLimit = 256 << 10

// pendingLifetime is how long a worker keeps a session that has no plan
// yet: a coordinator sends its plan as soon as the worker welcomes it, and
// a greeting replayed by an observer of the links opens a session nobody
// uses.
const pendingLifetime = time.Minute

// maxPending bounds the sessions a worker keeps without a plan: greetings
// beyond it are ignored until some expire (pendingLifetime), so that
// replayed greetings cannot exhaust the worker's memory.
const maxPending = 1024

// MaxSlots is the most slots a worker takes: each slot runs one job at a
// time, on an actor system of its own, and a job keeps a core busy, so a
// number of slots far beyond any machine's cores is a mistake that would
// only exhaust the worker's memory.
const MaxSlots = 1024

// WorkerConfig configures a worker.
type WorkerConfig struct {
	// Health is the listener of the worker's health endpoint: the address
	// coordinators list (maple run --cluster) and poll to know the worker is
	// alive. Serve it on loopback unless other hosts must reach it.
	Health net.Listener
	// Host is the address the worker's actors listen on for coordinators'
	// messages (remote), Port its port (0: any free one). Advertise, if
	// set, is the host coordinators reach them at (when Host is 0.0.0.0),
	// at Port, which must then be given.
	Host      string
	Port      int
	Advertise string
	// Secret is the cluster's shared secret: the worker executes nothing
	// for a coordinator that does not hold it.
	Secret []byte
	// Slots is the number of jobs run at once, at most MaxSlots; 0 means
	// GOMAXPROCS.
	Slots int
	// Cache is the directory of the files coordinators ship, kept by
	// content hash across plans; "" uses a temporary directory removed by
	// Stop.
	Cache string
	// Logger receives the worker's logs; nil discards them.
	Logger *zap.Logger
}

// Worker is a member of a cluster that executes the jobs coordinators hand
// it. It rebuilds each coordinator's plan from the scenario text the
// coordinator sends, reads only the files the coordinator ships, runs the
// jobs exactly as a local run would, and sends their results back as data.
type Worker struct {
	cfg     WorkerConfig
	log     *zap.Logger
	greet   *greeter
	build   *wire.Build
	member  *member
	store   *store
	scratch string         // temporary directory: plans' traces, the cache if not given
	slots   sync.WaitGroup // the slots' goroutines

	mu       sync.Mutex
	sessions map[string]*workerSession // by session id
	plans    map[string]*workerPlan
	tasks    []task         // jobs waiting for a slot, in the order they came
	ready    *sync.Cond     // signals a task or Stop (on mu)
	stopped  bool           // Stop began: no job or plan starts any more
	wg       sync.WaitGroup // plan preparations and closings in flight

	hooks workerHooks
}

// workerHooks let tests play a worker of another build or hold its jobs.
type workerHooks struct {
	// build, if set, replaces the worker's build.
	build *wire.Build
	// beforeJob, if set, runs before each job.
	beforeJob func(ctx context.Context, position int)
	// tap, if set, wraps the connections the worker dials to coordinators
	// (memberConfig.tap).
	tap func(net.Conn) net.Conn
}

// task is a job waiting for a slot, and the report of its end.
type task struct {
	p    *workerPlan
	j    *run.Job
	done *wire.JobDone
}

// workerSession is a session a coordinator opened with the worker, and the
// plan it sent in it (nil until then).
type workerSession struct {
	*session
	plan   *workerPlan
	opened time.Time
}

// workerPlan is a plan a worker holds for a coordinator.
type workerPlan struct {
	id      string
	session *session // the session it came in, and its messages go in
	coord   *actor.PID
	ctx     context.Context
	cancel  context.CancelFunc
	dir     string // the plan's scratch directory
	plan    *scenarios.Plan
	jobs    []*run.Job // nil until the plan is ready
	release func()     // ends inputs.ReadFrom
	results map[int32]*result
	running sync.WaitGroup
}

// result is a finished job's results, waiting for the coordinator.
type result struct {
	outcome []byte
	trace   string // the trace store's file, "" when not tracing
}

// StartWorker joins the cluster and starts executing the jobs coordinators
// send. Stop it with Stop.
func StartWorker(cfg WorkerConfig) (*Worker, error) { return startWorker(cfg, workerHooks{}) }

// startWorker is StartWorker with hooks.
func startWorker(cfg WorkerConfig, hooks workerHooks) (*Worker, error) {
	if len(cfg.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("the shared secret has %d bytes, fewer than %d", len(cfg.Secret), MinSecretBytes)
	}
	if cfg.Slots > MaxSlots {
		return nil, fmt.Errorf("%d slots, more than %d", cfg.Slots, MaxSlots)
	}
	if cfg.Advertise != "" && cfg.Port == 0 {
		return nil, errors.New("an advertised host needs the port of the worker's actors")
	}
	if cfg.Slots <= 0 {
		cfg.Slots = runtime.GOMAXPROCS(0)
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	greet, err := newGreeter(cfg.Secret)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, log: cfg.Logger, greet: greet, build: thisBuild(), sessions: map[string]*workerSession{}, plans: map[string]*workerPlan{}, hooks: hooks}
	if hooks.build != nil {
		w.build = hooks.build
	}
	if w.scratch, err = os.MkdirTemp("", "maple-worker-*"); err != nil {
		return nil, err
	}
	cache := cfg.Cache
	if cache == "" {
		cache = filepath.Join(w.scratch, "files")
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		os.RemoveAll(w.scratch)
		return nil, err
	}
	w.store = newStore(cache)
	w.ready = sync.NewCond(&w.mu)
	for range cfg.Slots {
		w.slots.Add(1)
		go w.serve()
	}
	props := actor.PropsFromProducer(func() actor.Actor { return w })
	w.member, err = startMember(memberConfig{host: cfg.Host, port: cfg.Port, advertise: cfg.Advertise,
		health: cfg.Health, hosts: []string{cfg.Health.Addr().String()},
		kinds: []*cluster.Kind{cluster.NewKind(workerKind, props)}, logger: w.log, tap: hooks.tap})
	if err != nil {
		w.stopSlots()
		os.RemoveAll(w.scratch)
		return nil, err
	}
	if _, err := w.member.system.Root.SpawnNamed(props, workerActor); err != nil {
		w.member.stop()
		w.stopSlots()
		os.RemoveAll(w.scratch)
		return nil, err
	}
	w.member.open()
	w.log.Info("worker joined the cluster", zap.String("health", cfg.Health.Addr().String()),
		zap.String("address", w.member.address()), zap.Int("slots", cfg.Slots))
	return w, nil
}

// Address returns the address of the worker's actors (remote).
func (w *Worker) Address() string { return w.member.address() }

// Stop leaves the cluster: the jobs in progress are abandoned (their
// coordinators run them elsewhere) and the worker's temporary files are
// removed.
func (w *Worker) Stop() {
	w.mu.Lock()
	w.stopped = true
	for _, p := range w.plans {
		p.cancel()
	}
	w.mu.Unlock()
	w.member.stop()
	w.stopSlots()
	w.wg.Wait()
	w.mu.Lock()
	for id, p := range w.plans {
		w.dropLocked(id, p)
	}
	w.mu.Unlock()
	os.RemoveAll(w.scratch)
}

// stopSlots ends the slots' goroutines once the tasks waiting have ended
// (those of cancelled plans end at once).
func (w *Worker) stopSlots() {
	w.mu.Lock()
	w.stopped = true
	w.ready.Broadcast()
	w.mu.Unlock()
	w.slots.Wait()
}

// serve is a slot: it runs the waiting jobs, in the order they came, on an
// actor system of its own, until Stop. Its last problem built is kept for
// the next job of the same plan only: another plan's files may differ under
// the same names.
func (w *Worker) serve() {
	defer w.slots.Done()
	slot := run.NewSlot(&run.Options{Engine: run.Actors, Logger: w.log})
	defer slot.Close()
	last := ""
	for {
		w.mu.Lock()
		for len(w.tasks) == 0 && !w.stopped {
			w.ready.Wait()
		}
		if len(w.tasks) == 0 {
			w.mu.Unlock()
			return
		}
		t := w.tasks[0]
		w.tasks = w.tasks[1:]
		w.mu.Unlock()
		if last != t.p.id {
			slot.Forget()
			last = t.p.id
		}
		w.execute(slot, t)
		w.send(t.p, &wire.Body{Kind: &wire.Body_Done{Done: t.done}})
		t.p.running.Done()
	}
}

// Receive implements actor.Actor: the worker's actor handles the
// coordinators' messages: greetings, then the messages of their sessions.
func (w *Worker) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *wire.Sealed:
		if len(m.Session) == 0 {
			w.onGreeting(ctx, m)
			return
		}
		w.mu.Lock()
		s := w.sessions[string(m.Session)]
		w.mu.Unlock()
		if s == nil {
			w.ignore(ctx, errors.New("no such session"), wire.Refusal_UNKNOWN_SESSION)
			return
		}
		b, err := s.open(m)
		if err != nil {
			w.ignore(ctx, err, wire.Refusal_NOT_SEALED)
			return
		}
		switch k := b.Kind.(type) {
		case *wire.Body_Plan:
			w.onPlan(ctx, s, k.Plan)
		case *wire.Body_Job:
			w.onJob(s, k.Job)
		case *wire.Body_BlobRequest:
			ctx.Respond(s.seal(&wire.Body{Kind: &wire.Body_Chunk{Chunk: w.blobChunk(s, k.BlobRequest)}}))
		case *wire.Body_Release:
			w.onRelease(s, k.Release)
		case *wire.Body_Cancel:
			w.forget(func(p *workerPlan) bool { return p.session == s.session && p.id == k.Cancel.PlanId })
		}
	case *actor.Terminated:
		// A coordinator's process ended: its plans are of no use any more.
		w.forget(func(p *workerPlan) bool { return p.coord.Equal(m.Who) })
	}
}

// ignore logs a message that did not open and, if it is a request, answers
// why, so that the coordinator can say it (a replay gets no answer).
func (w *Worker) ignore(ctx actor.Context, err error, reason wire.Refusal_Reason) {
	w.log.Warn("ignored a message", zap.Stringer("from", ctx.Sender()), zap.Error(err))
	if ctx.Sender() != nil && !errors.Is(err, errReplayed) {
		ctx.Respond(refusal(reason, w.cfg.Health.Addr().String()))
	}
}

// onGreeting answers a coordinator's Hello with a Welcome: one that refuses
// a coordinator of another build, or that opens the session the coordinator
// proposed.
func (w *Worker) onGreeting(ctx actor.Context, m *wire.Sealed) {
	b, err := w.greet.open(m, fromCoordinator)
	if err != nil {
		w.ignore(ctx, err, wire.Refusal_NOT_SEALED)
		return
	}
	h := b.GetHello()
	if h == nil {
		w.log.Warn("ignored a greeting that is not a Hello", zap.Stringer("from", ctx.Sender()))
		return
	}
	welcome := &wire.Welcome{Build: w.build, Slots: int32(w.cfg.Slots), Refused: compatible(w.build, h.Build), Health: w.cfg.Health.Addr().String()}
	if welcome.Refused == "" {
		s, key, err := answer(w.cfg.Secret, h)
		if err == nil {
			err = w.hold(s)
		}
		if err != nil {
			w.log.Warn("ignored a greeting", zap.Stringer("from", ctx.Sender()), zap.Error(err))
			return
		}
		welcome.Session, welcome.Key = s.id, key
	}
	ctx.Respond(w.greet.seal(&wire.Body{Kind: &wire.Body_Welcome{Welcome: welcome}}, fromWorker))
}

// hold keeps a new session until its plan comes, forgetting the sessions
// that waited for theirs longer than pendingLifetime.
func (w *Worker) hold(s *session) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return errors.New("the worker is stopping")
	}
	pending := 0
	for id, ws := range w.sessions { // the order does not matter: it only deletes and counts
		if ws.plan == nil {
			if time.Since(ws.opened) > pendingLifetime {
				delete(w.sessions, id)
				continue
			}
			pending++
		}
	}
	switch {
	case w.sessions[string(s.id)] != nil:
		return errors.New("it opens a session that exists (a replayed greeting)")
	case pending >= maxPending:
		return fmt.Errorf("%d sessions wait for their plan already", pending)
	}
	w.sessions[string(s.id)] = &workerSession{session: s, opened: time.Now()}
	return nil
}

// planLocked returns the plan of session s whose id is id, if the worker
// still holds it. w.mu is held.
func (w *Worker) planLocked(s *workerSession, id string) *workerPlan {
	if p := s.plan; p != nil && p.id == id && w.plans[id] == p {
		return p
	}
	return nil
}

// onPlan takes a plan from a coordinator, the one plan of its session, and
// prepares it in the background: fetches the files the worker lacks,
// rebuilds the plan and checks it is the coordinator's. PlanReady tells the
// coordinator how it went.
func (w *Worker) onPlan(ctx actor.Context, s *workerSession, spec *wire.PlanSpec) {
	coord := actor.NewPID(spec.ReplyAddress, spec.ReplyId)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, dup := w.plans[spec.PlanId]; dup || s.plan != nil || w.sessions[string(s.id)] != s || w.stopped {
		return
	}
	if why := compatible(w.build, spec.Build); why != "" {
		w.log.Warn("refused a coordinator of another build", zap.String("coordinator", spec.ReplyAddress), zap.String("why", why))
		delete(w.sessions, string(s.id))
		w.member.system.Root.Send(coord, s.seal(&wire.Body{Kind: &wire.Body_Ready{Ready: &wire.PlanReady{PlanId: spec.PlanId,
			Error: &wire.RemoteError{Message: "worker " + w.cfg.Health.Addr().String() + " refused the plan: " + why}}}}))
		return
	}
	pctx, cancel := context.WithCancel(context.Background())
	p := &workerPlan{id: spec.PlanId, session: s.session, coord: coord, ctx: pctx, cancel: cancel, results: map[int32]*result{}}
	w.plans[spec.PlanId] = p
	s.plan = p
	ctx.Watch(coord)
	w.log.Info("plan received", zap.String("coordinator", spec.ReplyAddress), zap.String("scenario", spec.File), zap.Int32("jobs", spec.Jobs))
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		ready := &wire.PlanReady{PlanId: spec.PlanId}
		if err := w.prepare(p, spec); err != nil {
			level := zap.WarnLevel
			if errors.Is(err, context.Canceled) { // the coordinator is done with it
				level = zap.DebugLevel
			}
			w.log.Log(level, "could not prepare a plan", zap.String("coordinator", spec.ReplyAddress), zap.Error(err))
			ready.Error = toWire(err)
		}
		w.send(p, &wire.Body{Kind: &wire.Body_Ready{Ready: ready}})
	}()
}

// prepare fetches the plan's files, rebuilds the plan and its jobs.
func (w *Worker) prepare(p *workerPlan, spec *wire.PlanSpec) error {
	for _, f := range spec.Files {
		if f.Missing || f.Dir {
			continue
		}
		err := w.store.fetch(f.Sha256, f.Size, func(offset int64) ([]byte, error) {
			c, err := requestChunk(p.ctx, w.member.system, p.session, p.coord, &wire.Body{Kind: &wire.Body_FileRequest{FileRequest: &wire.FileRequest{PlanId: p.id, Sha256: f.Sha256, Offset: offset}}})
			if err != nil {
				return nil, err
			}
			return c.Data, nil
		})
		if err != nil {
			return fmt.Errorf("fetching %s from the coordinator: %w", f.Path, err)
		}
	}
	plan, err := scenarios.Parse(spec.Source, spec.File, spec.Dir, spec.Sets)
	if err != nil {
		return err
	}
	if !bytes.Equal(fingerprint(plan), spec.Fingerprint) {
		return errors.New("the worker rebuilt a plan that differs from the coordinator's")
	}
	dir, err := os.MkdirTemp(w.scratch, "plan-*")
	if err != nil {
		return err
	}
	opts := &run.Options{Engine: run.Engine(spec.Engine), TracePayload: spec.TracePayload, Logger: w.log}
	traceDir := ""
	if spec.Trace {
		traceDir = dir
	}
	jobs := run.Jobs(plan, opts, traceDir)
	if len(jobs) != int(spec.Jobs) {
		os.RemoveAll(dir)
		return fmt.Errorf("the worker rebuilt a plan of %d jobs, the coordinator's has %d", len(jobs), spec.Jobs)
	}
	release := inputs.ReadFrom(plan, newShipped(w.store, spec.Files))
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.plans[p.id] != p { // forgotten meanwhile
		release()
		os.RemoveAll(dir)
		return context.Canceled
	}
	p.dir, p.plan, p.jobs, p.release = dir, plan, jobs, release
	return nil
}

// onJob queues a job of session s's plan, once ready, for the next free
// slot.
func (w *Worker) onJob(s *workerSession, req *wire.JobRequest) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.planLocked(s, req.PlanId)
	if w.stopped {
		return
	}
	if p == nil || p.jobs == nil || req.Position < 0 || int(req.Position) >= len(p.jobs) {
		w.log.Warn("ignored a job of an unknown plan", zap.String("plan", req.PlanId), zap.Int32("position", req.Position))
		return
	}
	j := p.jobs[req.Position]
	done := &wire.JobDone{PlanId: p.id, Position: req.Position}
	if j.CurveIndex() != int(req.Curve) || j.Run != int(req.Run) {
		done.Error = toWire(fmt.Errorf("job %d is run %d of curve %d here, run %d of curve %d at the coordinator", req.Position, j.Run, j.CurveIndex(), req.Run, req.Curve))
		w.send(p, &wire.Body{Kind: &wire.Body_Done{Done: done}})
		return
	}
	p.running.Add(1)
	w.tasks = append(w.tasks, task{p: p, j: j, done: done})
	w.ready.Signal()
}

// execute runs a task's job on slot and fills its report with how it
// ended, keeping its results for the coordinator.
func (w *Worker) execute(s *run.Slot, t task) {
	p, j, done := t.p, t.j, t.done
	if p.ctx.Err() != nil {
		done.Interrupted = true
		return
	}
	if w.hooks.beforeJob != nil {
		w.hooks.beforeJob(p.ctx, j.Position())
	}
	if err := s.Execute(p.ctx, j); err != nil {
		if p.ctx.Err() != nil {
			done.Interrupted = true
		} else {
			done.Error = toWire(err)
		}
		return
	}
	res, err := w.keep(j)
	if err != nil {
		done.Error = toWire(err)
		return
	}
	if done.Outcome, err = blobOf(res.outcome, ""); err == nil && res.trace != "" {
		done.Trace, err = blobOf(nil, res.trace)
	}
	if err != nil {
		done.Error = toWire(err)
		return
	}
	w.mu.Lock()
	p.results[done.Position] = res
	w.mu.Unlock()
}

// keep encodes a finished job's results.
func (w *Worker) keep(j *run.Job) (*result, error) {
	o, err := j.Outcome()
	if err != nil {
		return nil, err
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(&wire.JobOutcome{Table: o.Table, Messages: o.Messages,
		Duration: o.Duration, Warnings: o.Warnings, Details: rawDetails(o.Details)})
	if err != nil {
		return nil, err
	}
	return &result{outcome: b, trace: j.TracePath()}, nil
}

// blobOf describes bytes (data, or the file at path), inline when small.
func blobOf(data []byte, path string) (*wire.Blob, error) {
	if path != "" {
		var err error
		sum, size, err := hashFile(path)
		if err != nil {
			return nil, err
		}
		b := &wire.Blob{Present: true, Size: size, Sha256: sum}
		if size <= inlineLimit {
			if b.Inline, err = os.ReadFile(path); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	sum := sha256.Sum256(data)
	b := &wire.Blob{Present: true, Size: int64(len(data)), Sha256: sum[:]}
	if len(data) <= inlineLimit {
		b.Inline = data
	}
	return b, nil
}

// blobChunk answers a coordinator's request for a piece of a result of
// session s's plan.
func (w *Worker) blobChunk(s *workerSession, r *wire.BlobRequest) *wire.Chunk {
	w.mu.Lock()
	var res *result
	if p := w.planLocked(s, r.PlanId); p != nil {
		res = p.results[r.Position]
	}
	w.mu.Unlock()
	switch {
	case res == nil:
		return &wire.Chunk{Error: "no such result"}
	case r.Trace:
		b, err := readChunk(res.trace, r.Offset)
		if err != nil {
			return &wire.Chunk{Error: err.Error()}
		}
		return &wire.Chunk{Data: b}
	case r.Offset < 0 || r.Offset > int64(len(res.outcome)):
		return &wire.Chunk{Error: "offset out of range"}
	}
	end := min(r.Offset+chunkSize, int64(len(res.outcome)))
	return &wire.Chunk{Data: res.outcome[r.Offset:end]}
}

// onRelease drops a job's results the coordinator of session s holds now.
func (w *Worker) onRelease(s *workerSession, r *wire.Release) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.planLocked(s, r.PlanId); p != nil {
		if res := p.results[r.Position]; res != nil {
			if res.trace != "" {
				os.Remove(res.trace)
			}
			delete(p.results, r.Position)
		}
	}
}

// forget stops and drops the plans match selects, once their jobs ended.
func (w *Worker) forget(match func(*workerPlan) bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(w.plans)) {
		p := w.plans[id]
		if !match(p) {
			continue
		}
		p.cancel()
		if w.stopped {
			continue // Stop drops it
		}
		delete(w.plans, id)
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			p.running.Wait()
			w.mu.Lock()
			w.dropLocked(id, p)
			w.mu.Unlock()
		}()
		w.log.Info("plan closed", zap.String("coordinator", p.coord.Address))
	}
}

// dropLocked releases what a forgotten plan holds. w.mu is held.
func (w *Worker) dropLocked(id string, p *workerPlan) {
	if p.release != nil {
		p.release()
		p.release = nil
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
		p.dir = ""
	}
	delete(w.plans, id)
	delete(w.sessions, string(p.session.id))
}

// send seals b in plan p's session and sends it to p's coordinator.
func (w *Worker) send(p *workerPlan, b *wire.Body) {
	w.member.system.Root.Send(p.coord, p.session.seal(b))
}

// requestChunk sends b, sealed in session s, to pid and waits (at most
// requestTimeout, or until ctx is done) for the Chunk it answers.
func requestChunk(ctx context.Context, system *actor.ActorSystem, s *session, pid *actor.PID, b *wire.Body) (*wire.Chunk, error) {
	res, err := await(ctx, system.Root.RequestFuture(pid, s.seal(b), requestTimeout))
	if err != nil {
		return nil, err
	}
	body, err := openAnswer(res, s, nil)
	if err != nil {
		return nil, err
	}
	c := body.GetChunk()
	if c == nil {
		return nil, fmt.Errorf("unexpected answer %T", body.Kind)
	}
	if c.Error != "" {
		return nil, errors.New(c.Error)
	}
	return c, nil
}

// await waits for f's result, or for ctx to be done.
func await(ctx context.Context, f *actor.Future) (any, error) {
	type answer struct {
		v   any
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		v, err := f.Result()
		ch <- answer{v, err}
	}()
	select {
	case a := <-ch:
		return a.v, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
