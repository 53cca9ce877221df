package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"maple/cluster/wire"
	"maple/scenarios/run"
)

// queued is how many jobs a worker holds beyond its slots: a slot that
// frees up starts the next job at once instead of waiting for the
// coordinator to hear of the last one and answer.
const queued = 1

// DefaultWait is how long a coordinator waits, by default, while no worker
// can take its jobs before it gives up.
const DefaultWait = time.Minute

// Config configures a coordinator.
type Config struct {
	// Workers are the health endpoints (host:port) of the workers, as
	// `maple worker --listen` printed them.
	Workers []string
	// Host is the address the coordinator's actors listen on for the
	// workers' answers: loopback by default, an address the workers reach
	// when they run on other hosts; Port is their port (0: any free one).
	Host string
	Port int
	// Secret is the cluster's shared secret.
	Secret []byte
	// Wait is how long to wait while no worker can take the plan's jobs
	// before failing (0: DefaultWait).
	Wait time.Duration
	// Logger receives the coordinator's logs; nil discards them.
	Logger *zap.Logger
}

// Coordinator hands the jobs of a plan to the workers of a cluster and
// gathers their results: it is a run.Executor, so the runner writes the same
// run directory as when the jobs run in its own process.
type Coordinator struct {
	cfg   Config
	build *wire.Build
	// hello, when set (by tests), replaces the build the coordinator
	// presents to workers.
	hello *wire.Build
	// tap, when set (by tests), wraps the connections the coordinator
	// dials to workers (memberConfig.tap).
	tap func(net.Conn) net.Conn
}

// NewCoordinator checks cfg and returns a coordinator.
func NewCoordinator(cfg Config) (*Coordinator, error) {
	if len(cfg.Workers) == 0 {
		return nil, errors.New("no worker listed")
	}
	for _, w := range cfg.Workers {
		if err := CheckWorker(w); err != nil {
			return nil, fmt.Errorf("worker %q: %v", w, err)
		}
	}
	if len(cfg.Secret) < MinSecretBytes {
		return nil, fmt.Errorf("the shared secret has %d bytes, fewer than %d", len(cfg.Secret), MinSecretBytes)
	}
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultWait
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	return &Coordinator{cfg: cfg, build: thisBuild()}, nil
}

// Execute implements run.Executor: it joins the cluster, gives every worker
// that joins the plan, hands each ready worker as many jobs as it has slots,
// fetches the results of the jobs that finish and reports them to q. A job
// whose worker leaves the cluster (its process died, its host went away)
// before its results arrived is handed out again. Execute returns when q has
// no job left, or with an error when no worker could take the jobs for
// Config.Wait or a worker could not prepare the plan.
func (c *Coordinator) Execute(ctx context.Context, q *run.Queue) error {
	co, err := c.newCoordination(q)
	if err != nil {
		return err
	}
	health, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", "0"))
	if err != nil {
		return err
	}
	feed := &topologyFeed{}
	hosts := append(slices.Clone(c.cfg.Workers), health.Addr().String())
	co.member, err = startMember(memberConfig{host: c.cfg.Host, port: c.cfg.Port, health: health, hosts: hosts, logger: co.log, topology: feed.publish, tap: c.tap})
	if err != nil {
		health.Close()
		return err
	}
	defer co.member.stop()
	co.self, err = co.member.system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return co }), "maple-coordinator-"+co.spec.PlanId)
	if err != nil {
		return err
	}
	co.spec.ReplyAddress, co.spec.ReplyId = co.self.Address, co.self.Id
	feed.attach(co.member.system.Root, co.self)
	co.member.open()
	co.log.Info("coordinating the plan", zap.String("address", co.member.address()), zap.Strings("workers", c.cfg.Workers), zap.Int("jobs", q.Len()))
	stop := make(chan struct{})
	go func() {
		ticker := time.NewTicker(time.Second)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				co.member.system.Root.Send(co.self, interrupted{})
				<-stop
				return
			case <-ticker.C:
				co.member.system.Root.Send(co.self, tick{})
			case <-stop:
				return
			}
		}
	}()
	<-co.done
	close(stop)
	co.cancelFetches()
	co.fetches.Wait()
	_ = co.member.system.Root.PoisonFuture(co.self).Wait() // after the messages the fetches sent
	return co.err
}

// coordination is the state of one plan's execution, owned by the
// coordinator's actor.
type coordination struct {
	cfg    Config
	log    *zap.Logger
	greet  *greeter
	build  *wire.Build // this process's
	hello  *wire.Build // the build it presents (its own, unless a test says otherwise)
	q      *run.Queue
	spec   *wire.PlanSpec
	files  *manifest
	member *member
	self   *actor.PID

	workers   map[string]*worker // by member id
	sessions  map[string]string  // member id by session id, kept once the member is gone
	gone      map[string]bool    // members that left or failed: never used again
	refused   []string           // why workers were refused
	idleSince time.Time          // since when no worker can take jobs (zero: one can)

	fetchCtx      context.Context
	cancelFetches context.CancelFunc
	fetches       sync.WaitGroup

	done     chan struct{}
	err      error
	finished bool
}

// worker is a worker as the coordinator sees it.
type worker struct {
	name     string // its health endpoint once it said which (its address as listed), else its actors' address
	member   *cluster.Member
	pid      *actor.PID
	session  *session // nil until it welcomed the coordinator
	state    workerState
	slots    int
	running  map[int32]*run.Job // jobs sent, not yet done
	fetching map[int32]*run.Job // jobs done, results being fetched
	jobs     int                // jobs whose results it delivered
	transfer sync.Mutex         // one result transfer at a time from a worker
}

// workerState is where a worker is in the protocol.
type workerState int

const (
	greeting  workerState = iota // Hello sent
	preparing                    // plan sent, waiting for PlanReady
	ready                        // taking jobs
)

// Messages the coordinator's actor sends itself.
type (
	// welcomed is a worker's answer to Hello, or the failure to get one.
	welcomed struct {
		id      string
		offer   *offer
		welcome *wire.Welcome
		err     error
	}
	// fetched is a finished job's results, fetched from its worker into
	// a temporary trace file, or the failure to fetch them.
	fetched struct {
		id      string
		pos     int32
		outcome *run.Outcome
		trace   string
		err     error
	}
	// tick paces the check for an idle cluster.
	tick struct{}
	// interrupted says the execution's context is done.
	interrupted struct{}
)

// newCoordination prepares the plan's execution: its specification for the
// workers and the manifest of its files.
func (c *Coordinator) newCoordination(q *run.Queue) (*coordination, error) {
	plan, opts := q.Plan(), q.Options()
	files, err := newManifest(plan)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 16)
	rand.Read(id)
	hello := c.build
	if c.hello != nil {
		hello = c.hello
	}
	spec := &wire.PlanSpec{PlanId: hex.EncodeToString(id), Build: hello, Source: plan.Source, File: plan.File, Dir: plan.Dir,
		Sets: plan.Sets, Engine: string(opts.Engine), Trace: q.Len() > 0 && q.Job(0).TracePath() != "",
		TracePayload: opts.TracePayload, Files: files.entries, Fingerprint: fingerprint(plan), Jobs: int32(q.Len())}
	greet, err := newGreeter(c.cfg.Secret)
	if err != nil {
		return nil, err
	}
	co := &coordination{cfg: c.cfg, log: c.cfg.Logger, greet: greet, build: c.build, hello: hello, q: q, spec: spec, files: files,
		workers: map[string]*worker{}, sessions: map[string]string{}, gone: map[string]bool{}, idleSince: time.Now(), done: make(chan struct{})}
	co.fetchCtx, co.cancelFetches = context.WithCancel(context.Background())
	return co, nil
}

// Receive implements actor.Actor.
func (co *coordination) Receive(ctx actor.Context) {
	if co.finished {
		if s, ok := ctx.Message().(*fetched); ok && s.trace != "" {
			os.Remove(s.trace)
		}
		return
	}
	switch m := ctx.Message().(type) {
	case *cluster.ClusterTopology:
		co.onTopology(m)
	case *welcomed:
		co.onWelcome(m)
	case *fetched:
		co.onFetched(m)
	case tick:
		co.checkIdle()
	case interrupted:
		co.interrupt()
		return
	case *wire.Sealed:
		id, known := co.sessions[string(m.Session)]
		if !known {
			co.ignore(ctx, errors.New("no such session"), wire.Refusal_UNKNOWN_SESSION)
			return
		}
		w := co.workers[id]
		if w == nil { // written off: what it still sends is of no use
			return
		}
		b, err := w.session.open(m)
		if err != nil {
			co.ignore(ctx, err, wire.Refusal_NOT_SEALED)
			return
		}
		switch k := b.Kind.(type) {
		case *wire.Body_Ready:
			co.onReady(id, w, k.Ready)
		case *wire.Body_Done:
			co.onDone(id, w, k.Done)
		case *wire.Body_FileRequest:
			chunk := &wire.Chunk{}
			if k.FileRequest.PlanId != co.spec.PlanId {
				chunk.Error = "no such plan"
			} else if data, err := co.files.chunk(k.FileRequest.Sha256, k.FileRequest.Offset); err != nil {
				chunk.Error = err.Error()
			} else {
				chunk.Data = data
			}
			ctx.Respond(w.session.seal(&wire.Body{Kind: &wire.Body_Chunk{Chunk: chunk}}))
		}
	default:
		return
	}
	co.dispatch()
}

// ignore logs a message that did not open and, if it is a request, answers
// why (a replay gets no answer).
func (co *coordination) ignore(ctx actor.Context, err error, reason wire.Refusal_Reason) {
	co.log.Warn("ignored a message", zap.Stringer("from", ctx.Sender()), zap.Error(err))
	if ctx.Sender() != nil && !errors.Is(err, errReplayed) {
		ctx.Respond(refusal(reason, ""))
	}
}

// onTopology greets the workers that joined and writes off those that
// left. Every topology lists all the members the cluster sees alive.
func (co *coordination) onTopology(t *cluster.ClusterTopology) {
	alive := map[string]bool{}
	for _, m := range t.Members {
		alive[m.Id] = true
		if co.workers[m.Id] != nil || co.gone[m.Id] || !slices.Contains(m.Kinds, workerKind) {
			continue
		}
		w := &worker{name: m.Address(), member: m, pid: actor.NewPID(m.Address(), workerActor), running: map[int32]*run.Job{}, fetching: map[int32]*run.Job{}}
		co.workers[m.Id] = w
		co.log.Debug("worker joined the cluster", zap.String("worker", m.Address()))
		system, self, id := co.member.system, co.self, m.Id
		go func() {
			msg := &welcomed{id: id}
			defer func() { system.Root.Send(self, msg) }()
			if msg.offer, msg.err = newOffer(); msg.err != nil {
				return
			}
			hello := co.greet.seal(&wire.Body{Kind: &wire.Body_Hello{Hello: msg.offer.hello(co.hello)}}, fromCoordinator)
			res, err := system.Root.RequestFuture(w.pid, hello, requestTimeout).Result()
			if msg.err = err; err == nil {
				msg.welcome, msg.err = openWelcome(res, co.greet)
			}
		}()
	}
	for _, id := range slices.Sorted(maps.Keys(co.workers)) {
		if !alive[id] {
			co.lose(id, "it left the cluster")
		}
	}
}

// openWelcome opens an answer to Hello.
func openWelcome(res any, g *greeter) (*wire.Welcome, error) {
	b, err := openAnswer(res, nil, g)
	if err != nil {
		return nil, err
	}
	if b.GetWelcome() == nil {
		return nil, fmt.Errorf("unexpected answer %T", b.Kind)
	}
	return b.GetWelcome(), nil
}

// onWelcome opens the session with a worker of the same build and sends it
// the plan, or refuses the worker and says why: its build, or a seal one of
// the two could not open.
func (co *coordination) onWelcome(m *welcomed) {
	w := co.workers[m.id]
	if w == nil || w.state != greeting {
		return
	}
	var refused *refusedError
	health := ""
	switch {
	case m.welcome != nil:
		health = m.welcome.Health
	case errors.As(m.err, &refused):
		health = refused.r.Health
	}
	if _, port, err := net.SplitHostPort(health); err == nil {
		w.name = net.JoinHostPort(w.member.Host, port) // as listed, even when it listens on 0.0.0.0
	}
	addr := w.name
	switch {
	case refused != nil:
		co.refuse(m.id, fmt.Sprintf("worker %s refused this coordinator's seal: %s", addr, refused.reason()))
		return
	case errors.Is(m.err, errForged):
		co.refuse(m.id, fmt.Sprintf("refused the seal of worker %s: its answer does not open under this coordinator's secret (the two do not hold the same cluster secret, or the answer was altered on the way)", addr))
		return
	case m.err != nil:
		co.lose(m.id, fmt.Sprintf("it did not answer: %v", m.err))
		return
	case compatible(co.build, m.welcome.Build) != "":
		co.refuse(m.id, fmt.Sprintf("refused worker %s: %s", addr, compatible(co.build, m.welcome.Build)))
		return
	case m.welcome.Refused != "":
		co.refuse(m.id, fmt.Sprintf("worker %s refused this coordinator: %s", addr, m.welcome.Refused))
		return
	}
	s, err := m.offer.accept(co.cfg.Secret, m.welcome)
	if err != nil {
		co.refuse(m.id, fmt.Sprintf("refused worker %s: %v", addr, err))
		return
	}
	w.session = s
	co.sessions[string(s.id)] = m.id
	w.state, w.slots = preparing, max(int(m.welcome.Slots), 1)
	co.log.Info("worker joined", zap.String("worker", addr), zap.Int("slots", w.slots))
	co.send(w, &wire.Body{Kind: &wire.Body_Plan{Plan: co.spec}})
}

// refuse stops using a worker that cannot serve the plan (another build, a
// seal one of the two cannot open) and says why.
func (co *coordination) refuse(id, why string) {
	co.log.Warn(why)
	co.refused = append(co.refused, why)
	delete(co.workers, id)
	co.gone[id] = true
}

// onReady starts using a worker that prepared the plan; a worker that
// could not prepare it fails the execution (a file changed, a worker built
// another plan: the outputs would not be the in-process ones).
func (co *coordination) onReady(id string, w *worker, r *wire.PlanReady) {
	if r.PlanId != co.spec.PlanId || w.state != preparing {
		return
	}
	if r.Error != nil {
		if r.Error.Kind == wire.RemoteError_OTHER && strings.Contains(r.Error.Message, "refused the plan") {
			co.refuse(id, r.Error.Message)
			return
		}
		co.finish(fmt.Errorf("worker %s could not prepare the plan: %w", w.name, fromWire(r.Error, w.name)))
		return
	}
	w.state = ready
}

// onDone handles a worker's report of a job's end: an error ends the job
// (and, as in-process, stops the plan after the jobs before it); results
// are fetched.
func (co *coordination) onDone(id string, w *worker, d *wire.JobDone) {
	if d.PlanId != co.spec.PlanId {
		return
	}
	j := w.running[d.Position]
	if j == nil {
		return
	}
	delete(w.running, d.Position)
	switch {
	case d.Interrupted:
		co.q.Retry(j) // the worker is stopping: run it elsewhere
	case d.Error != nil:
		co.log.Info("job failed", zap.String("worker", w.name), zap.String("curve", j.Curve.Label), zap.Int("run", j.Run))
		co.q.Done(j, fromWire(d.Error, w.name))
	default:
		w.fetching[d.Position] = j
		co.fetches.Add(1)
		go co.fetch(id, w, j, d)
	}
}

// fetch brings a finished job's results from its worker: the outcome and
// the trace store (into a temporary file beside the job's trace path).
func (co *coordination) fetch(id string, w *worker, j *run.Job, d *wire.JobDone) {
	defer co.fetches.Done()
	w.transfer.Lock()
	defer w.transfer.Unlock()
	msg := &fetched{id: id, pos: d.Position}
	defer func() { co.member.system.Root.Send(co.self, msg) }()
	pull := func(trace bool, b *wire.Blob, dst *bytes.Buffer, file *os.File) error {
		h := sha256.New()
		write := func(p []byte) error {
			h.Write(p)
			if file != nil {
				_, err := file.Write(p)
				return err
			}
			dst.Write(p)
			return nil
		}
		if b.Inline != nil || b.Size == 0 {
			if err := write(b.Inline); err != nil {
				return err
			}
		} else {
			for offset := int64(0); offset < b.Size; {
				c, err := requestChunk(co.fetchCtx, co.member.system, w.session, w.pid, &wire.Body{Kind: &wire.Body_BlobRequest{
					BlobRequest: &wire.BlobRequest{PlanId: d.PlanId, Position: d.Position, Trace: trace, Offset: offset}}})
				if err != nil {
					return err
				}
				if len(c.Data) == 0 {
					return fmt.Errorf("result ended at %d of %d bytes", offset, b.Size)
				}
				if err := write(c.Data); err != nil {
					return err
				}
				offset += int64(len(c.Data))
			}
		}
		if !bytes.Equal(h.Sum(nil), b.Sha256) {
			return errors.New("the result's bytes do not match its SHA-256")
		}
		return nil
	}
	if d.Outcome == nil {
		msg.err = errors.New("no results")
		return
	}
	var out bytes.Buffer
	if msg.err = pull(false, d.Outcome, &out, nil); msg.err != nil {
		return
	}
	o := &wire.JobOutcome{}
	if msg.err = proto.Unmarshal(out.Bytes(), o); msg.err != nil {
		return
	}
	msg.outcome = outcomeOf(o)
	if path := j.TracePath(); path != "" {
		if d.Trace == nil {
			msg.err = errors.New("no trace")
			return
		}
		f, err := os.Create(fmt.Sprintf("%s.%s", path, id))
		if err != nil {
			msg.err = err
			return
		}
		msg.trace = f.Name()
		msg.err = pull(true, d.Trace, nil, f)
		if err := f.Close(); msg.err == nil {
			msg.err = err
		}
	}
}

// onFetched reports a job whose results arrived; a worker whose results
// could not be fetched is written off.
func (co *coordination) onFetched(m *fetched) {
	w := co.workers[m.id]
	var j *run.Job
	if w != nil {
		j = w.fetching[m.pos]
	}
	if j == nil { // its worker was written off meanwhile: the job runs elsewhere
		if m.trace != "" {
			os.Remove(m.trace)
		}
		return
	}
	delete(w.fetching, m.pos)
	err := m.err
	if err == nil && m.trace != "" {
		err = os.Rename(m.trace, j.TracePath())
	}
	if err == nil {
		err = j.SetOutcome(m.outcome)
	}
	if err != nil {
		if m.trace != "" {
			os.Remove(m.trace)
		}
		co.q.Retry(j)
		co.lose(m.id, fmt.Sprintf("its results could not be fetched: %v", err))
		return
	}
	w.jobs++
	co.q.Done(j, nil)
	co.send(w, &wire.Body{Kind: &wire.Body_Release{Release: &wire.Release{PlanId: co.spec.PlanId, Position: m.pos}}})
}

// lose writes off a worker: its unfinished jobs are handed out again.
func (co *coordination) lose(id, why string) {
	w := co.workers[id]
	if w == nil {
		return
	}
	delete(co.workers, id)
	co.gone[id] = true
	n := len(w.running) + len(w.fetching)
	for _, pos := range slices.Sorted(maps.Keys(w.running)) {
		co.q.Retry(w.running[pos])
	}
	for _, pos := range slices.Sorted(maps.Keys(w.fetching)) {
		co.q.Retry(w.fetching[pos])
	}
	co.log.Warn("lost a worker", zap.String("worker", w.name), zap.String("why", why), zap.Int("jobs put back", n))
	co.send(w, &wire.Body{Kind: &wire.Body_Cancel{Cancel: &wire.Cancel{PlanId: co.spec.PlanId}}})
}

// dispatch hands jobs to the ready workers with free slots (and one job
// queued each), in the order of their member ids, and ends the execution
// when no job is left. Jobs whose results are being fetched hold no slot.
func (co *coordination) dispatch() {
	if co.finished {
		return
	}
	for _, id := range slices.Sorted(maps.Keys(co.workers)) {
		w := co.workers[id]
		for w.state == ready && len(w.running) < w.slots+queued {
			j, ok := co.q.Next()
			if !ok {
				break
			}
			pos := int32(j.Position())
			w.running[pos] = j
			co.send(w, &wire.Body{Kind: &wire.Body_Job{Job: &wire.JobRequest{PlanId: co.spec.PlanId, Position: pos,
				Curve: int32(j.CurveIndex()), Run: int32(j.Run)}}})
		}
	}
	if co.q.Finished() {
		co.finish(nil)
	}
}

// checkIdle fails the execution when no worker could take jobs for
// Config.Wait.
func (co *coordination) checkIdle() {
	for _, w := range co.workers {
		if w.state == ready || w.state == preparing {
			co.idleSince = time.Time{}
			return
		}
	}
	if co.idleSince.IsZero() {
		co.idleSince = time.Now()
		return
	}
	if time.Since(co.idleSince) < co.cfg.Wait {
		return
	}
	msg := fmt.Sprintf("no worker of the cluster took the plan's jobs for %v (workers listed: %s)", co.cfg.Wait, strings.Join(co.cfg.Workers, ", "))
	if len(co.refused) > 0 {
		msg += "; " + strings.Join(co.refused, "; ")
	}
	co.finish(errors.New(msg))
}

// interrupt ends the execution once its context is done: the jobs in
// progress on workers are reported interrupted (what finished is kept).
func (co *coordination) interrupt() {
	for _, id := range slices.Sorted(maps.Keys(co.workers)) {
		w := co.workers[id]
		for _, pos := range slices.Sorted(maps.Keys(w.running)) {
			co.q.Done(w.running[pos], context.Canceled)
		}
		for _, pos := range slices.Sorted(maps.Keys(w.fetching)) {
			co.q.Done(w.fetching[pos], context.Canceled)
		}
		w.running, w.fetching = map[int32]*run.Job{}, map[int32]*run.Job{}
	}
	co.finish(nil)
}

// finish ends the execution with err: the workers drop the plan.
func (co *coordination) finish(err error) {
	if co.finished {
		return
	}
	co.finished, co.err = true, err
	for _, id := range slices.Sorted(maps.Keys(co.workers)) {
		w := co.workers[id]
		co.send(w, &wire.Body{Kind: &wire.Body_Cancel{Cancel: &wire.Cancel{PlanId: co.spec.PlanId}}})
		if w.jobs > 0 {
			co.log.Info("worker's share", zap.String("worker", w.name), zap.Int("jobs", w.jobs))
		}
	}
	close(co.done)
}

// send seals b in w's session and sends it to w; a worker that has not
// welcomed the coordinator has no session, and is sent nothing.
func (co *coordination) send(w *worker, b *wire.Body) {
	if w.session != nil {
		co.member.system.Root.Send(w.pid, w.session.seal(b))
	}
}

// topologyFeed forwards the cluster's topology events to the coordinator's
// actor, keeping those published before the actor exists (the member
// starts, and sees its first topology, before its actors can be spawned).
type topologyFeed struct {
	mu      sync.Mutex
	root    *actor.RootContext
	pid     *actor.PID
	pending []*cluster.ClusterTopology
}

// publish forwards t, or keeps it until attach.
func (f *topologyFeed) publish(t *cluster.ClusterTopology) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pid == nil {
		f.pending = append(f.pending, t)
		return
	}
	f.root.Send(f.pid, t)
}

// attach forwards the kept events, then every new one, to pid.
func (f *topologyFeed) attach(root *actor.RootContext, pid *actor.PID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.root, f.pid = root, pid
	for _, t := range f.pending {
		root.Send(pid, t)
	}
	f.pending = nil
}
