package secagg

// Helpers for a driver that moves the machines' messages over a network
// (the actor engine): there messages can be late, duplicated or decoded
// from a wire format.

// Accepts reports whether Step would take m as a message of the phase the
// server collects: the phase is the current one, its sender is expected in
// it and has not answered yet. A driver drops what it does not accept —
// a message that arrives after its phase closed, or a second copy — where
// Step would fail the round as a protocol violation.
func (s *ServerState) Accepts(m Message) bool {
	u := m.Sender()
	return s.err == nil && s.phase < PhaseCount && m.Phase() == s.phase && m.Receiver() == Server &&
		u >= 0 && u < s.cfg.Clients && s.expected(u) && !s.answered[u]
}

// Missing returns the clients the server still expects in the current
// phase, ascending (nil once the round has ended).
func (s *ServerState) Missing() []int {
	if s.err != nil || s.phase >= PhaseCount {
		return nil
	}
	var out []int
	for u := range s.cfg.Clients {
		if s.expected(u) && !s.answered[u] {
			out = append(out, u)
		}
	}
	return out
}

// Err returns the error that ended the round, nil if none did.
func (s *ServerState) Err() error { return s.err }

// NewMaskedInputMsg returns a masked input of bits-bit coordinates, as a
// driver decodes it from the wire.
func NewMaskedInputMsg(r Route, masked []uint64, bits int) *MaskedInputMsg {
	return &MaskedInputMsg{Route: r, Masked: masked, bits: bits}
}
