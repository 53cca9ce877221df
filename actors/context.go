package actors

import (
	"math/rand/v2"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"google.golang.org/protobuf/proto"

	"maple/algorithms/rng"
	"maple/algorithms/systems"
)

// Behaviour is the protocol logic of one actor. Receive handles one message;
// returning an error (or panicking) stops the run with a Failure naming the
// actor, the round and the message.
type Behaviour interface {
	Receive(ctx *Context, m proto.Message) error
}

// Observer receives what behaviours report through Context.Observe. It sits
// outside the protocol, with a read-only global view, and computes the metrics;
// it must copy v if it keeps it. key says what v is ("model", "noise", …).
type Observer interface {
	Observe(from ID, round int, key string, v []float64)
}

// Context is what a behaviour can see and do while it handles one message.
// It is only valid during that call.
type Context struct {
	cell    *cell
	env     *Envelope
	round   int
	recycle bool // the handler recycled the message (Recycle)
}

// Self returns the ID of the actor handling the message.
func (c *Context) Self() ID { return c.cell.id }

// Sender returns the ID of the message's sender (Environment for the harness).
func (c *Context) Sender() ID { return c.env.From }

// Addressee returns the actor the message being handled was addressed to:
// Self, except for a wiretap's copy (see Run.Wiretap), where it is the
// receiver the sender meant.
func (c *Context) Addressee() ID {
	if c.env.tapped {
		return c.env.intended
	}
	return c.cell.id
}

// Round returns the round of the message being handled. Messages sent while
// handling it belong to the same round unless SetRound changes it.
func (c *Context) Round() int { return c.round }

// SetRound sets the round of the messages sent from now on while handling the
// current message; schedulers use it to open the next round.
func (c *Context) SetRound(r int) { c.round = r }

// Now returns the actor's virtual clock in seconds.
func (c *Context) Now() float64 { return c.cell.clock }

// Spend advances the actor's virtual clock by modelled compute time.
func (c *Context) Spend(seconds float64) { c.cell.clock += seconds }

// Send sends m to the actor to. The message arrives at the sender's clock plus
// the link latency; messages on one link arrive in the order they were sent.
// m must not be modified after sending.
func (c *Context) Send(to ID, m proto.Message) {
	c.cell.run.send(c.cell, to, c.round, m, false)
}

// Pass sends m to the actor to, as Send does, and gives it up: the sender
// keeps no reference to m and sends it to nobody else, so that the receiver
// may reuse it for a message of its own (Reuse) rather than allocate one.
// Like every message, m is not modified while in flight.
func (c *Context) Pass(to ID, m proto.Message) {
	c.cell.run.send(c.cell, to, c.round, m, true)
}

// Reuse returns the message being handled if the handler may keep it and
// modify it — its sender passed it (Pass), its link did not duplicate it and
// no wiretap listens to the link, so that once this handling ends nothing
// else refers to it (the trace has recorded it already) — and nil
// otherwise, when the message may be shared and must stay as it is.
func (c *Context) Reuse() proto.Message {
	if c.env.passed {
		return c.env.Body
	}
	return nil
}

// After sends m to the actor itself, arriving delay virtual seconds after
// its clock: a timer, for deadlines and periodic work. A timer crosses no
// link (no latency, never lost) and is delivered after every message that
// arrives at the same time, so a deadline at t counts what arrives at t.
func (c *Context) After(delay float64, m proto.Message) {
	c.cell.run.timer(c.cell, delay, c.round, m)
}

// Rand returns the actor's random stream for purpose, derived from the run
// seed, the actor's name and the purpose (see package rng): the same stream
// every run with the same seed, independent of every other stream.
func (c *Context) Rand(purpose string) *rand.Rand { return c.cell.stream(purpose) }

// Observe reports v, for the current round, to the run's observer under key
// (for example "model"). It is not a message: observation is outside the
// protocol and does not appear in the trace.
func (c *Context) Observe(key string, v []float64) {
	if obs := c.cell.run.opts.Observer; obs != nil {
		obs.Observe(c.cell.id, c.round, key, v)
	}
}

// Finish ends the run successfully once the current message has been handled.
func (c *Context) Finish() { c.cell.run.finished = true }

// Warn records a warning about the run (for example an edge that cannot be
// masked); warnings are logged and listed in the run's summary.
func (c *Context) Warn(message string) { c.cell.run.warn(c.cell.label() + ": " + message) }

// Name returns the name of actor id ("server", "agent/3", …).
func (c *Context) Name(id ID) string { return c.cell.run.Name(id) }

// Logger returns a logger tagged with the actor's name.
func (c *Context) Logger() *zap.Logger {
	if c.cell.logger == nil {
		c.cell.logger = c.cell.run.opts.Logger.With(zap.String("actor", c.cell.label()))
	}
	return c.cell.logger
}

// cell hosts one behaviour: the actor's protoactor Process (process.go),
// its clock and its random streams.
type cell struct {
	run        *Run
	id         ID
	name       string // a lazy actor's is worked out when first asked (label)
	behaviour  Behaviour
	pid        *actor.PID
	registered bool // pid is in the process registry
	clock      float64
	stopped    bool
	placed     bool            // a network node: its links can lose messages
	device     *systems.Device // its device's link properties, if any
	streams    map[string]*rand.Rand
	sources    map[string]*rand.ChaCha8 // the generators of streams, for parking
	logger     *zap.Logger
	ctx        Context

	lazy    bool           // an actor of a lazy range (lazy.go)
	pending int32          // messages in flight to a lazy actor
	resume  []parkedStream // where a lazy actor's streams stood when it was parked
}

// label returns the actor's name. A lazy actor's is worked out the first
// time it is asked while the actor is awake: most wakes never need it (it
// names the actor in traces, logs, warnings, failures and stream keys).
func (c *cell) label() string {
	if c.name == "" && c.lazy {
		rg := c.run.lazyOf(c.id)
		c.name = rg.l.Name(int(c.id - rg.first))
	}
	return c.name
}

func (c *cell) stream(purpose string) *rand.Rand {
	r, ok := c.streams[purpose]
	if !ok {
		if c.streams == nil {
			c.streams, c.sources = map[string]*rand.Rand{}, map[string]*rand.ChaCha8{}
		}
		src := c.resumed(purpose)
		if src == nil {
			src = rng.Source(c.run.opts.RunSeed, c.label(), purpose)
		}
		r = rand.New(src)
		c.streams[purpose], c.sources[purpose] = r, src
	}
	return r
}

func (c *cell) failure(env *Envelope, err error, stack string) *Failure {
	return &Failure{Actor: c.label(), Round: env.Round, Message: MessageName(env.Body), Cause: err, Stack: stack}
}
