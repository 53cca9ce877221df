package run

import (
	"context"
	"errors"
	"sync"

	"maple/actors"
	"maple/scenarios"
)

// Executor runs a plan's jobs: Options.Executor chooses where. The default
// (nil) runs them on this machine's cores, Workers at a time; package
// cluster hands them to worker processes. Whatever the executor, a job's
// results are a function of the job alone, so the outputs do not depend on
// where or in which order the jobs ran.
type Executor interface {
	// Execute runs the jobs q hands out (Queue.Next) and reports the end of
	// each to q (Queue.Done), until q has none left and every job it handed
	// out has been reported. It returns an error only when it cannot go on
	// at all (no worker left, say); a job's own failure goes to q.
	Execute(ctx context.Context, q *Queue) error
}

var (
	// errAborted marks a job not run because an earlier one failed.
	errAborted = errors.New("run aborted after an earlier failure")
	// errInterrupted marks a job not run, or not finished, because the
	// execution's context was done; runJobs returns it when no job failed.
	errInterrupted = errors.New("execution interrupted")
)

// Queue hands out a plan's jobs to an Executor in job order and gathers how
// each ended. It keeps the runner's rules whatever executes the jobs: after a
// job fails, no job after it in order starts (those before it still run, so
// the error reported — the first in job order — does not depend on
// scheduling); once the execution's context is done, no job starts. An
// executor that loses a job it started (its worker died) puts it back with
// Retry, and it is handed out again before any job after it.
type Queue struct {
	ctx  context.Context
	plan *scenarios.Plan
	opts *Options
	jobs []*Job

	mu       sync.Mutex
	next     int    // the first job never handed out
	retry    []*Job // jobs put back, in job order
	failedAt int    // position of the first failed job, len(jobs) if none
	out      int    // jobs handed out and not yet reported
	done     int    // jobs finished without error
}

// newQueue returns the queue of jobs.
func newQueue(ctx context.Context, plan *scenarios.Plan, jobs []*Job, opts *Options) *Queue {
	return &Queue{ctx: ctx, plan: plan, opts: opts, jobs: jobs, failedAt: len(jobs)}
}

// Plan returns the plan whose jobs the queue holds.
func (q *Queue) Plan() *scenarios.Plan { return q.plan }

// Options returns the execution's options: the engine, tracing, the logger.
func (q *Queue) Options() *Options { return q.opts }

// Len returns the number of jobs of the plan.
func (q *Queue) Len() int { return len(q.jobs) }

// Next returns the next job to start, or false when none may start now:
// every job was handed out, a job failed, or the context is done. More may
// become available later only through Retry.
func (q *Queue) Next() (*Job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.ctx.Err() != nil {
		return nil, false
	}
	for len(q.retry) > 0 {
		j := q.retry[0]
		q.retry = q.retry[1:]
		if j.pos > q.failedAt {
			j.err, j.ended = errAborted, true
			continue
		}
		q.out++
		return j, true
	}
	if q.next >= len(q.jobs) || q.failedAt < len(q.jobs) {
		return nil, false
	}
	j := q.jobs[q.next]
	q.next++
	j.started = true
	q.out++
	return j, true
}

// Done records the end of a job Next handed out: err is nil when it
// finished (its results are in the job), the job's error, or an
// interruption (the context's error or actors.ErrInterrupted).
func (q *Queue) Done(j *Job, err error) {
	if errors.Is(err, actors.ErrInterrupted) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = errInterrupted
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.out--
	j.err, j.ended = err, true
	switch {
	case err == nil:
		q.done++
		if q.opts.Progress != nil {
			q.opts.Progress(q.done, len(q.jobs))
		}
	case err != errInterrupted:
		q.failedAt = min(q.failedAt, j.pos)
	}
}

// Retry puts back a job Next handed out that will not finish where it was
// started: it is handed out again, before any job after it.
func (q *Queue) Retry(j *Job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.out--
	i := 0
	for i < len(q.retry) && q.retry[i].pos < j.pos {
		i++
	}
	q.retry = append(q.retry[:i], append([]*Job{j}, q.retry[i:]...)...)
}

// Finished reports whether the executor is done: no job may start any more
// and every job handed out was reported.
func (q *Queue) Finished() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.out > 0 {
		return false
	}
	if q.ctx.Err() != nil {
		return true
	}
	for _, j := range q.retry {
		if j.pos <= q.failedAt {
			return false
		}
	}
	return q.next >= len(q.jobs) || q.failedAt < len(q.jobs)
}

// Job returns the job at position i of the plan's list of jobs (Jobs).
func (q *Queue) Job(i int) *Job { return q.jobs[i] }

// runJobs executes the jobs with the options' executor (this machine's cores
// by default). The error returned is the first job error in job order (every
// job before a failed one has started, so this does not depend on
// scheduling); once ctx is done no job starts and actor runs in progress
// stop, and runJobs returns errInterrupted, unless a job failed.
func runJobs(ctx context.Context, plan *scenarios.Plan, jobs []*Job, opts *Options) error {
	ex := opts.Executor
	if ex == nil {
		ex = local{workers: opts.Workers}
	}
	q := newQueue(ctx, plan, jobs, opts)
	exErr := ex.Execute(ctx, q)
	for _, j := range jobs {
		switch {
		case j.ended:
		case q.failedAt < len(jobs):
			j.err = errAborted
		default:
			j.err = errInterrupted
		}
	}
	for _, j := range jobs {
		if j.err != nil && j.err != errAborted && j.err != errInterrupted {
			removeTraces(jobs, nil)
			return j.err
		}
	}
	if exErr != nil {
		removeTraces(jobs, nil)
		return exErr
	}
	for _, j := range jobs {
		if j.err != nil {
			return errInterrupted
		}
	}
	return nil
}
