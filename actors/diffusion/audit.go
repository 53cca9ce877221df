package diffusion

import (
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/audittap"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
)

// NewAuditTap returns the wiretap that feeds differential-privacy auditor a
// the shares of its view on a run whose agent/0 has ID first (the
// scheduler's + 1, see Spawn): a share goes to the auditor with its stage,
// the other messages on the tapped links (local graph-homomorphic roles and
// keys) are not part of its view. Add it with its Spawn.
func NewAuditTap(a *diffusion.Auditor, first actors.ID) *audittap.Tap {
	return &audittap.Tap{Auditor: a, First: first, Observe: func(round, from, to int, m proto.Message) error {
		s, ok := m.(*msg.StageShare)
		if !ok {
			return nil
		}
		return a.Observe(round, int(s.GetStage()), from, to, s.GetPayload())
	}}
}
