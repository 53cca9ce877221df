package actors

import (
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/eventstream"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"maple/actors/trace"
	"maple/algorithms/rng"
	"maple/algorithms/systems"
)

// Timing is the virtual-time and fault model of the links.
type Timing struct {
	// Latency is the delay of every message, in virtual seconds.
	Latency float64
	// Jitter adds a delay drawn uniformly from [0, Jitter) per message, from
	// the sender's "latency" stream.
	Jitter float64
	// Bandwidth, if positive, adds size/Bandwidth seconds to a message whose
	// protobuf encoding is size bytes long. Devices placed with Place may
	// have slower links (systems.Link.Between).
	Bandwidth float64
	// Loss and Duplicate are the probabilities that a message between two
	// placed actors (network nodes, see Place) is lost or delivered twice,
	// drawn from the sender's "faults" stream. A lost message is traced at
	// the time it would have arrived and never delivered; the second copy
	// of a duplicated message arrives one link delay after the first.
	Loss, Duplicate float64
}

// link returns the model of the link from c to the actor to.
func (t *Timing) link(from, to *cell) systems.Link {
	l := systems.Link{Latency: t.Latency, Jitter: t.Jitter, Bandwidth: t.Bandwidth, Loss: t.Loss, Duplicate: t.Duplicate}
	if !from.placed && !to.placed {
		l.Loss, l.Duplicate = 0, 0
		return l
	}
	return l.Between(from.device, to.device, from.placed && to.placed)
}

// fixed reports whether every link of cells delays every message by
// exactly Latency, never losing or duplicating one: no jitter, bandwidth or
// faults, and no device whose class adds latency or limits bandwidth. The
// engine then skips the link model on every send.
func (t *Timing) fixed(cells []*cell) bool {
	if t.Jitter != 0 || t.Bandwidth != 0 || t.Loss != 0 || t.Duplicate != 0 {
		return false
	}
	for _, c := range cells {
		if c.device != nil {
			return false
		}
	}
	return true
}

// TraceOptions switches message tracing on.
type TraceOptions struct {
	// Sink receives one record per message, in delivery order. The record
	// is only valid during the call (the engine reuses it and its Fields
	// map): a sink that keeps it keeps rec.Clone(). Nil disables tracing,
	// and messages cost nothing extra.
	Sink func(*trace.Record) error
	// Payload records the vectors of every message in full.
	Payload bool
	// Encoded says that the sink reads a record's fields only by writing
	// it with a trace writer (trace.StoreWriter, trace.Writer): records
	// then carry the JSON text of the message's other fields and a nil
	// Fields map, which spares building a map per message.
	Encoded bool
}

// Options configure a Run.
type Options struct {
	// RunSeed seeds every random stream of the run (see package rng).
	RunSeed uint64
	// Run and Curve label the run in trace records.
	Run   int
	Curve string
	// Timing is the link model.
	Timing Timing
	// Trace configures message tracing.
	Trace TraceOptions
	// Observer receives what behaviours Observe. May be nil.
	Observer Observer
	// Logger receives the engine's logs. Nil discards them.
	Logger *zap.Logger
	// System hosts the run's actors. Nil gives the run a System of its own,
	// closed with the run.
	System *System
	// Done, if set, interrupts the run once it is closed (typically a
	// context's Done channel): Execute checks it before every delivery and
	// returns ErrInterrupted. The check does not change the order of
	// deliveries, so runs that finish are unaffected by it.
	Done <-chan struct{}
}

// Run is one execution of a protocol: a protoactor system hosting one actor
// per behaviour. Build it with Spawn, execute it once with Execute, and always
// Close it.
type Run struct {
	opts       Options
	system     *System
	own        bool // the run created system and closes it
	root       *actor.RootContext
	cells      []*cell
	inflight   queue
	sent       uint64            // messages sent so far
	seq        uint64            // trace records so far: deliveries and losses
	delivered  uint64            // messages delivered so far
	lost       uint64            // messages lost so far
	copies     uint64            // duplicate copies sent so far
	links      map[[2]ID]float64 // last arrival time per link whose delays vary
	finished   bool
	fixedDelay bool // every link delays by Timing.Latency alone (Timing.fixed)
	failure    error
	warnings   []string
	warned     map[string]bool
	free       []*Envelope
	recycled   []recycledMessages // messages handed back (Context.Recycle), emptied, by type
	sub        *eventstream.Subscription
	taps       []wiretap
	plain      *actor.RootContext // delivers wiretap copies, outside the trace
	rec        trace.Record       // the trace record being written, reused
	describer  trace.Describer
	lazy       []*lazyRange // the actors held lazily (lazy.go), after cells
}

// wiretap is a tap actor and the links it listens to.
type wiretap struct {
	tap ID
	on  func(from, to ID) bool
}

// NewRun creates an empty run.
func NewRun(opts Options) *Run {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	r := &Run{opts: opts, system: opts.System, warned: map[string]bool{}}
	if r.system == nil {
		r.system, r.own = NewSystem(opts.Logger), true
	}
	r.free, r.inflight = r.system.lend()
	r.root = actor.NewRootContext(r.system.actors, nil)
	r.sub = r.system.actors.EventStream.Subscribe(r.onEvent)
	return r
}

// Spawn adds an actor named name running b and returns its ID. All actors must
// be spawned before Execute, and before any lazy range (SpawnLazy).
func (r *Run) Spawn(name string, b Behaviour) ID {
	if len(r.lazy) > 0 {
		panic("actors: Spawn after SpawnLazy: lazy ranges come last")
	}
	c := &cell{run: r, id: ID(len(r.cells)), name: name, behaviour: b}
	r.host(c)
	r.cells = append(r.cells, c)
	return c.id
}

// host registers cell c as a protoactor process (process.go) under a new
// PID.
func (r *Run) host(c *cell) {
	registry := r.system.actors.ProcessRegistry
	c.pid, c.registered = registry.Add(c, registry.NextId())
	if !c.registered {
		panic("actors: protoactor's process registry gave a PID already in use")
	}
}

// Place makes actor id a network node on device d (nil: a node without a
// device, such as a server): messages between two placed actors can be lost
// or duplicated (Timing.Loss, Timing.Duplicate), and a device's class adds
// its latency and limits the bandwidth of its links. Actors that are not
// placed — the scheduler, the harness — talk over reliable links.
func (r *Run) Place(id ID, d *systems.Device) {
	c := r.cells[id]
	c.placed, c.device = true, d
}

// Name returns the name of actor id.
func (r *Run) Name(id ID) string {
	if id == Environment {
		return "env"
	}
	if name, ok := r.lazyName(id); ok {
		return name
	}
	if id < 0 || int(id) >= len(r.cells) {
		return fmt.Sprintf("unknown/%d", id)
	}
	return r.cells[id].name
}

// RunSeed returns the seed of the run's streams (Options.RunSeed).
func (r *Run) RunSeed() uint64 { return r.opts.RunSeed }

// Rand returns the random stream that actor name would get from Context.Rand,
// for code that prepares an actor's state machine before the run starts.
func (r *Run) Rand(name, purpose string) *rand.Rand {
	return rng.New(r.opts.RunSeed, name, purpose)
}

// Execute sends m from the environment to actor to and runs the protocol
// until an actor calls Finish or fails. Messages are delivered one at a time
// in order of virtual arrival time (ties in send order); each delivery runs
// the receiver on this goroutine through its process (process.go).
// When no message is left in flight and no actor has called Finish, the run
// has stalled. When Options.Done is closed, Execute stops before the next
// delivery and returns ErrInterrupted.
func (r *Run) Execute(to ID, m proto.Message) error {
	r.fixedDelay = r.opts.Timing.fixed(r.cells)
	for _, rg := range r.lazy {
		if rg.placed { // its devices come with its actors, when they wake
			r.fixedDelay = false
		}
	}
	r.push(&Envelope{From: Environment, To: to, Body: m}, false)
	for r.inflight.Len() > 0 && !r.finished && r.failure == nil {
		select {
		case <-r.opts.Done:
			return ErrInterrupted
		default:
		}
		env := r.inflight.pop()
		c := env.target
		if c == nil {
			c = r.cell(env.To)
		}
		if env.lost {
			r.drop(env)
			r.release(c)
			continue
		}
		if c.stopped {
			r.fail(&Failure{Actor: c.label(), Round: env.Round, Message: MessageName(env.Body),
				Cause: fmt.Errorf("message from %s to a stopped actor", r.Name(env.From))})
			break
		}
		r.seq++
		r.delivered++
		env.Seq = r.seq
		copies := r.tapped(env)
		if len(copies) > 0 {
			env.passed = false // the taps' copies share the body
		}
		r.deliver(c, env)
		r.release(c)
		for _, cp := range copies {
			if r.failure == nil {
				r.plain.Send(r.cells[cp.To].pid, cp)
			}
		}
	}
	if r.failure != nil {
		return r.failure
	}
	if !r.finished {
		return r.stalled()
	}
	return nil
}

// drop records a lost message at the time it would have arrived: a trace
// record marked lost and a KeyLost observation from its sender.
func (r *Run) drop(env *Envelope) {
	r.seq++
	r.lost++
	env.Seq = r.seq
	if r.opts.Trace.Sink != nil {
		r.record(env)
	}
	if obs := r.opts.Observer; obs != nil {
		obs.Observe(env.From, env.Round, KeyLost, []float64{float64(env.To)})
	}
	r.recycle(env)
}

// Observation keys the engine itself reports to the run's observer.
const (
	// KeyLost reports a message lost on its link, from its sender, in its
	// round; the value is the receiver's ID.
	KeyLost = "engine/lost"
	// KeyDuplicate reports the second copy of a duplicated message when it
	// is sent, from its sender; the value is the receiver's ID.
	KeyDuplicate = "engine/duplicate"
)

// Waiter is implemented by behaviours that can say what they are waiting
// for. When a run stalls, the engine asks every actor and reports the
// answers, so that, say, a server waiting for a reply that was lost names
// the agent and the round.
type Waiter interface {
	// Waiting describes what the actor waits for, or returns "" when it
	// waits for nothing.
	Waiting() string
}

// Stalled is the error of a run that stalled: no message in flight and the
// scheduler has not finished. It matches ErrStalled with errors.Is.
type Stalled struct {
	// Waiting lists, by actor, what the actors that implement Waiter wait
	// for ("server: round 5 waits for agent/3").
	Waiting []string
}

// Error implements error.
func (s *Stalled) Error() string {
	if len(s.Waiting) == 0 {
		return ErrStalled.Error()
	}
	return ErrStalled.Error() + ": " + strings.Join(s.Waiting, "; ")
}

// Is reports whether target is ErrStalled.
func (s *Stalled) Is(target error) bool { return target == ErrStalled }

func (r *Run) stalled() error {
	s := &Stalled{}
	for _, c := range r.cells {
		if w, ok := c.behaviour.(Waiter); ok {
			if what := w.Waiting(); what != "" {
				s.Waiting = append(s.Waiting, c.label()+": "+what)
			}
		}
	}
	r.lazyWaiting(s)
	return s
}

// send queues m from actor c to actor to, arriving after the link's delay;
// the link may lose or duplicate it. It is called while the delivery
// numbered r.seq is being handled, which is therefore the message's cause.
// passed says the sender gave m up (Context.Pass); a duplicated message is
// not passed, as its two copies share it.
func (r *Run) send(c *cell, to ID, round int, m proto.Message, passed bool) {
	if r.fixedDelay {
		env := r.envelope(c.id, to, round, c.clock+r.opts.Timing.Latency, c.clock, m)
		env.passed = passed
		r.push(env, false)
		return
	}
	var l systems.Link
	if target := r.cell(to); target != nil {
		l = r.opts.Timing.link(c, target)
	} else {
		l = systems.Link{Latency: r.opts.Timing.Latency, Jitter: r.opts.Timing.Jitter}
	}
	size := 0
	if l.Bandwidth > 0 {
		size = proto.Size(m)
	}
	d := l.Delay(size, func() *rand.Rand { return c.stream(systems.StreamLatency) })
	copies := l.Copies(func() *rand.Rand { return c.stream(systems.StreamFaults) })
	env := r.envelope(c.id, to, round, c.clock+d, c.clock, m)
	env.lost = copies == 0
	env.passed = passed && copies == 1
	r.push(env, l.Reorders())
	if copies == 2 {
		dup := r.envelope(c.id, to, round, env.Time+d, c.clock, m)
		dup.copy = true
		r.push(dup, false)
		r.copies++
		if obs := r.opts.Observer; obs != nil {
			obs.Observe(c.id, round, KeyDuplicate, []float64{float64(to)})
		}
	}
}

// timer queues m from actor c to itself, due delay seconds after its clock.
func (r *Run) timer(c *cell, delay float64, round int, m proto.Message) {
	env := r.envelope(c.id, c.id, round, c.clock+delay, c.clock, m)
	env.timer = true
	r.push(env, false)
}

// Wiretap makes actor tap receive a copy of every message delivered on a
// link for which on(from, to) reports true, right after the receiver has
// handled the original; the tap learns the intended receiver from
// Context.Addressee. Copies are not protocol messages: they are not traced,
// not counted by Messages and take no place in the delivery order, so a run
// with a wiretap delivers exactly the messages, in the same order and at the
// same virtual times, as the run without it. A message lost on its link is
// not delivered, so not copied; timers cross no link and are not copied.
// Call it before Execute.
func (r *Run) Wiretap(tap ID, on func(from, to ID) bool) {
	r.taps = append(r.taps, wiretap{tap: tap, on: on})
	if r.plain == nil {
		r.plain = actor.NewRootContext(r.system.actors, nil)
	}
}

// tapped returns the wiretap copies of env, before env is delivered (and
// recycled).
func (r *Run) tapped(env *Envelope) []*Envelope {
	var copies []*Envelope
	for _, w := range r.taps {
		if env.timer || env.From == w.tap || env.To == w.tap || !w.on(env.From, env.To) {
			continue
		}
		cp := r.envelope(env.From, w.tap, env.Round, env.Time, env.departed, env.Body)
		cp.Seq, cp.cause, cp.tapped, cp.intended = env.Seq, env.cause, true, env.To
		copies = append(copies, cp)
	}
	return copies
}

// push stamps env with its send order and queues it. On links whose delays
// vary (fifo), arrival times are raised so that the link still delivers in
// send order.
func (r *Run) push(env *Envelope, fifo bool) {
	r.sent++
	env.sent = r.sent
	if int(env.To) >= len(r.cells) {
		if c := r.cell(env.To); c != nil {
			c.pending++
			env.target = c // it stays awake, on this cell, until the message is delivered
		}
	}
	if fifo {
		if r.links == nil {
			r.links = map[[2]ID]float64{}
		}
		link := [2]ID{env.From, env.To}
		env.Time = max(env.Time, r.links[link])
		r.links[link] = env.Time
	}
	r.inflight.push(env)
}

// Messages returns the number of messages delivered so far, the harness's
// Start included (lost messages are not delivered).
func (r *Run) Messages() uint64 { return r.delivered }

// Lost returns the number of messages lost on their links so far, and
// Duplicated the number of messages their links delivered twice.
func (r *Run) Lost() uint64 { return r.lost }

// Duplicated returns the number of messages sent twice by their links.
func (r *Run) Duplicated() uint64 { return r.copies }

// Duration returns the run's virtual duration so far: the latest clock of
// any actor.
func (r *Run) Duration() float64 {
	var d float64
	for _, c := range r.cells {
		d = max(d, c.clock)
	}
	for _, rg := range r.lazy {
		d = max(d, rg.maxClock)
		for _, c := range rg.live {
			d = max(d, c.clock)
		}
	}
	return d
}

// Warnings returns the distinct warnings recorded during the run, in order.
func (r *Run) Warnings() []string { return r.warnings }

// Close stops every actor and releases the actor system. It is safe to call
// after a failed Execute.
func (r *Run) Close() {
	r.system.actors.EventStream.Unsubscribe(r.sub)
	r.system.keep(r.free, &r.inflight)
	r.free, r.inflight = nil, queue{}
	cells := r.cells
	for _, rg := range r.lazy {
		cells = append(cells, rg.hosts...)
		for _, c := range rg.live {
			cells = append(cells, c)
		}
	}
	for _, c := range cells {
		r.root.Stop(c.pid)
	}
	if r.own {
		r.system.Close()
	}
}

// envelope returns an envelope of m from actor from to actor to in round,
// arriving at virtual time at and sent at the sender's time departed, during
// the delivery being handled (its cause); its other fields are zero. It
// comes from the run's free list, or is new. Envelopes are recycled once
// their receiver has handled them: nothing refers to them afterwards (the
// trace copies what it records on delivery).
//
// The fields are set one by one rather than as a composite literal, which
// the compiler builds on the stack and copies in 16-byte loads, each
// straddling several of the literal's narrower stores: the processor cannot
// forward such stores to the load and waits for them to retire, about
// 20 ns per message in the profile of a random walk (one message per step).
func (r *Run) envelope(from, to ID, round int, at, departed float64, m proto.Message) *Envelope {
	var e *Envelope
	if n := len(r.free); n > 0 {
		e, r.free = r.free[n-1], r.free[:n-1]
	} else {
		e = new(Envelope)
	}
	e.From, e.To, e.Round, e.Time, e.departed, e.cause, e.Body = from, to, round, at, departed, r.seq, m
	return e
}

// recycle clears e, dropping the references it holds (its body, its
// receiver's cell), and puts it on the free list.
func (r *Run) recycle(e *Envelope) {
	*e = Envelope{}
	r.free = append(r.free, e)
}

func (r *Run) fail(f *Failure) {
	if r.failure == nil {
		r.failure = f
		r.opts.Logger.Error("run failed", zap.String("actor", f.Actor), zap.Int("round", f.Round),
			zap.String("message", f.Message), zap.Error(f.Cause))
		if f.Stack != "" {
			r.opts.Logger.Debug("panic", zap.String("stack", f.Stack)) // the error report carries it too
		}
	}
}

// warn records a warning of the run, once. The user hears of it from the
// summary, which lists each curve's warnings and which maple run prints:
// logging it at the warn level too printed every warning twice, so the log
// has it at the debug level only, with the moment it arose.
func (r *Run) warn(message string) {
	if !r.warned[message] {
		r.warned[message] = true
		r.warnings = append(r.warnings, message)
		r.opts.Logger.Debug("run warning", zap.String("warning", message))
	}
}

// onEvent fails the run on a dead letter: a message to an actor that has
// stopped, and left protoactor's registry, is a protocol bug, not something
// to log and forget.
func (r *Run) onEvent(evt any) {
	dl, ok := evt.(*actor.DeadLetterEvent)
	if !ok || r.failure != nil {
		return
	}
	if env, ok := dl.Message.(*Envelope); ok {
		r.fail(&Failure{Actor: r.Name(env.To), Round: env.Round, Message: MessageName(env.Body),
			Cause: fmt.Errorf("message from %s was undeliverable (dead letter)", r.Name(env.From))})
	}
}

// deliver hands env to its receiver c through protoactor's send path, which
// runs the handling on this goroutine (process.go), and, when tracing, records it in delivery order:
// the record says when the handling started and, since it has returned, when
// it ended on the receiver's clock.
func (r *Run) deliver(c *cell, env *Envelope) {
	if r.opts.Trace.Sink == nil {
		r.root.Send(c.pid, env)
		return
	}
	rec := r.newRecord(env, max(c.clock, env.Time))
	r.root.Send(c.pid, env) // handles the message and recycles env
	rec.End = c.clock
	r.write(rec)
}

// newRecord describes env in the run's trace record, whose handling starts
// at start. The record and its Fields map are reused from one message to
// the next: sinks clone what they keep (trace.Record.Clone).
func (r *Run) newRecord(env *Envelope, start float64) *trace.Record {
	rec := &r.rec
	fields := rec.Fields // cleared and refilled by Describe
	// Cleared, then set field by field, as envelopes are (Run.envelope):
	// a composite literal would be copied in from the stack.
	*rec = trace.Record{}
	rec.Fields, rec.Seq, rec.Run, rec.Curve, rec.Time, rec.Round = fields, env.Seq, r.opts.Run, r.opts.Curve, env.Time, env.Round
	rec.From, rec.To, rec.Sent, rec.Start, rec.Cause = r.Name(env.From), r.Name(env.To), env.departed, start, env.cause
	rec.Lost, rec.Duplicate, rec.Timer = env.lost, env.copy, env.timer
	if r.opts.Trace.Encoded {
		r.describer.DescribeText(rec, env.Body, r.opts.Trace.Payload)
	} else {
		r.describer.Describe(rec, env.Body, r.opts.Trace.Payload)
	}
	return rec
}

// record writes the trace record of a message that is not delivered (lost):
// it is handled by nobody, so its handling starts and ends at its arrival.
func (r *Run) record(env *Envelope) {
	rec := r.newRecord(env, env.Time)
	rec.End = env.Time
	r.write(rec)
}

func (r *Run) write(rec *trace.Record) {
	if err := r.opts.Trace.Sink(rec); err != nil {
		r.fail(&Failure{Actor: rec.From, Round: rec.Round, Message: rec.Type, Cause: fmt.Errorf("writing trace: %w", err)})
	}
}

// panicError carries a non-error panic value.
type panicError struct{ value any }

// Error implements error.
func (p panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

func stack() string { return string(debug.Stack()) }

// MessageName returns the protobuf name of m ("Tick"), for error messages;
// "<nil>" for nil.
func MessageName(m proto.Message) string {
	if m == nil {
		return "<nil>"
	}
	return string(m.ProtoReflect().Descriptor().Name())
}
