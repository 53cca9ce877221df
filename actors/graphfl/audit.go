package graphfl

import (
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/audittap"
	"maple/actors/msg"
	"maple/algorithms/graphfl"
)

// NewAuditTap returns the wiretap that feeds differential-privacy auditor a
// the messages between servers of its view on a run whose server 0 has ID
// first (the scheduler's + 1, see Spawn): a server's share goes to the
// auditor, the other messages on the tapped links (local graph-homomorphic
// roles and keys) are not part of its view. Add it with its Spawn.
func NewAuditTap(a *graphfl.Auditor, first actors.ID) *audittap.Tap {
	return &audittap.Tap{Auditor: a, First: first, Observe: func(round, from, to int, m proto.Message) error {
		s, ok := m.(*msg.ServerShare)
		if !ok {
			return nil
		}
		return a.Observe(round, from, to, s.GetPayload())
	}}
}
