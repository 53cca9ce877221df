package systems

import (
	"container/heap"
	"math/rand/v2"
)

// Link is the model of one directed link.
type Link struct {
	// Latency is the fixed delay of every message and Jitter the bound of
	// a uniform extra delay in [0, Jitter).
	Latency, Jitter float64
	// Bandwidth, if positive, adds size/Bandwidth seconds of transmission
	// to a message of size bytes.
	Bandwidth float64
	// Loss and Duplicate are the probabilities that a message is lost or
	// delivered twice.
	Loss, Duplicate float64
}

// Link returns the link from a node with device from to one with device to
// (nil: a node without a device, such as a server); see Link.Between.
func (m *Model) Link(from, to *Device, faulty bool) Link {
	base := Link{Latency: m.Latency, Jitter: m.Jitter, Bandwidth: m.Bandwidth, Loss: m.Loss, Duplicate: m.Duplicate}
	return base.Between(from, to, faulty)
}

// Between returns the network-wide link l specialized to the link from a
// node with device from to one with device to (nil: no device). The latency
// is l's plus both ends' class latencies; the bandwidth is the smallest
// positive one of l and both ends. Faults apply only between network nodes
// (faulty): the harness's control messages are never lost or duplicated.
func (l Link) Between(from, to *Device, faulty bool) Link {
	if !faulty {
		l.Loss, l.Duplicate = 0, 0
	}
	for _, d := range [2]*Device{from, to} {
		if d == nil {
			continue
		}
		l.Latency += d.Latency
		if d.Bandwidth > 0 && (l.Bandwidth == 0 || d.Bandwidth < l.Bandwidth) {
			l.Bandwidth = d.Bandwidth
		}
	}
	return l
}

// Delay returns the delay of a message of size bytes: Latency, plus
// Jitter·U(0, 1) drawn from jitter() when Jitter > 0, plus size/Bandwidth
// when Bandwidth > 0. jitter is only called when a draw is needed, so a
// stream is opened only for links with jitter.
func (l *Link) Delay(size int, jitter func() *rand.Rand) float64 {
	d := l.Latency
	if l.Jitter > 0 {
		d += l.Jitter * jitter().Float64()
	}
	if l.Bandwidth > 0 {
		d += float64(size) / l.Bandwidth
	}
	return d
}

// Reorders reports whether the delays of two messages on the link can
// differ, so that a later message could overtake an earlier one unless
// arrivals are kept in send order (FIFO).
func (l *Link) Reorders() bool { return l.Jitter > 0 || l.Bandwidth > 0 }

// Copies draws how many copies of a message on the link arrive: 0 (lost), 1,
// or 2 (duplicated). It draws one number from r() for the loss when Loss > 0
// and, if the message is not lost, one for the duplication when
// Duplicate > 0; nothing at all on a reliable link.
func (l *Link) Copies(r func() *rand.Rand) int {
	if l.Loss > 0 && r().Float64() < l.Loss {
		return 0
	}
	if l.Duplicate > 0 && r().Float64() < l.Duplicate {
		return 2
	}
	return 1
}

// FIFO keeps the messages of each link in send order: a message never
// arrives before the one sent on the same link before it.
type FIFO map[[2]int]float64

// Arrive returns the arrival time of a message on link from → to that would
// arrive at t, raised to the previous arrival on that link, and records it.
func (f FIFO) Arrive(from, to int, t float64) float64 {
	link := [2]int{from, to}
	t = max(t, f[link])
	f[link] = t
	return t
}

// Queue is the event queue of a reference simulation, ordered as the actor
// engine delivers messages: by time, then messages before timers due at the
// same time, then in the order the events were pushed.
type Queue[T any] struct {
	events events[T]
	pushed uint64
}

type event[T any] struct {
	time  float64
	timer bool
	seq   uint64
	value T
}

type events[T any] []event[T]

func (e events[T]) Len() int { return len(e) }
func (e events[T]) Less(i, j int) bool {
	if e[i].time != e[j].time {
		return e[i].time < e[j].time
	}
	if e[i].timer != e[j].timer {
		return !e[i].timer
	}
	return e[i].seq < e[j].seq
}
func (e events[T]) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events[T]) Push(x any)   { *e = append(*e, x.(event[T])) }
func (e *events[T]) Pop() any {
	old := *e
	v := old[len(old)-1]
	*e = old[:len(old)-1]
	return v
}

// Push queues value at time t; timer marks it as due after every message
// arriving at the same time.
func (q *Queue[T]) Push(t float64, timer bool, value T) {
	q.pushed++
	heap.Push(&q.events, event[T]{time: t, timer: timer, seq: q.pushed, value: value})
}

// Pop removes the next event and returns its time and value.
func (q *Queue[T]) Pop() (float64, T) {
	e := heap.Pop(&q.events).(event[T])
	return e.time, e.value
}

// Len returns the number of queued events.
func (q *Queue[T]) Len() int { return len(q.events) }
