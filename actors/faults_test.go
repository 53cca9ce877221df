package actors

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/systems"
)

// pinger sends n LocalModel messages of dim coordinates to peer when it
// receives Start, and finishes when it has received count messages itself.
type pinger struct {
	peer     ID
	n, dim   int
	got      []float64 // arrival times
	slots    []int32
	finishAt int
}

func (p *pinger) Receive(ctx *Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.Start:
		for i := range p.n {
			ctx.Send(p.peer, &msg.LocalModel{Slot: int32(i), Weights: make([]float64, p.dim)})
		}
	case *msg.LocalModel:
		p.got = append(p.got, ctx.Now())
		p.slots = append(p.slots, m.GetSlot())
		if len(p.got) == p.finishAt {
			ctx.Finish()
		}
	}
	return nil
}

// A message's delay is the latency plus size/bandwidth; a device's class adds
// its latency and caps the bandwidth of its links.
func TestBandwidthAndDeviceLatency(t *testing.T) {
	r := NewRun(Options{Timing: Timing{Latency: 0.5, Bandwidth: 1000}})
	defer r.Close()
	b := &pinger{finishAt: 1}
	a := &pinger{n: 1, dim: 100}
	aid := r.Spawn("a", a)
	bid := r.Spawn("b", b)
	a.peer = bid
	r.Place(aid, &systems.Device{Latency: 0.25, Bandwidth: 500})
	r.Place(bid, nil)
	if err := r.Execute(aid, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	size := proto.Size(&msg.LocalModel{Weights: make([]float64, 100)})
	want := 0.5 + 0.25 + float64(size)/500
	if len(b.got) != 1 || b.got[0] != want {
		t.Errorf("arrival %v, want latency + device latency + %d bytes / 500 B/s = %v", b.got, size, want)
	}
}

// With every message lost, nothing is delivered, the trace records each loss
// at its arrival time, the observer hears of each, and the run stalls.
func TestLostMessagesAreTracedNotDelivered(t *testing.T) {
	var recs []trace.Record
	obs := &countingObserver{}
	r := NewRun(Options{RunSeed: 1, Timing: Timing{Latency: 1, Loss: 1}, Observer: obs,
		Trace: TraceOptions{Sink: func(rec *trace.Record) error { recs = append(recs, rec.Clone()); return nil }}})
	defer r.Close()
	b := &pinger{finishAt: 1}
	a := &pinger{n: 3, dim: 2}
	aid, bid := r.Spawn("a", a), r.Spawn("b", b)
	a.peer = bid
	r.Place(aid, nil)
	r.Place(bid, nil)
	err := r.Execute(aid, &msg.Start{})
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("Execute returned %v, want a stall", err)
	}
	if len(b.got) != 0 || r.Lost() != 3 || r.Messages() != 1 {
		t.Errorf("delivered %d to b, lost %d, messages %d; want 0, 3, 1 (the Start)", len(b.got), r.Lost(), r.Messages())
	}
	if obs.keys[KeyLost] != 3 {
		t.Errorf("observer heard of %d losses, want 3", obs.keys[KeyLost])
	}
	if len(recs) != 4 {
		t.Fatalf("%d trace records, want the Start and 3 losses", len(recs))
	}
	for _, rec := range recs[1:] {
		if !rec.Lost || rec.Time != 1 || rec.To != "b" {
			t.Errorf("record %+v: want a loss to b at t=1", rec)
		}
	}
}

// Links between an unplaced actor (the harness, a scheduler) and anyone are
// reliable, whatever the loss probability.
func TestUnplacedLinksAreReliable(t *testing.T) {
	r := NewRun(Options{RunSeed: 1, Timing: Timing{Loss: 1, Duplicate: 1}})
	defer r.Close()
	b := &pinger{finishAt: 3}
	a := &pinger{n: 3, dim: 1}
	aid, bid := r.Spawn("a", a), r.Spawn("b", b)
	a.peer = bid
	r.Place(bid, nil) // a is not placed
	if err := r.Execute(aid, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if r.Lost() != 0 || r.Duplicated() != 0 || len(b.got) != 3 {
		t.Errorf("lost %d, duplicated %d, delivered %d; want 0, 0, 3", r.Lost(), r.Duplicated(), len(b.got))
	}
}

// A duplicated message arrives twice, the copy one link delay after the
// original.
func TestDuplicatesArriveOneDelayLater(t *testing.T) {
	r := NewRun(Options{RunSeed: 1, Timing: Timing{Latency: 2, Duplicate: 1}})
	defer r.Close()
	b := &pinger{finishAt: 2}
	a := &pinger{n: 1, dim: 1}
	aid, bid := r.Spawn("a", a), r.Spawn("b", b)
	a.peer = bid
	r.Place(aid, nil)
	r.Place(bid, nil)
	if err := r.Execute(aid, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(b.got) != "[2 4]" || r.Duplicated() != 1 {
		t.Errorf("arrivals %v, duplicated %d; want [2 4] and 1", b.got, r.Duplicated())
	}
}

// The fraction of lost messages follows the loss probability: 2000 messages at
// p = 0.3 lose 600 ± 3σ (σ = √(2000·0.3·0.7) ≈ 20.5).
func TestLossRate(t *testing.T) {
	const n, p = 2000, 0.3
	r := NewRun(Options{RunSeed: 7, Timing: Timing{Loss: p}})
	defer r.Close()
	b := &pinger{finishAt: n + 1}
	a := &pinger{n: n, dim: 1}
	aid, bid := r.Spawn("a", a), r.Spawn("b", b)
	a.peer = bid
	r.Place(aid, nil)
	r.Place(bid, nil)
	_ = r.Execute(aid, &msg.Start{}) // stalls: b never receives n+1
	if lost := float64(r.Lost()); lost < n*p-62 || lost > n*p+62 {
		t.Errorf("lost %v of %d at p = %v", lost, n, p)
	}
	if int(r.Lost())+len(b.got) != n {
		t.Errorf("lost %d + delivered %d ≠ %d sent", r.Lost(), len(b.got), n)
	}
}

// timed sets a timer when started and records the order in which a message
// and the timer due at the same time arrive.
type timed struct {
	order []string
}

func (d *timed) Receive(ctx *Context, m proto.Message) error {
	switch m.(type) {
	case *msg.Start:
		ctx.After(1, &msg.Done{}) // the timer is queued first …
		ctx.Send(ctx.Self(), &msg.Tick{})
	case *msg.Tick:
		d.order = append(d.order, fmt.Sprintf("tick@%v", ctx.Now()))
	case *msg.Done:
		d.order = append(d.order, fmt.Sprintf("timer@%v", ctx.Now()))
		ctx.Finish()
	}
	return nil
}

// A timer due at t fires after every message arriving at t, even one sent
// after the timer was set.
func TestTimerFiresAfterMessagesDueAtTheSameTime(t *testing.T) {
	var recs []trace.Record
	r := NewRun(Options{Timing: Timing{Latency: 1}, Trace: TraceOptions{Sink: func(rec *trace.Record) error { recs = append(recs, rec.Clone()); return nil }}})
	defer r.Close()
	d := &timed{}
	id := r.Spawn("d", d)
	if err := r.Execute(id, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.order, " "); got != "tick@1 timer@1" {
		t.Errorf("order %q, want the message first", got)
	}
	if !recs[2].Timer || recs[1].Timer {
		t.Errorf("trace records %+v: the timer, and only it, is marked", recs)
	}
}

// waiting stays silent and says so.
type waiting struct{ what string }

func (w *waiting) Receive(*Context, proto.Message) error { return nil }
func (w *waiting) Waiting() string                       { return w.what }

func TestStallNamesWhatActorsWaitFor(t *testing.T) {
	r := NewRun(Options{})
	defer r.Close()
	id := r.Spawn("server", &waiting{what: "round 5 waits for agent/3"})
	r.Spawn("idle", &waiting{})
	err := r.Execute(id, &msg.Start{})
	var s *Stalled
	if !errors.As(err, &s) || !errors.Is(err, ErrStalled) {
		t.Fatalf("Execute returned %v, want a *Stalled matching ErrStalled", err)
	}
	if !strings.HasSuffix(err.Error(), ": server: round 5 waits for agent/3") {
		t.Errorf("error %q does not name what the server waits for", err)
	}
}

type countingObserver struct{ keys map[string]int }

func (o *countingObserver) Observe(_ ID, _ int, key string, _ []float64) {
	if o.keys == nil {
		o.keys = map[string]int{}
	}
	o.keys[key]++
}

// passer sends one LocalModel to peer on Start, with Pass or Send, and
// records what Reuse returns for each LocalModel it receives.
type passer struct {
	peer      ID
	pass      bool
	reusable  []bool
	finishAt  int
	delivered int
}

func (p *passer) Receive(ctx *Context, m proto.Message) error {
	switch m.(type) {
	case *msg.Start:
		out := &msg.LocalModel{Weights: []float64{1, 2}}
		if p.pass {
			ctx.Pass(p.peer, out)
		} else {
			ctx.Send(p.peer, out)
		}
	case *msg.LocalModel:
		p.reusable = append(p.reusable, ctx.Reuse() == m)
		if p.delivered++; p.delivered == p.finishAt {
			ctx.Finish()
		}
	}
	return nil
}

// A receiver may reuse a message only when nothing else can refer to it:
// the sender passed it, the link did not duplicate it (the two copies share
// it) and no wiretap listens (its copy shares it).
func TestReuseOnlyWhatNobodyElseHolds(t *testing.T) {
	cases := []struct {
		name      string
		pass      bool
		duplicate bool
		tap       bool
		want      []bool
	}{
		{"passed", true, false, false, []bool{true}},
		{"sent", false, false, false, []bool{false}},
		{"passed and duplicated", true, true, false, []bool{false, false}},
		{"passed and tapped", true, false, true, []bool{false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := linkRun(t, c.duplicate)
			b := &passer{finishAt: len(c.want)}
			a := &passer{pass: c.pass}
			aid, bid := r.Spawn("a", a), r.Spawn("b", b)
			a.peer = bid
			r.Place(aid, nil)
			r.Place(bid, nil)
			if c.tap {
				r.Wiretap(r.Spawn("tap", &passer{}), func(from, to ID) bool { return from == aid })
			}
			if err := r.Execute(aid, &msg.Start{}); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(b.reusable) != fmt.Sprint(c.want) {
				t.Errorf("Reuse per delivery %v, want %v", b.reusable, c.want)
			}
		})
	}
}

// linkRun returns a run whose links take one second and, with duplicate,
// deliver every message twice; it is closed when the test ends.
func linkRun(t *testing.T, duplicate bool) *Run {
	t.Helper()
	timing := Timing{Latency: 1}
	if duplicate {
		timing.Duplicate = 1
	}
	r := NewRun(Options{RunSeed: 1, Timing: timing})
	t.Cleanup(r.Close)
	return r
}
