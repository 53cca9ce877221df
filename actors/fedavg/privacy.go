package fedavg

import (
	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
)

// account writes the privacy ledger's entry after a round under DP: the
// guarantees go to the observer (fedavg.ObsPrivacy) and, as a
// PrivacyLedger the server sets for itself with no delay, into the trace,
// beside the messages of the round they account for. released and
// survivors are what fedavg.Ledger.Round takes.
func (s *ServerParts) account(ctx *actors.Context, released bool, survivors int) {
	if s.Ledger == nil {
		return
	}
	c, p := s.Ledger.Round(released, survivors)
	ctx.Observe(fedavg.ObsPrivacy, []float64{c.Epsilon, p.Epsilon})
	entry := &msg.PrivacyLedger{ClientEpsilon: c.Epsilon, ClientDelta: c.Delta, SampleEpsilon: p.Epsilon, SampleDelta: p.Delta}
	if s.Config.DP.Mode != fedavg.NoDP {
		entry.NoiseMultiplier, entry.Clip = s.Config.DP.NoiseMultiplier, s.Core.Clip()
	}
	ctx.After(0, entry)
}
