package fedavg

import (
	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
)

// account returns the privacy ledger's entry after a round under DP (nil
// without DP): the guarantees go to the observer (fedavg.ObsPrivacy) and,
// with the round's Done, into the trace. released and survivors are what
// fedavg.Ledger.Round takes.
func (s *ServerParts) account(ctx *actors.Context, released bool, survivors int) *msg.PrivacyLedger {
	if s.Ledger == nil {
		return nil
	}
	c, p := s.Ledger.Round(released, survivors)
	ctx.Observe(fedavg.ObsPrivacy, []float64{c.Epsilon, p.Epsilon})
	e := s.Core.LedgerEntry(c, p)
	return &msg.PrivacyLedger{ClientEpsilon: e[0], ClientDelta: e[1], SampleEpsilon: e[2], SampleDelta: e[3], NoiseMultiplier: e[4], Clip: e[5]}
}
