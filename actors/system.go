package actors

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// System hosts runs on one protoactor actor system. Creating an actor system
// costs milliseconds and a few megabytes (its process registry is 1024
// preallocated maps of 32 shards each), so a worker that executes many runs
// one after another reuses one System, and a closed System goes back to a
// process-wide pool for the next NewSystem. Runs on a System must not
// overlap in time: give each goroutine its own.
type System struct {
	actors *actor.ActorSystem
	logger atomic.Pointer[slog.Logger] // where protoactor's logs go now
	free   []*Envelope                 // the last run's envelopes, for the next run
	queue  queue                       // the last run's queue storage, empty
}

// idleSystems holds closed Systems for reuse, at most maxIdleSystems: every
// actor of a run leaves the registry when the run closes, and nothing a run
// leaves in the actor system (process ids, its random name) reaches a
// result.
var idleSystems struct {
	sync.Mutex
	systems []*System
}

// maxIdleSystems bounds the pool: one per worker of a typical machine, and a
// few over for tests executing plans side by side.
const maxIdleSystems = 8

// NewSystem returns a System whose protoactor logs go to logger (nil
// discards them): an idle one from the pool, or a new one.
func NewSystem(logger *zap.Logger) *System {
	if logger == nil {
		logger = zap.NewNop()
	}
	idleSystems.Lock()
	var s *System
	if n := len(idleSystems.systems); n > 0 {
		s = idleSystems.systems[n-1]
		idleSystems.systems[n-1] = nil
		idleSystems.systems = idleSystems.systems[:n-1]
	}
	idleSystems.Unlock()
	if s != nil {
		s.logger.Store(protoactorLogger(logger))
		return s
	}
	s = &System{}
	s.logger.Store(protoactorLogger(logger))
	s.actors = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(relay{to: &s.logger})
	}))
	return s
}

// lend hands the envelopes and the queue storage the last run on the
// System left to the next one, which then allocates only beyond the last
// run's peak of messages in flight.
func (s *System) lend() ([]*Envelope, queue) {
	free, q := s.free, s.queue
	s.free, s.queue = nil, queue{}
	return free, q
}

// keep takes back a closed run's free envelopes and its queue's storage;
// the messages still in flight when a run ended early are let go.
func (s *System) keep(free []*Envelope, q *queue) {
	s.free = free
	clear(q.run)
	clear(q.entries)
	s.queue = queue{run: q.run[:0], entries: q.entries[:0]}
}

// Close releases the System: every run on it must have been closed. It
// goes back to the pool without the last run's buffers (a large run's
// would be kept for as long as the process lives), or is shut down when
// the pool is full.
func (s *System) Close() {
	s.free, s.queue = nil, queue{}
	s.logger.Store(protoactorLogger(zap.NewNop()))
	idleSystems.Lock()
	defer idleSystems.Unlock()
	if len(idleSystems.systems) < maxIdleSystems {
		idleSystems.systems = append(idleSystems.systems, s)
		return
	}
	s.actors.Shutdown()
}

// relay is the slog handler of a pooled actor system: protoactor keeps the
// logger its factory made for as long as the system lives, so the handler
// forwards each record to the logger of the System's current owner, with
// the attributes and groups added to it since (ops, in order).
type relay struct {
	to  *atomic.Pointer[slog.Logger]
	ops []func(slog.Handler) slog.Handler
}

// handler is the current owner's handler with the relay's ops applied.
func (r relay) handler() slog.Handler {
	h := r.to.Load().Handler()
	for _, op := range r.ops {
		h = op(h)
	}
	return h
}

// Enabled implements slog.Handler.
func (r relay) Enabled(ctx context.Context, l slog.Level) bool {
	return r.to.Load().Handler().Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (r relay) Handle(ctx context.Context, rec slog.Record) error {
	return r.handler().Handle(ctx, rec)
}

// WithAttrs implements slog.Handler.
func (r relay) WithAttrs(attrs []slog.Attr) slog.Handler {
	return relay{r.to, append(slices.Clip(r.ops), func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) })}
}

// WithGroup implements slog.Handler.
func (r relay) WithGroup(name string) slog.Handler {
	return relay{r.to, append(slices.Clip(r.ops), func(h slog.Handler) slog.Handler { return h.WithGroup(name) })}
}

// protoactorLogger routes protoactor's log/slog output into zap. protoactor
// logs routine events (system start, dead letters) at Info; unless logger is
// at Debug, its level is raised to Warn so that they stay out of the way.
func protoactorLogger(logger *zap.Logger) *slog.Logger {
	core := logger.Core()
	if !core.Enabled(zapcore.DebugLevel) {
		if raised, err := zapcore.NewIncreaseLevelCore(core, zapcore.WarnLevel); err == nil {
			core = raised
		}
	}
	return slog.New(zapslog.NewHandler(core, zapslog.WithName("protoactor")))
}
