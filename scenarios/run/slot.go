package run

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"

	"go.uber.org/zap"

	"maple/actors"
	"maple/scenarios/inputs"
)

// Slot executes jobs one at a time on this machine. It keeps an actor system
// (creating one costs milliseconds) and the last problem it built, which the
// next job of the same run usually shares, so give each goroutine that
// executes jobs its own Slot and reuse it.
type Slot struct {
	logger *zap.Logger
	system *actors.System // nil for the reference engine, which has no actors
	cache  *inputs.ProblemCache
}

// NewSlot returns a slot for jobs executed with opts (its engine decides
// whether the slot needs an actor system). Close it when done.
func NewSlot(opts *Options) *Slot {
	o := *opts
	o.defaults()
	s := &Slot{logger: o.Logger, cache: &inputs.ProblemCache{}}
	if o.Engine == Actors {
		s.system = actors.NewSystem(o.Logger)
	}
	return s
}

// Close releases the slot's actor system.
func (s *Slot) Close() {
	if s.system != nil {
		s.system.Close()
	}
}

// Forget drops the problem the slot keeps. A slot that runs the jobs of
// several plans forgets between them: another plan's files may differ
// under the same names.
func (s *Slot) Forget() { s.cache = &inputs.ProblemCache{} }

// Execute runs the job, filling its Table and Stats (and its trace store,
// if tracing). Once ctx is done an actor run stops before its next delivery
// and Execute returns actors.ErrInterrupted, as it does for any failure of
// a job whose ctx is done (a solve or a reader that stopped); a run that
// finishes is the same with or without ctx. A panic becomes an *InternalError.
func (s *Slot) Execute(ctx context.Context, j *Job) error {
	j.system, j.cache, j.ctx, j.started = s.system, s.cache, ctx, true
	j.logger = s.logger.With(zap.String("curve", j.Curve.Label), zap.Int("run", j.Run))
	err := j.protect()
	if interruptedBy(ctx, err) {
		return actors.ErrInterrupted // whatever the interrupted computation made of it
	}
	return err
}

// protect runs the job, turning a panic into an *InternalError.
func (j *Job) protect() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &InternalError{Value: v, Stack: string(debug.Stack())}
		}
	}()
	return j.execute()
}

// local runs jobs on this machine: workers slots (0: GOMAXPROCS) in
// parallel, each taking the next job in order.
type local struct{ workers int }

// Execute implements Executor.
func (l local) Execute(ctx context.Context, q *Queue) error {
	workers := l.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, q.Len())
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slot := NewSlot(q.Options())
			defer slot.Close()
			for {
				j, ok := q.Next()
				if !ok {
					return
				}
				q.Done(j, slot.Execute(ctx, j))
			}
		}()
	}
	wg.Wait()
	return nil
}
