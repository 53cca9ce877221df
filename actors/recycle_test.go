package actors

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"maple/actors/msg"
)

// volley plays n exchanges of LocalModel between two actors: each, on the
// message of exchange k, checks that it says k (slot k, and weights [k] for
// k a multiple of 4 only: a recycled message serves the exchange two later,
// so one that kept its weights shows), recycles it and answers exchange k+1
// in a message from Fresh, passed or sent; a second copy of a message (a
// duplicating link) it only checks.
type volley struct {
	peer  ID
	pass  bool
	n     int
	last  int                      // the last exchange answered, if any
	any   bool                     // it has answered one
	seen  map[*msg.LocalModel]bool // the messages received
	wrong int                      // messages that did not say what was sent
}

func (v *volley) send(ctx *Context, k int) {
	out := Fresh[msg.LocalModel](ctx)
	out.Slot = int32(k)
	if k%4 == 0 {
		out.Weights = []float64{float64(k)}
	}
	if v.pass {
		ctx.Pass(v.peer, out)
	} else {
		ctx.Send(v.peer, out)
	}
}

func (v *volley) Receive(ctx *Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.Start:
		v.send(ctx, 0)
	case *msg.LocalModel:
		k := int(m.GetSlot())
		want := 0
		if k%4 == 0 {
			want = 1
		}
		if len(m.GetWeights()) != want || want == 1 && m.GetWeights()[0] != float64(k) {
			v.wrong++
		}
		v.seen[m] = true
		ctx.Recycle()
		if v.any && k <= v.last {
			return nil // a second copy
		}
		v.any, v.last = true, k
		if k+1 == v.n {
			ctx.Finish()
			return nil
		}
		v.send(ctx, k+1)
	}
	return nil
}

// A recycled message is the next one Fresh returns, emptied, to any actor
// of the run — two messages serve a whole volley — unless the handler may
// not keep it (Reuse): sent rather than passed, duplicated by its link or
// copied to a wiretap. Then every exchange has a message of its own.
func TestRecycledMessagesAreFreshOnesEmptied(t *testing.T) {
	const n = 20
	cases := []struct {
		name           string
		pass, dup, tap bool
		distinct       int // messages the two actors received
	}{
		{"passed", true, false, false, 2},
		{"sent", false, false, false, n},
		{"passed and duplicated", true, true, false, n},
		{"passed and tapped", true, false, true, n},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := linkRun(t, c.dup)
			a := &volley{pass: c.pass, n: n, seen: map[*msg.LocalModel]bool{}}
			b := &volley{pass: c.pass, n: n, seen: map[*msg.LocalModel]bool{}}
			aid, bid := r.Spawn("a", a), r.Spawn("b", b)
			a.peer, b.peer = bid, aid
			r.Place(aid, nil)
			r.Place(bid, nil)
			if c.tap {
				r.Wiretap(r.Spawn("tap", &passer{}), func(from, to ID) bool { return from == aid || from == bid })
			}
			if err := r.Execute(aid, &msg.Start{}); err != nil {
				t.Fatal(err)
			}
			seen := map[*msg.LocalModel]bool{}
			for m := range a.seen {
				seen[m] = true
			}
			for m := range b.seen {
				seen[m] = true
			}
			if len(seen) != c.distinct {
				t.Errorf("%d distinct messages in %d exchanges, want %d", len(seen), n, c.distinct)
			}
			if a.wrong+b.wrong > 0 {
				t.Errorf("%d messages did not say what was sent", a.wrong+b.wrong)
			}
		})
	}
}
