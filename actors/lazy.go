package actors

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"maple/algorithms/rng"
	"maple/algorithms/systems"
)

// Lazy holds a range of actors lazily (Run.SpawnLazy): actor i of the range
// exists — a behaviour the engine delivers to, with its clock and random
// streams — only while it has work, from the moment a message is sent to
// it until it has handled every message sent to it. In between it is
// parked: the engine keeps its clock and the positions of the streams it
// drew from (about 60 bytes each), and the range keeps what its behaviour
// carries to its next message. A range of ten million actors of which a
// hundred have work at a time costs what the hundred cost.
type Lazy interface {
	// Name returns the name of actor i of the range (its streams' owner).
	Name(i int) string
	// Wake returns the behaviour of actor i when a message is sent to it
	// while it is parked, and its device when the range is placed (nil:
	// none; see Run.Place).
	Wake(i int) (Behaviour, *systems.Device)
	// Park is called once actor i, awake with behaviour b, has handled
	// every message sent to it (or they were lost): the range keeps what b
	// carries to its next message, and the engine forgets b.
	Park(i int, b Behaviour)
}

// lazyRange is the engine's side of a Lazy range.
type lazyRange struct {
	l        Lazy
	first    ID
	n        int
	placed   bool
	live     map[ID]*cell
	parked   map[ID]*parkedCell
	hosts    []*cell // cells of parked actors, whose protoactor actors serve the next woken ones
	maxClock float64 // the latest clock of a parked actor
}

// parkedCell is what the engine keeps of a parked actor.
type parkedCell struct {
	clock   float64
	streams []parkedStream
}

// parkedStream is the position of one of an actor's streams.
type parkedStream struct {
	purpose string
	pos     rng.Position
}

// SpawnLazy adds n actors held lazily by l (see Lazy) and returns the ID of
// the first; actor i of the range has ID first+i. placed makes them network
// nodes, on the devices Wake returns (see Place). Lazy ranges come after
// every actor spawned with Spawn, which panics once a range exists.
func (r *Run) SpawnLazy(n int, placed bool, l Lazy) ID {
	if n < 0 || int64(r.next())+int64(n) > math.MaxInt32 {
		panic(fmt.Sprintf("actors: %d lazy actors after %d do not fit 32-bit IDs", n, r.next()))
	}
	rg := &lazyRange{l: l, first: r.next(), n: n, placed: placed, live: map[ID]*cell{}, parked: map[ID]*parkedCell{}}
	r.lazy = append(r.lazy, rg)
	return rg.first
}

// next returns the ID the next actor spawned gets.
func (r *Run) next() ID {
	if n := len(r.lazy); n > 0 {
		last := r.lazy[n-1]
		return last.first + ID(last.n)
	}
	return ID(len(r.cells))
}

// lazyOf returns the lazy range holding id, nil if id is not a lazy actor.
func (r *Run) lazyOf(id ID) *lazyRange {
	for _, rg := range r.lazy {
		if id >= rg.first && int(id-rg.first) < rg.n {
			return rg
		}
	}
	return nil
}

// cell returns the cell of actor id: an actor spawned with Spawn, or a lazy
// actor, woken if it is parked; nil for an unknown ID.
func (r *Run) cell(id ID) *cell {
	if id >= 0 && int(id) < len(r.cells) {
		return r.cells[id]
	}
	rg := r.lazyOf(id)
	if rg == nil {
		return nil
	}
	if c := rg.live[id]; c != nil {
		return c
	}
	return r.wake(rg, id)
}

// wake makes the parked (or never woken) lazy actor id live on a free host
// cell, with its clock and streams where it left them.
func (r *Run) wake(rg *lazyRange, id ID) *cell {
	i := int(id - rg.first)
	var c *cell
	if n := len(rg.hosts); n > 0 {
		c, rg.hosts = rg.hosts[n-1], rg.hosts[:n-1]
	} else {
		c = &cell{run: r}
		r.host(c)
	}
	c.id, c.lazy, c.placed = id, true, rg.placed
	c.behaviour, c.device = rg.l.Wake(i)
	if p := rg.parked[id]; p != nil {
		delete(rg.parked, id)
		c.clock, c.resume = p.clock, p.streams
	}
	rg.live[id] = c
	return c
}

// release counts one message to lazy actor c as handled or lost, and parks
// c once none is left in flight to it.
func (r *Run) release(c *cell) {
	if !c.lazy || c.stopped {
		return
	}
	if c.pending--; c.pending > 0 {
		return
	}
	rg := r.lazyOf(c.id)
	rg.l.Park(int(c.id-rg.first), c.behaviour)
	p := parkedCell{clock: c.clock}
	for purpose, src := range c.sources {
		p.streams = append(p.streams, parkedStream{purpose, rng.Save(src)})
	}
	for _, s := range c.resume { // streams not drawn from while awake
		if c.sources[s.purpose] == nil {
			p.streams = append(p.streams, s)
		}
	}
	slices.SortFunc(p.streams, func(a, b parkedStream) int { return strings.Compare(a.purpose, b.purpose) })
	if p.clock != 0 || len(p.streams) > 0 {
		parked := new(parkedCell) // most parked actors have nothing to keep: no allocation for them
		*parked = p
		rg.parked[c.id] = parked
	}
	rg.maxClock = max(rg.maxClock, c.clock)
	delete(rg.live, c.id)
	*c = cell{run: r, pid: c.pid, registered: c.registered}
	rg.hosts = append(rg.hosts, c)
}

// resumed returns the stream of c for purpose where c's last wake left it,
// nil if c had not drawn from it.
func (c *cell) resumed(purpose string) *rand.ChaCha8 {
	for _, s := range c.resume {
		if s.purpose == purpose {
			return s.pos.Resume()
		}
	}
	return nil
}

// lazyName returns the name of lazy actor id, live or not, and whether id
// is one.
func (r *Run) lazyName(id ID) (string, bool) {
	rg := r.lazyOf(id)
	if rg == nil {
		return "", false
	}
	if c := rg.live[id]; c != nil {
		return c.label(), true
	}
	return rg.l.Name(int(id - rg.first)), true
}

// lazyWaiting adds what the lazy ranges that implement LazyWaiter wait for.
// Their actors are all parked: a run stalls with nothing in flight.
func (r *Run) lazyWaiting(s *Stalled) {
	for _, rg := range r.lazy {
		if w, ok := rg.l.(LazyWaiter); ok {
			s.Waiting = append(s.Waiting, w.Waiting()...)
		}
	}
}

// LazyWaiter is implemented by Lazy ranges whose parked actors can say what
// they wait for, as Waiter does for an actor: a stalled run reports it.
type LazyWaiter interface {
	// Waiting lists what the range's actors wait for, in ascending order,
	// each as "name: what".
	Waiting() []string
}
