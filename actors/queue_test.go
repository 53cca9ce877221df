package actors

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// The queue pops messages in the engine's delivery order — arrival time,
// then messages before timers, then send order — whatever the order they
// were pushed in, interleaving pushes and pops as a run does.
func TestQueuePopsInDeliveryOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var q queue
	var sent uint64
	var want []*Envelope // what is in flight, kept sorted by the rule
	order := func(a, b *Envelope) int {
		if c := cmp.Compare(a.Time, b.Time); c != 0 {
			return c
		}
		if a.timer != b.timer {
			if a.timer {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.sent, b.sent)
	}
	for step := range 20000 {
		if q.Len() > 0 && r.IntN(3) == 0 {
			got := q.pop()
			if got != want[0] {
				t.Fatalf("step %d: popped (t=%v timer=%v sent=%d), want (t=%v timer=%v sent=%d)",
					step, got.Time, got.timer, got.sent, want[0].Time, want[0].timer, want[0].sent)
			}
			want = want[1:]
			continue
		}
		sent++
		// Few distinct times, so that ties between messages and timers
		// and between sends are common.
		e := &Envelope{Time: float64(r.IntN(8)) / 4, timer: r.IntN(4) == 0, sent: sent}
		q.push(e)
		i, _ := slices.BinarySearchFunc(want, e, order)
		want = slices.Insert(want, i, e)
	}
	if q.Len() != len(want) {
		t.Fatalf("queue holds %d messages, want %d", q.Len(), len(want))
	}
}

// A queue that never empties — messages sent in delivery order while a few
// are always in flight, as several random walks keep it — still pops them
// in order, and its storage stays within a bound of the peak in flight
// (the run's front is reclaimed) rather than growing with every message.
func TestQueueThatNeverEmpties(t *testing.T) {
	var q queue
	var sent uint64
	next := uint64(1) // the send number the next pop must give
	for step := range 100000 {
		for q.Len() < 3 {
			sent++
			q.push(&Envelope{Time: float64(sent), sent: sent})
		}
		if got := q.pop(); got.sent != next {
			t.Fatalf("step %d: popped send %d, want %d", step, got.sent, next)
		}
		next++
	}
	if c := cap(q.run); c > 4*compactAt {
		t.Errorf("the run's storage holds %d entries for 3 in flight", c)
	}
}
