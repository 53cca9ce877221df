package graphfl

import (
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/graphfl"
)

// KeyAuditScore is the observation key under which AuditTap reports the
// auditor's score: [i, score after round i], once per round.
const KeyAuditScore = "audit/score"

// AuditTapName is the actor name of AuditTap.
const AuditTapName = "dp-auditor"

// AuditTap is the behaviour of a differential-privacy auditor
// (graphfl.Auditor) on a run: placed with actors.Run.Wiretap on the links
// between servers of its view (Tap), it receives a copy of every share sent
// on them — exactly what the trace records there — and hands it to the
// auditor, which scores each round once all of its shares are in. It reports
// each round's score to the run's observer under KeyAuditScore and sends
// nothing, so the protocol runs as if it were not there.
type AuditTap struct {
	// Auditor scores the shares.
	Auditor *graphfl.Auditor
	// First is server 0's ID (the scheduler's + 1, see Spawn).
	First actors.ID

	reported int
	out      [2]float64
}

// Tap returns the link filter to pass to actors.Run.Wiretap: the links
// between servers that are in the auditor's view.
func (t *AuditTap) Tap() func(from, to actors.ID) bool {
	return func(from, to actors.ID) bool { return t.Auditor.InView(int(from-t.First), int(to-t.First)) }
}

// Receive implements actors.Behaviour: shares go to the auditor, the other
// messages on the tapped links (local graph-homomorphic roles and keys) are
// not part of its view.
func (t *AuditTap) Receive(ctx *actors.Context, m proto.Message) error {
	s, ok := m.(*msg.ServerShare)
	if !ok {
		return nil
	}
	from, to := int(ctx.Sender()-t.First), int(ctx.Addressee()-t.First)
	if err := t.Auditor.Observe(ctx.Round(), from, to, s.GetPayload()); err != nil {
		return err
	}
	for t.reported < t.Auditor.Scored() {
		t.reported++
		t.out[0], t.out[1] = float64(t.reported), t.Auditor.Score(t.reported)
		ctx.Observe(KeyAuditScore, t.out[:])
	}
	return nil
}
