package diffusion

import (
	"fmt"

	"maple/privacy/pairmask"
)

// Kind is the type of a message between agents.
type Kind int

const (
	// Share carries a stage value y plus its noise or masks, sender → receiver.
	Share Kind = iota
	// Role is an LGH receiver's announcement to one of its senders: the
	// sender's role, the weight the receiver gives it and its partners.
	Role
	// PublicKey carries a sender's X25519 public key to a receiver, which
	// relays it to the sender's partners (secure mode).
	PublicKey
	// RelayedKey is a receiver relaying the public key of Other to a partner.
	RelayedKey
	// PaperPublic carries a sender's public values e^{−v} for one partner
	// (Other) and stage to a receiver, which relays them (paper mode).
	PaperPublic
	// RelayedPaper is a receiver relaying the paper public values of Other.
	RelayedPaper
	// MaskRequest asks a live sender for the masks it shares with the
	// partners (Partners) that are down this round (policy drop-mask).
	MaskRequest
	// MaskReveal answers with Σ ±g over those partners (Values).
	MaskReveal
	// Rekey gives a live sender its Role and Partners among the live
	// senders for Stage, with their public Keys (policy re-key).
	Rekey
	// RekeyedShare is the share masked afresh with the new partners.
	RekeyedShare
)

var kindNames = []string{"share", "role", "public-key", "relayed-key", "paper-public", "relayed-paper",
	"mask-request", "mask-reveal", "rekey", "rekeyed-share"}

// setup reports whether messages of kind k belong to the LGH set-up
// protocol, which does not depend on the iteration it happens in.
func (k Kind) setup() bool { return k == Role || k == PublicKey || k == RelayedKey }

// request reports whether messages of kind k are a receiver's repair
// requests, which a sender answers for the iteration they belong to.
func (k Kind) request() bool { return k == MaskRequest || k == Rekey }

// String returns a short name of k.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Message is one message between agents, in the state machines' terms; the
// actor layer maps each Kind to a protobuf type. Only the fields of its Kind
// are meaningful. The iteration is the round of the envelope, not a field.
type Message struct {
	// Kind says which of the fields below are meaningful.
	Kind Kind
	// Peer is the receiving agent of an outgoing message and the sending
	// agent of an incoming one (agent indices, 0…P−1).
	Peer int
	// Stage is the stage of a Share, PaperPublic or RelayedPaper.
	Stage int
	// Role, Weight and Partners are the content of a Role message. Weight is
	// a_{ℓk}, or 0 when A is symmetric and the sender knows it already
	// (a_{ℓk} = a_{kℓ}, its own weight on k).
	Role     pairmask.Role
	Weight   float64
	Partners []int
	// Other is the partner a PaperPublic is meant for, or the agent whose
	// key a RelayedKey or RelayedPaper relays.
	Other int
	// Key is the X25519 public key of a PublicKey or RelayedKey.
	Key []byte
	// Keys are the public keys of a Rekey's partners (secure keys).
	Keys [][]byte
	// Values is the vector of a Share, PaperPublic or RelayedPaper.
	Values []float64
}

// Outbox is where a state machine puts what it does besides changing its own
// state. Messages passed to Send are valid only during the call: their slices
// are the agent's reused buffers, so the receiver of Send must copy them.
type Outbox interface {
	// Send sends m to agent m.Peer.
	Send(m *Message)
	// Spend reports that the agent has just computed n sample gradients,
	// for the compute-time model.
	Spend(n int)
	// Warn reports a problem that does not stop the run, such as a receiver
	// whose incoming messages cannot be masked.
	Warn(message string)
	// Report hands the observer, outside the protocol, a quantity the
	// metrics need (KeyMaskResidual, KeyUncancelled); v is valid during the
	// call only.
	Report(key string, v []float64)
}

// Keys of Outbox.Report.
const (
	// KeyMaskResidual reports [k, j, Σ ±g…]: the masks a sender added to its
	// stage-j share to receiver k, weighted as k combines them; over k's
	// live senders they sum to the residual left in k's aggregate (zero
	// when every pair cancels). Reported on time-varying graphs only.
	KeyMaskResidual = "lgh-residual"
	// KeyUncancelled reports [n]: the pairs of a stage whose masks a
	// receiver detected cannot cancel, because a live sender's partner is
	// down.
	KeyUncancelled = "lgh-uncancelled"
)

// SetupCounts counts the LGH protocol messages an agent sent in one round.
type SetupCounts struct {
	// Roles counts RoleAssign announcements (as a receiver).
	Roles int
	// Keys counts public keys (secure) or public values (paper) sent to
	// receivers (as a sender).
	Keys int
	// Relays counts public keys or values relayed to partners (as a receiver).
	Relays int
}

// Total returns the number of set-up messages.
func (c SetupCounts) Total() int { return c.Roles + c.Keys + c.Relays }
