package actors

import (
	"log/slog"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
)

// System hosts runs on one protoactor actor system. Creating an actor system
// costs milliseconds (its process registry is preallocated), so a worker that
// executes many runs one after another reuses one System. Runs on a System
// must not overlap in time: give each goroutine its own.
type System struct {
	actors *actor.ActorSystem
	free   []*Envelope // the last run's envelopes, for the next run
	queue  queue       // the last run's queue storage, empty
}

// NewSystem creates a System whose protoactor logs go to logger (nil
// discards them).
func NewSystem(logger *zap.Logger) *System {
	if logger == nil {
		logger = zap.NewNop()
	}
	s := &System{}
	s.actors = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return protoactorLogger(logger)
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

// Close releases the System. Every run on it must have been closed.
func (s *System) Close() { s.actors.Shutdown() }

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
