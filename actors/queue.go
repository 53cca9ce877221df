package actors

// queue holds the messages in flight, ordered by virtual arrival time and,
// for equal times, messages before timers (Context.After) and then by send
// order. Delivering from it in that order makes the engine a discrete-event
// simulation: every actor handles its messages in the order they arrive,
// whatever order they were produced in.
//
// Most messages are sent in delivery order already — with a fixed latency
// and no compute time every one is, and in a synchronous round most — so the
// queue keeps those in a FIFO run, sorted by construction, and only the
// others in a binary min-heap of entries that carry their sort key; pop takes
// the smaller head. The order is total (send numbers are distinct), so the
// sequence of pops does not depend on how the entries are split or arranged.
type queue struct {
	run     []entry // sorted: each entry pushed after the one before it
	head    int     // the run's first entry not yet popped
	entries []entry // the heap of the others
}

// entry is a queued envelope and its key: arrival time, then order, which
// is the send number with the timer flag as its top bit (timers sort after
// messages arriving at the same time).
type entry struct {
	time  float64
	order uint64
	env   *Envelope
}

const timerBit = 1 << 63

// compactAt is how many popped entries at least the run's front holds
// before push moves the rest down, once they are half of the run.
const compactAt = 1024

func (e *entry) before(f *entry) bool {
	if e.time != f.time {
		return e.time < f.time
	}
	return e.order < f.order
}

// Len returns the number of messages in flight.
func (q *queue) Len() int { return len(q.run) - q.head + len(q.entries) }

func (q *queue) push(env *Envelope) {
	order := env.sent
	if env.timer {
		order |= timerBit
	}
	e := entry{time: env.Time, order: order, env: env}
	if n := len(q.run); n == q.head || q.run[n-1].before(&e) {
		if q.head >= compactAt && 2*q.head >= n {
			// Move what is left to the front: a queue that never empties
			// (several walks, an asynchronous protocol) keeps to twice
			// its peak instead of growing with every message.
			left := copy(q.run, q.run[q.head:])
			clear(q.run[left:])
			q.run, q.head = q.run[:left], 0
		} else if n == q.head && n > 0 {
			q.run, q.head = q.run[:0], 0
		}
		q.run = append(q.run, e)
		return
	}
	q.entries = append(q.entries, e)
	q.up(len(q.entries) - 1)
}

func (q *queue) pop() *Envelope {
	if q.head < len(q.run) && (len(q.entries) == 0 || q.run[q.head].before(&q.entries[0])) {
		top := q.run[q.head].env
		q.run[q.head] = entry{}
		q.head++
		return top
	}
	h := q.entries
	n := len(h) - 1
	top := h[0].env
	h[0] = h[n]
	h[n] = entry{}
	q.entries = h[:n]
	if n > 0 {
		q.down(0)
	}
	return top
}

func (q *queue) up(i int) {
	h := q.entries
	e := h[i]
	for i > 0 {
		parent := (i - 1) / 2
		if !e.before(&h[parent]) {
			break
		}
		h[i] = h[parent]
		i = parent
	}
	h[i] = e
}

func (q *queue) down(i int) {
	h := q.entries
	n := len(h)
	e := h[i]
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && h[right].before(&h[child]) {
			child = right
		}
		if !h[child].before(&e) {
			break
		}
		h[i] = h[child]
		i = child
	}
	h[i] = e
}
