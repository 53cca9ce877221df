package actors

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"

	"maple/actors/msg"
	"maple/actors/trace"
)

// TestMain checks that no test leaves a goroutine behind: every actor of every
// run must be stopped by Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// worker answers each Tick with Done after spending compute time, and can be
// told to fail, panic or stay silent in a given round.
type worker struct {
	scheduler ID
	compute   float64
	failIn    int
	panicIn   int
	silentIn  int
	closeIn   int           // round in which to close interrupt
	interrupt chan struct{} // closed in round closeIn
	ticks     []float64     // virtual arrival time of each Tick
}

func (w *worker) Receive(ctx *Context, m proto.Message) error {
	if _, ok := m.(*msg.Tick); !ok {
		return fmt.Errorf("unexpected %T", m)
	}
	w.ticks = append(w.ticks, ctx.Now())
	switch ctx.Round() {
	case w.failIn:
		return errors.New("deliberate failure")
	case w.panicIn:
		var s []int
		_ = s[3] // index out of range
	case w.silentIn:
		return nil
	case w.closeIn:
		close(w.interrupt)
	}
	ctx.Spend(w.compute)
	ctx.Send(w.scheduler, &msg.Done{})
	return nil
}

func newTestRun(t *testing.T, opts Options, workers ...*worker) (*Run, ID) {
	t.Helper()
	r := NewRun(opts)
	t.Cleanup(r.Close)
	sched := &Scheduler{Rounds: 4}
	sid := r.Spawn("scheduler", sched)
	for i, w := range workers {
		w.scheduler = sid
		sched.Targets = append(sched.Targets, r.Spawn(fmt.Sprintf("worker/%d", i), w))
	}
	return r, sid
}

func TestRoundsAndVirtualTime(t *testing.T) {
	w1, w2 := &worker{compute: 1}, &worker{compute: 3}
	r, sid := newTestRun(t, Options{Timing: Timing{Latency: 0.5}}, w1, w2)
	if err := r.Execute(sid, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	// Round 1 opens at t=0 and Ticks arrive at 0.5. The slow worker answers at
	// 0.5+3 = 3.5, arriving at 4.0, so round 2's Ticks arrive at 4.5, and so on:
	// each round lasts latency + compute + latency = 4 for the barrier.
	want := []float64{0.5, 4.5, 8.5, 12.5}
	for i, got := range w2.ticks {
		if got != want[i] {
			t.Errorf("slow worker: Tick %d arrived at %v, want %v", i+1, got, want[i])
		}
	}
	if len(w1.ticks) != 4 || len(w2.ticks) != 4 {
		t.Errorf("workers saw %d and %d ticks, want 4 each", len(w1.ticks), len(w2.ticks))
	}
	// The last Done arrives at the scheduler at 12.5 + 3 + 0.5 = 16.
	if d := r.Duration(); d != 16 {
		t.Errorf("virtual duration %v, want 16", d)
	}
	// 1 Start + 4 rounds × (2 Ticks + 2 Dones).
	if n := r.Messages(); n != 17 {
		t.Errorf("%d messages, want 17", n)
	}
}

func TestReturnedErrorStopsTheRun(t *testing.T) {
	r, sid := newTestRun(t, Options{}, &worker{}, &worker{failIn: 3})
	err := r.Execute(sid, &msg.Start{})
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("Execute returned %v, want a *Failure", err)
	}
	if f.Actor != "worker/1" || f.Round != 3 || f.Message != "Tick" || f.Stack != "" {
		t.Errorf("failure = %+v, want worker/1, round 3, Tick, no stack", f)
	}
	if !strings.Contains(err.Error(), "deliberate failure") {
		t.Errorf("error %q does not carry the cause", err)
	}
}

func TestPanicStopsTheRun(t *testing.T) {
	r, sid := newTestRun(t, Options{}, &worker{panicIn: 2})
	err := r.Execute(sid, &msg.Start{})
	var f *Failure
	if !errors.As(err, &f) {
		t.Fatalf("Execute returned %v, want a *Failure", err)
	}
	if f.Actor != "worker/0" || f.Round != 2 || !strings.Contains(f.Cause.Error(), "index out of range") {
		t.Errorf("failure = %v", f)
	}
	if !strings.Contains(f.Stack, "run_test.go") {
		t.Errorf("panic stack does not point at the behaviour:\n%s", f.Stack)
	}
}

func TestStalledRunIsReported(t *testing.T) {
	r, sid := newTestRun(t, Options{}, &worker{}, &worker{silentIn: 2})
	if err := r.Execute(sid, &msg.Start{}); !errors.Is(err, ErrStalled) {
		t.Fatalf("Execute returned %v, want ErrStalled", err)
	}
}

// Closing Options.Done stops the run before the next delivery: the worker
// closes it while handling its round-2 Tick, the 6th delivery (Start, then
// 2 Ticks and 2 Dones in round 1), and nothing is delivered after it.
func TestDoneInterruptsTheRunBetweenDeliveries(t *testing.T) {
	done := make(chan struct{})
	r, sid := newTestRun(t, Options{Done: done}, &worker{closeIn: 2, interrupt: done}, &worker{})
	if err := r.Execute(sid, &msg.Start{}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Execute returned %v, want ErrInterrupted", err)
	}
	if n := r.Messages(); n != 6 {
		t.Errorf("%d messages delivered, want 6 (the run must stop right after the one that closed Done)", n)
	}
}

func TestTraceRecordsEveryMessageInOrder(t *testing.T) {
	var recs []trace.Record
	sink := func(rec *trace.Record) error { recs = append(recs, rec.Clone()); return nil }
	r, sid := newTestRun(t, Options{Run: 2, Curve: "c", Trace: TraceOptions{Sink: sink}, Timing: Timing{Latency: 1}}, &worker{}, &worker{})
	if err := r.Execute(sid, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	// 1 Start + 4 rounds × (2 Ticks + 2 Dones).
	if len(recs) != 17 {
		t.Fatalf("trace has %d records, want 17", len(recs))
	}
	if recs[0].From != "env" || recs[0].To != "scheduler" || recs[0].Type != "Start" {
		t.Errorf("first record = %+v, want env -> scheduler Start", recs[0])
	}
	for i, rec := range recs {
		if rec.Seq != uint64(i+1) || rec.Run != 2 || rec.Curve != "c" {
			t.Errorf("record %d: seq %d run %d curve %q", i, rec.Seq, rec.Run, rec.Curve)
		}
	}
	if got := recs[1]; got.Type != "Tick" || got.From != "scheduler" || got.To != "worker/0" || got.Round != 1 || got.Time != 1 {
		t.Errorf("second record = %+v, want scheduler -> worker/0 Tick round 1 at t=1", got)
	}
}

func TestTraceSinkErrorFailsTheRun(t *testing.T) {
	sink := func(*trace.Record) error { return errors.New("disk full") }
	r, sid := newTestRun(t, Options{Trace: TraceOptions{Sink: sink}}, &worker{})
	if err := r.Execute(sid, &msg.Start{}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Execute returned %v, want the sink's error", err)
	}
}

func TestSchedulerRejectsDuplicateDone(t *testing.T) {
	r := NewRun(Options{})
	defer r.Close()
	sched := &Scheduler{Rounds: 2}
	sid := r.Spawn("scheduler", sched)
	// Two targets keep round 1 open after the first Done of "twice".
	sched.Targets = []ID{
		r.Spawn("twice", behaviourFunc(func(ctx *Context, m proto.Message) error {
			ctx.Send(sid, &msg.Done{})
			ctx.Send(sid, &msg.Done{})
			return nil
		})),
		r.Spawn("silent", behaviourFunc(func(*Context, proto.Message) error { return nil })),
	}
	err := r.Execute(sid, &msg.Start{})
	if err == nil || !strings.Contains(err.Error(), "second Done") {
		t.Fatalf("Execute returned %v, want a duplicate-Done failure", err)
	}
}

type behaviourFunc func(*Context, proto.Message) error

func (f behaviourFunc) Receive(ctx *Context, m proto.Message) error { return f(ctx, m) }

func TestEnvelopeWireRoundTrip(t *testing.T) {
	in := &Envelope{Seq: 9, From: 2, To: 5, Round: 7, Time: 1.25, Body: &msg.LocalModel{Slot: 1, Weights: []float64{1.5, -2}}}
	w, err := in.Wire()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := proto.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	var back msg.WireEnvelope
	if err := proto.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	out, err := FromWire(&back)
	if err != nil {
		t.Fatal(err)
	}
	if out.Seq != in.Seq || out.From != in.From || out.To != in.To || out.Round != in.Round || out.Time != in.Time || !proto.Equal(out.Body, in.Body) {
		t.Errorf("round trip changed the envelope: %+v -> %+v", in, out)
	}
}

func TestRandStreamsMatchRunRand(t *testing.T) {
	var got uint64
	r := NewRun(Options{RunSeed: 42})
	defer r.Close()
	id := r.Spawn("agent/3", behaviourFunc(func(ctx *Context, m proto.Message) error {
		got = ctx.Rand("batch").Uint64()
		ctx.Finish()
		return nil
	}))
	if err := r.Execute(id, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if want := r.Rand("agent/3", "batch").Uint64(); got != want {
		t.Errorf("Context.Rand gave %d, Run.Rand %d: an actor's stream must not depend on how it is reached", got, want)
	}
}

// Every record says when its message left the sender, when the receiver
// handled it, and which delivery's handling sent it.
func TestTraceRecordsTimingAndCause(t *testing.T) {
	var recs []trace.Record
	sink := func(rec *trace.Record) error { recs = append(recs, rec.Clone()); return nil }
	r, sid := newTestRun(t, Options{Trace: TraceOptions{Sink: sink}, Timing: Timing{Latency: 0.5}}, &worker{compute: 1})
	if err := r.Execute(sid, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	// #1 Start (env, t=0); #2 Tick sent at 0 while handling #1, arrives 0.5,
	// handled 0.5–1.5; #3 Done sent at 1.5 while handling #2, arrives 2.
	want := []trace.Record{
		{Seq: 1, Type: "Start"},
		{Seq: 2, Type: "Tick", Time: 0.5, Sent: 0, Start: 0.5, End: 1.5, Cause: 1},
		{Seq: 3, Type: "Done", Time: 2, Sent: 1.5, Start: 2, End: 2, Cause: 2},
		{Seq: 4, Type: "Tick", Time: 2.5, Sent: 2, Start: 2.5, End: 3.5, Cause: 3},
	}
	for i, w := range want {
		g := recs[i]
		if g.Seq != w.Seq || g.Type != w.Type || g.Time != w.Time || g.Sent != w.Sent || g.Start != w.Start || g.End != w.End || g.Cause != w.Cause {
			t.Errorf("record %d = %+v, want seq %d %s t=%v sent=%v start=%v end=%v cause=%d",
				i, g, w.Seq, w.Type, w.Time, w.Sent, w.Start, w.End, w.Cause)
		}
	}
}

// A wiretap receives a copy of every message on the links it listens to,
// with the intended receiver, and changes nothing of the protocol's run.
func TestWiretapCopiesWithoutChangingTheRun(t *testing.T) {
	execute := func(tap bool) ([]string, []string) {
		var lines, copies []string
		sink := func(rec *trace.Record) error { lines = append(lines, fmt.Sprintf("%+v", *rec)); return nil }
		r, sid := newTestRun(t, Options{Trace: TraceOptions{Sink: sink}, Timing: Timing{Latency: 0.25}}, &worker{compute: 1}, &worker{compute: 2})
		if tap {
			id := r.Spawn("eavesdropper", behaviourFunc(func(ctx *Context, m proto.Message) error {
				copies = append(copies, fmt.Sprintf("%s->%s %s round %d at %v", ctx.Name(ctx.Sender()), ctx.Name(ctx.Addressee()), MessageName(m), ctx.Round(), ctx.Now()))
				return nil
			}))
			r.Wiretap(id, func(from, to ID) bool { return r.Name(from) == "worker/1" })
		}
		if err := r.Execute(sid, &msg.Start{}); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, fmt.Sprint(r.Messages(), r.Duration()))
		return lines, copies
	}
	plain, none := execute(false)
	tapped, copies := execute(true)
	if strings.Join(plain, "\n") != strings.Join(tapped, "\n") {
		t.Errorf("the wiretap changed the run:\n%s\n---\n%s", strings.Join(plain, "\n"), strings.Join(tapped, "\n"))
	}
	if len(none) != 0 {
		t.Errorf("copies without a tap: %v", none)
	}
	// worker/1, the slower, answers every round's Tick with one Done; a
	// round lasts latency + 2 + latency = 2.5.
	want := []string{
		"worker/1->scheduler Done round 1 at 2.5",
		"worker/1->scheduler Done round 2 at 5",
		"worker/1->scheduler Done round 3 at 7.5",
		"worker/1->scheduler Done round 4 at 10",
	}
	if strings.Join(copies, "\n") != strings.Join(want, "\n") {
		t.Errorf("tap received\n%s\nwant\n%s", strings.Join(copies, "\n"), strings.Join(want, "\n"))
	}
}

// Every actor of a run is a process in protoactor's registry from Spawn
// until it stops: a failing actor leaves it at once, the others at Close,
// and a message sent to a stopped actor fails the run instead of vanishing.
func TestActorsLeaveTheRegistryWhenTheyStop(t *testing.T) {
	system := NewSystem(nil)
	defer system.Close()
	registry := system.actors.ProcessRegistry
	r := NewRun(Options{System: system})
	sched := &Scheduler{Rounds: 4}
	sid := r.Spawn("scheduler", sched)
	ok, failing := &worker{scheduler: sid}, &worker{scheduler: sid, failIn: 2}
	sched.Targets = []ID{r.Spawn("worker/0", ok), r.Spawn("worker/1", failing)}
	for _, c := range r.cells {
		if p, found := registry.Get(c.pid); !found || p != c {
			t.Fatalf("%s is not registered under its PID after Spawn", c.name)
		}
	}
	if err := r.Execute(sid, &msg.Start{}); err == nil {
		t.Fatal("the run with a failing worker succeeded")
	}
	if _, found := registry.Get(r.cells[2].pid); found {
		t.Error("the failed worker is still registered")
	}
	if _, found := registry.Get(r.cells[1].pid); !found {
		t.Error("the healthy worker left the registry before Close")
	}
	r.cells[2].SendUserMessage(r.cells[2].pid, &Envelope{From: sid, To: 2, Round: 3, Body: &msg.Tick{}})
	var f *Failure
	if !errors.As(r.failure, &f) || f.Actor != "worker/1" {
		t.Fatalf("failure %v", r.failure)
	}
	r.Close()
	for _, c := range r.cells {
		if _, found := registry.Get(c.pid); found {
			t.Errorf("%s is still registered after Close", c.name)
		}
	}
}

// A message to an actor that stopped is a protocol bug the run reports,
// naming the actor and the sender.
func TestMessageToAStoppedActorFailsTheRun(t *testing.T) {
	r := NewRun(Options{})
	defer r.Close()
	id := r.Spawn("worker/0", idle{})
	c := r.cells[id]
	r.root.Send(c.pid, &Envelope{From: Environment, To: id, Round: 6, Body: &msg.Tick{}})
	if r.failure != nil {
		t.Fatalf("delivering to a live actor: %v", r.failure)
	}
	c.Stop(c.pid)
	r.root.Send(c.pid, &Envelope{From: Environment, To: id, Round: 7, Body: &msg.Tick{}})
	var f *Failure
	if !errors.As(r.failure, &f) || f.Actor != "worker/0" || f.Round != 7 || !strings.Contains(f.Cause.Error(), "stopped actor") {
		t.Fatalf("failure %v, want worker/0 in round 7 naming a stopped actor", r.failure)
	}
}

// A Done from an actor the scheduler does not drive is a protocol error,
// not an answer that closes the round.
func TestSchedulerRejectsDoneFromANonTarget(t *testing.T) {
	r := NewRun(Options{})
	defer r.Close()
	sched := &Scheduler{Rounds: 2}
	sid := r.Spawn("scheduler", sched)
	var outsider ID
	sched.Targets = []ID{r.Spawn("target", behaviourFunc(func(ctx *Context, m proto.Message) error {
		ctx.Send(outsider, &msg.Tick{})
		return nil
	}))}
	outsider = r.Spawn("outsider", behaviourFunc(func(ctx *Context, m proto.Message) error {
		ctx.Send(sid, &msg.Done{})
		return nil
	}))
	err := r.Execute(sid, &msg.Start{})
	if err == nil || !strings.Contains(err.Error(), "outsider, which is not a target") {
		t.Fatalf("Execute returned %v, want a failure naming the outsider", err)
	}
}
