// Package audittap is the wiretap behaviour that feeds a differential-privacy
// auditor of a message-passing family (privacy/audit's views: decentralized
// diffusion, graph federated learning) the messages of its view on a run of
// the actor engine, and reports the auditor's score as it goes.
package audittap

import (
	"google.golang.org/protobuf/proto"

	"maple/actors"
)

// Key is the observation key under which a Tap reports the auditor's score:
// [i, score after round i], once per round.
const Key = "audit/score"

// Name is the actor name of a Tap.
const Name = "dp-auditor"

// Auditor is what a Tap feeds and reads: a state machine that scores a round
// once all of its messages in the view are in.
type Auditor interface {
	// InView reports whether the link from → to (the protocol's numbering,
	// 0 for its first actor) is in the auditor's view.
	InView(from, to int) bool
	// Scored returns the last round scored (0 before the first).
	Scored() int
	// Score returns the score after round i ≤ Scored().
	Score(i int) float64
}

// Tap is the behaviour of an auditor on a run: placed on the links of its
// view (Spawn), it receives a copy of every message sent on them — exactly
// what the trace records there — and hands it to Observe. It reports each
// round's score to the run's observer under Key as soon as the auditor has
// it, and sends nothing, so the protocol runs as if it were not there.
type Tap struct {
	// Auditor scores the messages.
	Auditor Auditor
	// First is the ID of the protocol's actor numbered 0 by the auditor.
	First actors.ID
	// Observe hands the auditor message m, sent by from to to in round
	// (numbered as InView numbers them); it ignores the messages that are not
	// part of the view (such as key exchanges on the same links).
	Observe func(round, from, to int, m proto.Message) error

	reported int
	out      [2]float64
}

// Filter returns the link filter to pass to actors.Run.Wiretap: the links
// in the auditor's view.
func (t *Tap) Filter() func(from, to actors.ID) bool {
	return func(from, to actors.ID) bool { return t.Auditor.InView(int(from-t.First), int(to-t.First)) }
}

// Spawn adds the tap to run r, on the links of its view, and returns its ID.
func (t *Tap) Spawn(r *actors.Run) actors.ID {
	id := r.Spawn(Name, t)
	r.Wiretap(id, t.Filter())
	return id
}

// Receive implements actors.Behaviour.
func (t *Tap) Receive(ctx *actors.Context, m proto.Message) error {
	from, to := int(ctx.Sender()-t.First), int(ctx.Addressee()-t.First)
	if err := t.Observe(ctx.Round(), from, to, m); err != nil {
		return err
	}
	for t.reported < t.Auditor.Scored() {
		t.reported++
		t.out[0], t.out[1] = float64(t.reported), t.Auditor.Score(t.reported)
		ctx.Observe(Key, t.out[:])
	}
	return nil
}
