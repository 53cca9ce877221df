package secagg

import (
	"fmt"

	"maple/privacy/fixedpoint"
	"maple/privacy/shamir"
)

// Phase is one of the protocol's four rounds (Bonawitz et al. 2017, Fig. 4,
// without the consistency check of the actively secure variant).
type Phase int

const (
	// AdvertiseKeys: each client sends its two public keys (round 0).
	AdvertiseKeys Phase = iota
	// ShareKeys: each client sends its encrypted shares for its neighbours
	// through the server (round 1).
	ShareKeys
	// MaskedInputCollection: each client sends its masked input (round 2).
	MaskedInputCollection
	// Unmasking: each surviving client sends the shares the server needs
	// to remove the masks (round 4).
	Unmasking
	// PhaseCount is the number of phases.
	PhaseCount
)

var phaseNames = [...]string{"advertise keys", "share keys", "masked input collection", "unmasking"}

// String returns the phase's name.
func (p Phase) String() string {
	if p < 0 || p >= PhaseCount {
		return fmt.Sprintf("phase(%d)", int(p))
	}
	return phaseNames[p]
}

// Phases lists the four PhaseCount in protocol order.
func Phases() []Phase { return []Phase{AdvertiseKeys, ShareKeys, MaskedInputCollection, Unmasking} }

// Server is the address of the server in a message's route.
const Server = -1

// Route is a message's sender and receiver: client ids, or Server.
type Route struct {
	From, To int
}

// Message is what the state machines exchange. Size is the message's
// payload in bytes under the encoding documented on each type (32-byte
// keys, 4-byte client ids, 8 bytes per field element, k bits per masked
// coordinate); the route is the envelope's and is not counted.
type Message interface {
	Phase() Phase
	Sender() int
	Receiver() int
	Size() int
}

// idBytes is the size of a client id in a payload.
const idBytes = 4

// KeyBytes is the size of an X25519 public key.
const KeyBytes = 32

// secretBytes is the size of a shared secret (an X25519 private key or a
// self-mask seed).
const secretBytes = 32

// boxOverhead is the AES-GCM tag.
const boxOverhead = 16

// BoxBytes is the size of one encrypted share pair: a share of the mask key
// and a share of the self-mask seed, plus the AEAD tag.
var BoxBytes = 2*shamir.ShareBytes(secretBytes) + boxOverhead

// ShareBytes is the size of one share in an unmasking message.
var ShareBytes = shamir.ShareBytes(secretBytes)

// AdvertiseKeysMsg carries a client's two public keys: c_u^PK for the
// encryption of its shares, s_u^PK for its pairwise masks. Size: 64 bytes.
type AdvertiseKeysMsg struct {
	Route
	CipherKey, MaskKey []byte
}

// PeerKeys are one client's advertised public keys.
type PeerKeys struct {
	ID                 int
	CipherKey, MaskKey []byte
}

// KeyListMsg carries to a client the keys of its share holders that
// advertised (itself included), in ascending id. Size: 68 bytes per entry.
type KeyListMsg struct {
	Route
	Keys []PeerKeys
}

// Box is one encrypted share pair and the other end of its link: the
// recipient in a client's SharedKeysMsg, the sender in a ForwardedKeysMsg.
type Box struct {
	Peer   int
	Sealed []byte
}

// SharedKeysMsg carries a client's encrypted shares, one box per neighbour
// that advertised, in ascending recipient id. Size: 4 + BoxBytes per box.
type SharedKeysMsg struct {
	Route
	Boxes []Box
}

// ForwardedKeysMsg carries to a client the boxes addressed to it by the
// clients that shared their keys, in ascending sender id. Size: 4 +
// BoxBytes per box.
type ForwardedKeysMsg struct {
	Route
	Boxes []Box
}

// MaskedInputMsg carries y_u = x_u + PRG(b_u) + Σ_v ±PRG(s_{u,v}) mod 2^k.
// Size: ⌈k·m/8⌉ bytes (packed).
type MaskedInputMsg struct {
	Route
	Masked []uint64
	bits   int
}

// SurvivorsMsg tells a client which of its share holders sent their masked
// input (itself included), in ascending id. Size: 4 bytes per id.
type SurvivorsMsg struct {
	Route
	IDs []int
}

// OwnerShare is a share of one owner's secret held by the sender.
type OwnerShare struct {
	Owner int
	Share []uint64
}

// UnmaskMsg carries a survivor's shares: of the self-mask seed b_v of every
// neighbour v that survived, and of the mask key s_v^SK of every neighbour
// v that dropped after sharing its keys. Never both for one v. Size: 4 +
// ShareBytes per share.
type UnmaskMsg struct {
	Route
	SelfMask, MaskKey []OwnerShare
}

// Phase returns AdvertiseKeys.
func (*AdvertiseKeysMsg) Phase() Phase { return AdvertiseKeys }

// Phase returns AdvertiseKeys: the server's answer closes that phase.
func (*KeyListMsg) Phase() Phase { return AdvertiseKeys }

// Phase returns ShareKeys.
func (*SharedKeysMsg) Phase() Phase { return ShareKeys }

// Phase returns ShareKeys.
func (*ForwardedKeysMsg) Phase() Phase { return ShareKeys }

// Phase returns MaskedInputCollection.
func (*MaskedInputMsg) Phase() Phase { return MaskedInputCollection }

// Phase returns MaskedInputCollection.
func (*SurvivorsMsg) Phase() Phase { return MaskedInputCollection }

// Phase returns Unmasking.
func (*UnmaskMsg) Phase() Phase { return Unmasking }

// Sender returns the sending client's id, or Server.
func (r Route) Sender() int { return r.From }

// Receiver returns the receiving client's id, or Server.
func (r Route) Receiver() int { return r.To }

// Size returns 64.
func (m *AdvertiseKeysMsg) Size() int { return len(m.CipherKey) + len(m.MaskKey) }

// Size returns 68 bytes per entry.
func (m *KeyListMsg) Size() int {
	n := 0
	for _, k := range m.Keys {
		n += idBytes + len(k.CipherKey) + len(k.MaskKey)
	}
	return n
}

func boxesSize(b []Box) int {
	n := 0
	for _, x := range b {
		n += idBytes + len(x.Sealed)
	}
	return n
}

// Size returns 4 + BoxBytes per box.
func (m *SharedKeysMsg) Size() int { return boxesSize(m.Boxes) }

// Size returns 4 + BoxBytes per box.
func (m *ForwardedKeysMsg) Size() int { return boxesSize(m.Boxes) }

// Size returns ⌈k·m/8⌉.
func (m *MaskedInputMsg) Size() int { return fixedpoint.PackedBytes(m.bits, len(m.Masked)) }

// Bits returns k, the width of each masked coordinate.
func (m *MaskedInputMsg) Bits() int { return m.bits }

// Size returns 4 bytes per id.
func (m *SurvivorsMsg) Size() int { return idBytes * len(m.IDs) }

// Size returns 4 + 8·limbs bytes per share.
func (m *UnmaskMsg) Size() int {
	n := 0
	for _, l := range [][]OwnerShare{m.SelfMask, m.MaskKey} {
		for _, s := range l {
			n += idBytes + 8*len(s.Share)
		}
	}
	return n
}
