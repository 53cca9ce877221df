package run

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// queueOf returns a queue of n jobs of a one-curve plan with n runs.
func queueOf(t *testing.T, ctx context.Context, n int) *Queue {
	t.Helper()
	p := plan(t, fmt.Sprintf("name: x\nruns: %d\nalgorithm: {kind: test-msd-only}\n", n))
	opts := &Options{}
	return newQueue(ctx, p, Jobs(p, opts, ""), opts)
}

// take hands out the next job and checks it is the one at want.
func take(t *testing.T, q *Queue, want int) *Job {
	t.Helper()
	j, ok := q.Next()
	if !ok || j.Position() != want {
		t.Fatalf("Next = %v, %v; want job %d", j, ok, want)
	}
	return j
}

// Jobs come out in order; a job put back comes out again before any later
// one; the queue is finished once every job was reported.
func TestQueueRetriesBeforeLaterJobs(t *testing.T) {
	q := queueOf(t, context.Background(), 4)
	j0, j1 := take(t, q, 0), take(t, q, 1)
	q.Retry(j1)
	q.Retry(j0)
	if q.Finished() {
		t.Fatal("finished with jobs put back")
	}
	take(t, q, 0)
	take(t, q, 1)
	j2 := take(t, q, 2)
	q.Done(j2, nil)
	j3 := take(t, q, 3)
	if _, ok := q.Next(); ok {
		t.Fatal("a fifth job of four")
	}
	q.Done(j3, nil)
	q.Done(j0, nil)
	if q.Finished() {
		t.Fatal("finished with job 1 out")
	}
	q.Done(j1, nil)
	if !q.Finished() {
		t.Fatal("not finished with every job reported")
	}
}

// After a failure no later job starts, but earlier jobs put back still run,
// so that the error reported is the first in job order whatever the
// scheduling.
func TestQueueAfterFailureRunsOnlyEarlierJobs(t *testing.T) {
	q := queueOf(t, context.Background(), 5)
	j0, j1, j2, j3 := take(t, q, 0), take(t, q, 1), take(t, q, 2), take(t, q, 3)
	q.Done(j2, errors.New("boom"))
	q.Retry(j3) // later than the failure: dropped
	q.Retry(j0) // earlier: runs again
	take(t, q, 0)
	if _, ok := q.Next(); ok {
		t.Fatal("a job after the failure started")
	}
	if !j3.ended || j3.err != errAborted {
		t.Errorf("job 3 put back after the failure: ended %v with %v, want aborted", j3.ended, j3.err)
	}
	q.Done(j0, nil)
	q.Done(j1, nil)
	if !q.Finished() {
		t.Error("not finished")
	}
}

// Once the context is done nothing starts, and interruptions are not
// failures.
func TestQueueStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	q := queueOf(t, ctx, 3)
	j0 := take(t, q, 0)
	cancel()
	if _, ok := q.Next(); ok {
		t.Fatal("a job started after the context was done")
	}
	q.Done(j0, context.Canceled)
	if j0.err != errInterrupted || q.failedAt != 3 {
		t.Errorf("interrupted job: err %v, failedAt %d", j0.err, q.failedAt)
	}
	if !q.Finished() {
		t.Error("not finished")
	}
}
