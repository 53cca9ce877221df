package actors

import "container/heap"

// queue holds the messages in flight, ordered by virtual arrival time and,
// for equal times, messages before timers (Context.After) and then by send
// order. Delivering from it in that order makes the
// engine a discrete-event simulation: every actor handles its messages in the
// order they arrive, whatever order they were produced in.
type queue []*Envelope

// Len implements heap.Interface.
func (q queue) Len() int { return len(q) }

// Less implements heap.Interface: earlier arrival first, then messages
// before timers, then earlier send.
func (q queue) Less(i, j int) bool {
	if q[i].Time != q[j].Time {
		return q[i].Time < q[j].Time
	}
	if q[i].timer != q[j].timer {
		return !q[i].timer
	}
	return q[i].sent < q[j].sent
}

// Swap implements heap.Interface.
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

// Push implements heap.Interface; use heap.Push.
func (q *queue) Push(x any) { *q = append(*q, x.(*Envelope)) }

// Pop implements heap.Interface; use heap.Pop.
func (q *queue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

func (q *queue) push(e *Envelope) { heap.Push(q, e) }

func (q *queue) pop() *Envelope { return heap.Pop(q).(*Envelope) }
