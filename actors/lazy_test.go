package actors

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/systems"
)

// hub pings a few echoes per round, drawn from its own stream, and ends the
// round once each has answered.
type hub struct {
	sched, first ID
	echoes, fan  int
	waiting      int
}

func (h *hub) Receive(ctx *Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.Tick:
		r := ctx.Rand("pick")
		h.waiting = h.fan
		for range h.fan {
			ctx.Send(h.first+ID(r.IntN(h.echoes)), &msg.Tick{})
		}
	case *msg.GlobalModel:
		ctx.Observe("echo", m.GetWeights())
		if h.waiting--; h.waiting == 0 {
			ctx.Send(h.sched, &msg.Done{})
		}
	}
	return nil
}

// echo answers a ping after a timer every other time, and otherwise at
// once, then works on for a time drawn from its own stream — past the next
// round's ping, which then waits for it: its count of pings, its clock and
// its streams must survive being parked.
type echo struct {
	hub   ID
	count int
}

func (e *echo) Receive(ctx *Context, m proto.Message) error {
	if _, ping := m.(*msg.Tick); ping {
		e.count++
		if e.count%2 == 0 {
			ctx.After(0.3, &msg.FedAvgDeadline{})
			return nil
		}
	}
	ctx.Send(e.hub, &msg.GlobalModel{Weights: []float64{float64(e.count), ctx.Now()}})
	ctx.Spend(3 * ctx.Rand("work").Float64())
	return nil
}

// echoes is the Lazy range of the echoes: it keeps their counts while they
// are parked, and counts how many are awake at once.
type echoes struct {
	hub          ID
	counts       map[int]int
	awake, peak  int
	wakes, parks int
}

func (l *echoes) Name(i int) string { return "echo/" + strconv.Itoa(i) }

func (l *echoes) Wake(i int) (Behaviour, *systems.Device) {
	l.awake++
	l.wakes++
	l.peak = max(l.peak, l.awake)
	return &echo{hub: l.hub, count: l.counts[i]}, echoDevice(i)
}

func (l *echoes) Park(i int, b Behaviour) {
	l.awake--
	l.parks++
	l.counts[i] = b.(*echo).count
}

// echoDevice is a device whose class adds latency to odd echoes' links.
func echoDevice(i int) *systems.Device {
	return &systems.Device{Agent: i, Class: i % 2, Latency: 0.2 * float64(i%2)}
}

type recorder struct{ obs [][]float64 }

func (o *recorder) Observe(_ ID, round int, key string, v []float64) {
	o.obs = append(o.obs, append([]float64{float64(round)}, v...))
}

// echoRun runs 30 rounds of the hub pinging 4 of n echoes, spawned eagerly
// or held lazily, with jitter, and returns the observations, the trace and
// the run's duration.
func echoRun(t *testing.T, n int, lazy bool) ([][]float64, []trace.Record, float64, *echoes) {
	t.Helper()
	obs := &recorder{}
	var recs []trace.Record
	r := NewRun(Options{RunSeed: 5, Observer: obs, Timing: Timing{Latency: 0.1, Jitter: 0.05},
		Trace: TraceOptions{Sink: func(rec *trace.Record) error { recs = append(recs, rec.Clone()); return nil }}})
	defer r.Close()
	sched := &Scheduler{Rounds: 30}
	schedID := r.Spawn("scheduler", sched)
	h := &hub{sched: schedID, first: schedID + 2, echoes: n, fan: 4}
	hubID := r.Spawn("hub", h)
	r.Place(hubID, nil)
	sched.Targets = []ID{hubID}
	l := &echoes{hub: hubID, counts: map[int]int{}}
	if lazy {
		if first := r.SpawnLazy(n, true, l); first != h.first {
			t.Fatalf("first lazy ID %d, want %d", first, h.first)
		}
	} else {
		for i := range n {
			id := r.Spawn(l.Name(i), &echo{hub: hubID})
			r.Place(id, echoDevice(i))
		}
	}
	if err := r.Execute(schedID, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	return obs.obs, recs, r.Duration(), l
}

// A lazy range runs the protocol of the same actors spawned eagerly: the
// same observations, the same trace record for record — names, arrival,
// departure and handling times, causes — and the same duration, with each
// echo's count, clock, compute stream and jitter stream carried across its
// parks; no more echoes are awake at once than the hub pings in a round,
// and each is parked as often as it was woken.
func TestLazyRangeRunsAsEagerActors(t *testing.T) {
	const n = 50
	wantObs, wantRecs, wantDur, _ := echoRun(t, n, false)
	obs, recs, dur, l := echoRun(t, n, true)
	if !reflect.DeepEqual(obs, wantObs) {
		t.Errorf("observations differ")
	}
	if len(recs) != len(wantRecs) {
		t.Fatalf("%d trace records, want %d", len(recs), len(wantRecs))
	}
	for i := range recs {
		if !reflect.DeepEqual(recs[i], wantRecs[i]) {
			t.Fatalf("trace record %d:\n%+v\nwant\n%+v", i, recs[i], wantRecs[i])
		}
	}
	if dur != wantDur {
		t.Errorf("duration %v, want %v", dur, wantDur)
	}
	if l.peak > 4 || l.wakes != l.parks || l.wakes < 30 {
		t.Errorf("peak %d awake, %d wakes, %d parks: want at most 4 awake and every wake parked", l.peak, l.wakes, l.parks)
	}
}

// stuck is a lazy range whose actors never answer and say so when the run
// stalls.
type stuck struct{ parked map[int]bool }

func (s *stuck) Name(i int) string { return fmt.Sprintf("stuck/%d", i) }
func (s *stuck) Wake(int) (Behaviour, *systems.Device) {
	return behaviourFunc(func(*Context, proto.Message) error { return nil }), nil
}
func (s *stuck) Park(i int, _ Behaviour) { s.parked[i] = true }
func (s *stuck) Waiting() []string {
	var w []string
	for i := range 3 {
		if s.parked[i] {
			w = append(w, s.Name(i)+": silent")
		}
	}
	return w
}

// A stalled run reports what a lazy range's parked actors wait for, after
// the eager actors; a lazy actor's name is known before it ever wakes, and
// Spawn after SpawnLazy is a programming error.
func TestLazyRangeStallsAndNames(t *testing.T) {
	r := NewRun(Options{})
	defer r.Close()
	w := &waiting{what: "round 1"}
	wID := r.Spawn("waiter", behaviourFunc(func(ctx *Context, m proto.Message) error {
		ctx.Send(2, &msg.Tick{})
		return nil
	}))
	r.cells[wID].behaviour = struct {
		Behaviour
		Waiter
	}{r.cells[wID].behaviour, w}
	s := &stuck{parked: map[int]bool{}}
	r.SpawnLazy(3, false, s)
	if r.Name(3) != "stuck/2" || r.Name(4) != "unknown/4" {
		t.Errorf("names %q, %q", r.Name(3), r.Name(4))
	}
	err := r.Execute(wID, &msg.Tick{})
	if err == nil || err.Error() != ErrStalled.Error()+": waiter: round 1; stuck/1: silent" {
		t.Errorf("err = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Spawn after SpawnLazy did not panic")
		}
	}()
	r.Spawn("late", &waiting{})
}
