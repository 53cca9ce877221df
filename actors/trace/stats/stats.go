// Package stats summarizes message traces: how many messages of each type
// every round carries, how many bytes, how large their vectors are, and per
// actor what it sent and received and how long it was idle on the virtual
// clock.
package stats

import (
	"cmp"
	"slices"

	"maple/actors/trace"
)

// Stats is the summary of a set of trace records.
type Stats struct {
	// Records is the number of records and Runs the number of distinct
	// (curve, run) pairs they come from.
	Records int `json:"records"`
	Runs    int `json:"runs"`
	// Duration is the virtual duration of the runs, added up: for each run
	// the latest time at which a message arrived or finished being handled.
	Duration float64 `json:"duration"`
	// Rounds has one row per (round, message type), by round then type.
	Rounds []RoundType `json:"rounds"`
	// Types totals the rows of Rounds per message type, by type.
	Types []RoundType `json:"types"`
	// Actors has one row per actor, in name order (numbered names in
	// numeric order).
	Actors []Actor `json:"actors"`
}

// RoundType counts the messages of one type in one round (Round is −1 in
// the totals of Stats.Types).
type RoundType struct {
	Round int    `json:"round"`
	Type  string `json:"type"`
	// Count and Bytes are the number of messages and their wire size.
	Count int   `json:"count"`
	Bytes int64 `json:"bytes"`
	// Vectors counts the messages that carry a vector and MeanNorm is the
	// mean Euclidean norm of those vectors (0 if there are none).
	Vectors  int     `json:"vectors"`
	MeanNorm float64 `json:"mean_norm"`

	normSum float64
}

// Actor is what one actor sent and received, added up over the runs.
type Actor struct {
	Name          string `json:"name"`
	Sent          int    `json:"sent"`
	Received      int    `json:"received"`
	BytesSent     int64  `json:"bytes_sent"`
	BytesReceived int64  `json:"bytes_received"`
	// Busy is the virtual time it spent handling messages and Idle the rest
	// of the duration of the runs it took part in.
	Busy float64 `json:"busy"`
	Idle float64 `json:"idle"`
}

// Accumulator builds Stats from records added one at a time, in trace order.
type Accumulator struct {
	s      Stats
	rounds map[roundKey]*RoundType
	actors map[string]*Actor
	run    runKey
	began  bool
	end    float64            // latest time of the current run
	busy   map[string]float64 // per actor, in the current run
}

type roundKey struct {
	round int
	typ   string
}

type runKey struct {
	curve string
	run   int
}

// New returns an empty Accumulator.
func New() *Accumulator {
	return &Accumulator{rounds: map[roundKey]*RoundType{}, actors: map[string]*Actor{}, busy: map[string]float64{}}
}

// Add accounts for one record. Records of one run must be consecutive, as
// they are in a trace.
func (a *Accumulator) Add(rec *trace.Record) {
	if k := (runKey{rec.Curve, rec.Run}); !a.began || k != a.run {
		a.closeRun()
		a.run, a.began = k, true
		a.s.Runs++
	}
	a.s.Records++
	rt := a.rounds[roundKey{rec.Round, rec.Type}]
	if rt == nil {
		rt = &RoundType{Round: rec.Round, Type: rec.Type}
		a.rounds[roundKey{rec.Round, rec.Type}] = rt
	}
	rt.Count++
	rt.Bytes += int64(rec.Size)
	if rec.Dim > 0 {
		rt.Vectors++
		rt.normSum += rec.Norm
	}
	from, to := a.actor(rec.From), a.actor(rec.To)
	from.Sent++
	from.BytesSent += int64(rec.Size)
	to.Received++
	to.BytesReceived += int64(rec.Size)
	if _, ok := a.busy[rec.From]; !ok {
		a.busy[rec.From] = 0
	}
	a.busy[rec.To] += max(rec.End-rec.Start, 0)
	a.end = max(a.end, rec.Time, rec.End)
}

func (a *Accumulator) actor(name string) *Actor {
	x := a.actors[name]
	if x == nil {
		x = &Actor{Name: name}
		a.actors[name] = x
	}
	return x
}

// closeRun books the busy and idle time of the run that ends.
func (a *Accumulator) closeRun() {
	if !a.began {
		return
	}
	a.s.Duration += a.end
	for name, busy := range a.busy {
		x := a.actors[name]
		x.Busy += busy
		x.Idle += a.end - busy
	}
	a.end = 0
	clear(a.busy)
}

// Stats returns the summary of the records added so far.
func (a *Accumulator) Stats() *Stats {
	a.closeRun()
	a.began = false
	s := a.s
	s.Rounds, s.Types, s.Actors = nil, nil, nil
	for _, rt := range a.rounds {
		r := *rt
		if r.Vectors > 0 {
			r.MeanNorm = r.normSum / float64(r.Vectors)
		}
		s.Rounds = append(s.Rounds, r)
	}
	slices.SortFunc(s.Rounds, func(x, y RoundType) int {
		return cmp.Or(cmp.Compare(x.Round, y.Round), cmp.Compare(x.Type, y.Type))
	})
	// The totals add the rows in round order, not in the map's random
	// order: floating-point sums depend on it, and the statistics must be
	// the same at every call.
	totals := map[string]*RoundType{}
	for _, r := range s.Rounds {
		t := totals[r.Type]
		if t == nil {
			t = &RoundType{Round: -1, Type: r.Type}
			totals[r.Type] = t
		}
		t.Count += r.Count
		t.Bytes += r.Bytes
		t.Vectors += r.Vectors
		t.normSum += r.normSum
	}
	for _, t := range totals {
		r := *t
		if r.Vectors > 0 {
			r.MeanNorm = r.normSum / float64(r.Vectors)
		}
		s.Types = append(s.Types, r)
	}
	slices.SortFunc(s.Types, func(x, y RoundType) int { return cmp.Compare(x.Type, y.Type) })
	var names []string
	for name := range a.actors {
		names = append(names, name)
	}
	for _, name := range trace.SortNames(names) {
		s.Actors = append(s.Actors, *a.actors[name])
	}
	return &s
}

// Collect summarizes the records of t that f matches.
func Collect(t *trace.Trace, f trace.Filter) (*Stats, error) {
	a := New()
	err := t.Scan(f, func(rec *trace.Record) error { a.Add(rec); return nil })
	if err != nil {
		return nil, err
	}
	return a.Stats(), nil
}
