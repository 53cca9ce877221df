package actors

import (
	"reflect"

	"google.golang.org/protobuf/proto"
)

// Messages handed back to the run. An actor that keeps no state between
// messages (a lazy agent, woken for one task) cannot keep a spare message
// for its next reply as other actors do (Context.Reuse); the run keeps them
// instead, by type, for every actor of the run: a message handled and
// recycled by one is the next one another fills (Fresh). Only the storage
// is shared, never what a message says: it is emptied when handed back.

// Recycle hands the message being handled back to the run once this
// handling ends, if the handler may keep it (Reuse returns it); otherwise it
// does nothing. The run empties it (proto.Reset: its fields are dropped,
// not what they refer to) and a later Fresh of its type, by any actor of
// the run, returns it instead of a new message. The handler must not keep
// the message itself; what its fields refer to (a vector, say) stays the
// handler's to keep. Every message recycled should be taken by a Fresh of
// the protocol, or the run holds as many as were recycled.
func (c *Context) Recycle() {
	if c.env.passed {
		c.recycle = true
	}
}

// Fresh returns an empty message of type M, for the handler to fill and
// send: one the run's actors recycled (Context.Recycle), or a new one.
func Fresh[M any, P interface {
	*M
	proto.Message
}](c *Context) P {
	free := c.cell.run.recycledOf(reflect.TypeFor[P]())
	if n := len(*free); n > 0 {
		m := (*free)[n-1]
		(*free)[n-1] = nil
		*free = (*free)[:n-1]
		return m.(P)
	}
	return new(M)
}

// recycledMessages are the messages of one type handed back to a run.
type recycledMessages struct {
	of   reflect.Type
	free []proto.Message
}

// recycledOf returns the messages of type t handed back to the run. A
// protocol recycles a type or two: a short list serves them faster than a
// map would.
func (r *Run) recycledOf(t reflect.Type) *[]proto.Message {
	for i := range r.recycled {
		if r.recycled[i].of == t {
			return &r.recycled[i].free
		}
	}
	r.recycled = append(r.recycled, recycledMessages{of: t})
	return &r.recycled[len(r.recycled)-1].free
}

// keep empties m, recycled by the handling that just ended, and keeps it
// for Fresh.
func (r *Run) keep(m proto.Message) {
	proto.Reset(m)
	free := r.recycledOf(reflect.TypeOf(m))
	*free = append(*free, m)
}
