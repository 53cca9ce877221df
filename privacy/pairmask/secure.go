package pairmask

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math/rand/v2"

	"maple/privacy/noise"
)

// KeyPair is an agent's X25519 key pair for the secure mode. One key pair per
// agent serves all its pairs: masks for different receivers, iterations and
// stages are separated by the key derivation, not by the key.
type KeyPair struct {
	priv *sealed[ecdh.PrivateKey]
}

// NewKeyPair draws the 32 bytes of an X25519 private key from r, the owning
// actor's deterministic key stream, so that runs are reproducible. It does not
// use ecdh.Curve.GenerateKey, which since Go 1.26 ignores its randomness source.
func NewKeyPair(r *rand.Rand) (*KeyPair, error) {
	var b [32]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	priv, err := ecdh.X25519().NewPrivateKey(b[:])
	if err != nil {
		return nil, fmt.Errorf("pairmask: X25519 private key: %w", err)
	}
	return &KeyPair{priv: seal(priv)}, nil
}

// NewRandomKeyPair draws an X25519 key pair from the operating system's
// randomness (crypto/rand). Unlike NewKeyPair's, the private key cannot be
// recomputed from anything a run publishes; the price is that the public
// keys, and so the traces, differ from one execution to the next.
func NewRandomKeyPair() (*KeyPair, error) {
	priv, err := ecdh.X25519().GenerateKey(crand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pairmask: X25519 private key: %w", err)
	}
	return &KeyPair{priv: seal(priv)}, nil
}

// NodeKeyPair returns a node's key pair for the secure mode: from the
// operating system's randomness with osKey (NewRandomKeyPair), otherwise
// from the node's key stream, which key opens only then (NewKeyPair).
func NodeKeyPair(osKey bool, key func() *rand.Rand) (*KeyPair, error) {
	if osKey {
		return NewRandomKeyPair()
	}
	r := key()
	if r == nil {
		return nil, errors.New("pairmask: secure mode needs the node's key stream")
	}
	return NewKeyPair(r)
}

// PublicBytes returns the 32-byte public key, the only part of a KeyPair that
// may leave its actor.
func (k *KeyPair) PublicBytes() []byte {
	return k.priv.v.PublicKey().Bytes()
}

// Shared returns the secret shared with the owner of peerPublic: the X25519
// function of RFC 7748 §6.1. It fails if peerPublic is not 32 bytes or is a
// low-order point (all-zero shared secret).
func (k *KeyPair) Shared(peerPublic []byte) (Secret, error) {
	pub, err := ecdh.X25519().NewPublicKey(peerPublic)
	if err != nil {
		return Secret{}, fmt.Errorf("pairmask: peer public key: %w", err)
	}
	b, err := k.priv.v.ECDH(pub)
	if err != nil {
		return Secret{}, fmt.Errorf("pairmask: X25519: %w", err)
	}
	var s [32]byte
	copy(s[:], b)
	return Secret{key: seal(&s)}, nil
}

// Format prints "[X25519 key pair]" whatever the verb, so that a key pair never
// reaches a log.
func (KeyPair) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[X25519 key pair]") }

// Agreements is a node's key pair with the mask streams it has agreed, one
// per peer public key: the X25519 agreement and the HKDF extraction are done
// the first time a key is named and then kept, since the same two nodes are
// partners at several receivers (and re-paired after failures) and the
// agreement is most of the set-up's cost. A stream keys every mask by its
// slot (receiver, iteration, stage), so one serves the pair at every
// receiver. Like the key pair, the streams never leave the node.
type Agreements struct {
	keys    *KeyPair
	streams map[string]*MaskStream
}

// NewAgreements returns the agreements of key pair k, none made yet.
func NewAgreements(k *KeyPair) *Agreements {
	return &Agreements{keys: k, streams: map[string]*MaskStream{}}
}

// PublicBytes returns the key pair's public key (KeyPair.PublicBytes).
func (a *Agreements) PublicBytes() []byte { return a.keys.PublicBytes() }

// Stream returns the mask stream shared with the owner of peerPublic,
// agreeing it the first time (KeyPair.Shared, whose errors it returns).
func (a *Agreements) Stream(peerPublic []byte) (*MaskStream, error) {
	if ms, ok := a.streams[string(peerPublic)]; ok {
		return ms, nil
	}
	secret, err := a.keys.Shared(peerPublic)
	if err != nil {
		return nil, err
	}
	ms := NewMaskStream(secret)
	a.streams[string(peerPublic)] = ms
	return ms, nil
}

// Format prints "[X25519 agreements]" whatever the verb: they hold key
// material.
func (Agreements) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[X25519 agreements]") }

// PairStreams returns the mask stream of every pair of n nodes, [ℓ][m] for
// ℓ < m (nil elsewhere), as a simulation that sees every node computes them:
// in the secure mode from the nodes' key pairs (the X25519 agreement of
// keys[ℓ] with keys[m]'s public key), in the oracle mode (keys nil) from the
// pair's oracle stream pair(ℓ, m). Both ends of a pair derive the same stream,
// so one per pair serves both.
func PairStreams(n int, keys []*KeyPair, pair func(l, m int) *rand.Rand) ([][]*MaskStream, error) {
	streams := make([][]*MaskStream, n)
	for l := range n {
		streams[l] = make([]*MaskStream, n)
		for m := l + 1; m < n; m++ {
			var s Secret
			if keys != nil {
				var err error
				if s, err = keys[l].Shared(keys[m].PublicBytes()); err != nil {
					return nil, err
				}
			} else {
				s = OracleSecret(pair(l, m))
			}
			streams[l][m] = NewMaskStream(s)
		}
	}
	return streams, nil
}

// Secret is a 32-byte secret shared by the two agents of a pair. Its bytes
// cannot be read outside this package: it formats as "[secret]" with every fmt
// verb, refuses JSON encoding, and keeps its bytes sealed so that printing a
// struct that holds it shows addresses, not the key.
type Secret struct {
	key *sealed[[32]byte]
}

// OracleSecret returns the pair secret of the oracle mode: 32 bytes drawn from
// r, a stream both agents of the pair open (its name derives from the pair
// and the run seed), instead of a key agreement. Each agent draws it alone,
// so no key messages are exchanged; anyone who knows the run seed can draw it
// too, so it models the masks' statistics, not their secrecy. The masks then
// come from MaskStream exactly as in the secure mode.
func OracleSecret(r *rand.Rand) Secret {
	var k [32]byte
	for i := 0; i < len(k); i += 8 {
		binary.LittleEndian.PutUint64(k[i:], r.Uint64())
	}
	return Secret{key: seal(&k)}
}

// Format prints "[secret]" whatever the verb.
func (Secret) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[secret]") }

// MarshalJSON always fails: a secret must not be serialized.
func (Secret) MarshalJSON() ([]byte, error) {
	return nil, errors.New("pairmask: refusing to encode a secret")
}

// Slot names one mask of a pair: the receiver k whose aggregate it protects,
// the iteration i and the communication stage j ∈ {0, 1, 2} of the (A0, A1, A2)
// recursion. Distinct slots give independent masks.
type Slot struct {
	Receiver, Iteration, Stage int
}

// hkdfSalt is the HKDF salt of every mask key.
const hkdfSalt = "maple/lgh"

// MaskStream derives the masks of one pair from its secret. The mask of slot
// (k, i, j) uses the ChaCha8 stream whose key is
//
//	HKDF-SHA256(secret, salt = "maple/lgh", info = k ‖ i ‖ j, 32 bytes),
//
// with k, i, j as 8-byte big-endian integers (RFC 5869; identical to
// crypto/hkdf.Key, which the tests check). The extraction is done once in
// NewMaskStream and the one-block expansion reuses an HMAC, so Fill does not
// allocate. A MaskStream is not safe for concurrent use: it belongs to one
// actor.
type MaskStream struct {
	st *sealed[maskState]
}

type maskState struct {
	mac    hash.Hash // HMAC-SHA256 keyed with PRK = HKDF-Extract(salt, secret)
	info   [25]byte  // k ‖ i ‖ j ‖ 0x01: the expansion input of the first block
	key    [32]byte  // T(1) = HMAC(PRK, info), the key of the current slot
	chacha rand.ChaCha8
}

// NewMaskStream returns the mask stream of the pair that shares s.
func NewMaskStream(s Secret) *MaskStream {
	if s.key == nil {
		panic("pairmask: NewMaskStream with the zero Secret")
	}
	prk, err := hkdf.Extract(sha256.New, s.key.v[:], []byte(hkdfSalt))
	if err != nil {
		panic(err) // Extract fails only for secrets under 112 bits in FIPS 140-only mode
	}
	return &MaskStream{st: seal(&maskState{mac: hmac.New(sha256.New, prk)})}
}

// Fill overwrites dst with the mask of slot at: i.i.d. Laplace coordinates of
// scale σ/√2 (variance σ², σ = sigma), each the inverse-CDF transform of one
// ChaCha8 output (noise.LaplaceFromUint64). Both agents of the pair get
// bit-identical masks.
func (ms *MaskStream) Fill(dst []float64, at Slot, sigma float64) {
	st := ms.st.v
	st.rekey(at)
	b := noise.LaplaceScale(sigma)
	for i := range dst {
		dst[i] = noise.LaplaceFromUint64(st.chacha.Uint64(), b)
	}
}

// rekey seeds the generator with the HKDF-Expand output for slot at: with a
// 32-byte output, T(1) = HMAC(PRK, info ‖ 0x01).
func (st *maskState) rekey(at Slot) {
	binary.BigEndian.PutUint64(st.info[0:], uint64(at.Receiver))
	binary.BigEndian.PutUint64(st.info[8:], uint64(at.Iteration))
	binary.BigEndian.PutUint64(st.info[16:], uint64(at.Stage))
	st.info[24] = 1
	st.mac.Reset()
	st.mac.Write(st.info[:])
	st.mac.Sum(st.key[:0])
	st.chacha.Seed(st.key)
}

// Format prints "[mask stream]" whatever the verb.
func (MaskStream) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[mask stream]") }
