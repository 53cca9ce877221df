package cluster

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	"maple/cluster/wire"
)

// How messages are sealed. Every message between a coordinator and a
// worker is encrypted and authenticated with AES-256-GCM, so that an
// observer of the links reads no scenario, data file or result, and a
// member acts on nothing that a holder of the cluster's secret did not send
// in this conversation.
//
//   - Greetings (Hello, Welcome) are sealed under the greeting key,
//     HKDF-SHA256 of the secret, with a random nonce. Hello carries a new
//     session id and the coordinator's ephemeral X25519 public key, Welcome
//     the worker's.
//   - Every other message travels in that session: the coordinator's plan
//     with that worker. Its two keys, one per direction, are HKDF-SHA256 of
//     the ephemeral keys' shared secret, salted with the cluster's secret,
//     bound to the session id and both public keys. A message's nonce is
//     its counter in its direction, from 1, so that no nonce repeats under
//     a key, and the receiver refuses a counter it has seen, or one older
//     than the replayWindow messages before the newest (a replay).
//
// The ephemeral keys give forward secrecy: whoever learns the cluster's
// secret later cannot decrypt a session recorded before, and a session's
// messages open in no other session, so a message recorded in one cannot be
// replayed into another. A greeting replayed to a worker only makes it
// answer, and keep a pending session for at most pendingLifetime.

// sessionIDBytes is the length of a session id: random, so that ids never
// collide.
const sessionIDBytes = 16

// replayWindow is how many counters below the newest a receiver still
// accepts, once each: messages of a session may be opened out of the order
// they were sealed in (sealed by several goroutines, opened by the actor
// and by the requests' futures), never by thousands.
const replayWindow = 4096

// Labels of the keys HKDF derives, which separate their uses.
const (
	greetingInfo      = "maple cluster v1: greetings"
	toWorkerInfo      = "maple cluster v1: coordinator to worker"
	toCoordinatorInfo = "maple cluster v1: worker to coordinator"
)

// errForged is the error of a message that does not open: its sender does
// not hold the cluster's secret, it belongs to another session, or it was
// altered on the way.
var errForged = errors.New("message not sealed with the cluster's secret")

// errReplayed is the error of a message whose counter its session has
// seen, or that is too old to tell: a replay.
var errReplayed = errors.New("message received before (a replay)")

// role is the party that seals a message.
type role byte

const (
	fromCoordinator role = iota
	fromWorker
)

// aad is the additional data of a greeting: who sealed it, so that a
// greeting cannot be reflected to its sender.
func (r role) aad() []byte {
	if r == fromCoordinator {
		return []byte("from the coordinator")
	}
	return []byte("from a worker")
}

// newAEAD returns AES-256-GCM under the key HKDF-SHA256 derives from
// secret, salt and info.
func newAEAD(secret, salt []byte, info string) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, secret, salt, info, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// encode returns b's deterministic encoding, with room for extra bytes
// beyond it (the tag, sealed in place).
func encode(b *wire.Body, extra int) []byte {
	opts := proto.MarshalOptions{Deterministic: true}
	out, err := opts.MarshalAppend(make([]byte, 0, opts.Size(b)+extra), b)
	if err != nil {
		panic(fmt.Sprintf("cluster: encoding %T: %v", b.Kind, err)) // every field is encodable
	}
	return out
}

// decode decodes a Body that opened.
func decode(plain []byte) (*wire.Body, error) {
	b := &wire.Body{}
	if err := proto.Unmarshal(plain, b); err != nil {
		return nil, fmt.Errorf("a sealed message does not decode: %w", err)
	}
	return b, nil
}

// greeter seals and opens greetings under the cluster's greeting key.
type greeter struct{ aead cipher.AEAD }

// newGreeter returns the greeter of the cluster's secret.
func newGreeter(secret []byte) (*greeter, error) {
	aead, err := newAEAD(secret, nil, greetingInfo)
	if err != nil {
		return nil, err
	}
	return &greeter{aead}, nil
}

// seal seals greeting b from its sender.
func (g *greeter) seal(b *wire.Body, from role) *wire.Sealed {
	nonce := make([]byte, g.aead.NonceSize())
	rand.Read(nonce)
	plain := encode(b, g.aead.Overhead())
	return &wire.Sealed{Nonce: nonce, Box: g.aead.Seal(plain[:0], nonce, plain, from.aad())}
}

// open opens a greeting from its sender.
func (g *greeter) open(m *wire.Sealed, from role) (*wire.Body, error) {
	if len(m.Session) != 0 || len(m.Nonce) != g.aead.NonceSize() {
		return nil, errForged
	}
	plain, err := g.aead.Open(nil, m.Nonce, m.Box, from.aad())
	if err != nil {
		return nil, errForged
	}
	return decode(plain)
}

// session seals and opens the messages of one session, for one side.
type session struct {
	id   []byte
	out  cipher.AEAD // what this side sends
	sent atomic.Uint64
	in   cipher.AEAD // what the other side sends
	seen window
}

// offer is a coordinator's half of a session, proposed in Hello.
type offer struct {
	id  []byte
	key *ecdh.PrivateKey
}

// newOffer draws a session id and an ephemeral key pair.
func newOffer() (*offer, error) {
	key, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, sessionIDBytes)
	rand.Read(id)
	return &offer{id: id, key: key}, nil
}

// hello is the greeting that proposes the session.
func (o *offer) hello(build *wire.Build) *wire.Hello {
	return &wire.Hello{Build: build, Session: o.id, Key: o.key.PublicKey().Bytes()}
}

// accept completes the session with a worker's Welcome.
func (o *offer) accept(secret []byte, w *wire.Welcome) (*session, error) {
	if !bytes.Equal(w.Session, o.id) {
		return nil, errors.New("it answered another session")
	}
	return newSession(secret, o.id, o.key, o.key.PublicKey().Bytes(), w.Key, fromCoordinator)
}

// answer is a worker's half of the session Hello proposes: the session and
// the public key to answer with.
func answer(secret []byte, h *wire.Hello) (*session, []byte, error) {
	if len(h.Session) != sessionIDBytes {
		return nil, nil, fmt.Errorf("a session id of %d bytes, not %d", len(h.Session), sessionIDBytes)
	}
	key, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	s, err := newSession(secret, h.Session, key, h.Key, key.PublicKey().Bytes(), fromWorker)
	if err != nil {
		return nil, nil, err
	}
	return s, key.PublicKey().Bytes(), nil
}

// newSession derives a session's keys on side me, which holds mine, from
// both public keys.
func newSession(secret, id []byte, mine *ecdh.PrivateKey, coordinatorKey, workerKey []byte, me role) (*session, error) {
	theirs := workerKey
	if me == fromWorker {
		theirs = coordinatorKey
	}
	pub, err := ecdh.X25519().NewPublicKey(theirs)
	if err != nil {
		return nil, fmt.Errorf("its session key: %w", err)
	}
	shared, err := mine.ECDH(pub)
	if err != nil {
		return nil, fmt.Errorf("its session key: %w", err)
	}
	// The id and the keys have fixed lengths: their concatenation is
	// unambiguous.
	transcript := ": " + string(id) + string(coordinatorKey) + string(workerKey)
	toWorker, err := newAEAD(shared, secret, toWorkerInfo+transcript)
	if err != nil {
		return nil, err
	}
	toCoordinator, err := newAEAD(shared, secret, toCoordinatorInfo+transcript)
	if err != nil {
		return nil, err
	}
	s := &session{id: bytes.Clone(id), out: toWorker, in: toCoordinator}
	if me == fromWorker {
		s.out, s.in = toCoordinator, toWorker
	}
	return s, nil
}

// nonce is the nonce of the message numbered n.
func nonce(n uint64) []byte {
	var b [12]byte
	binary.BigEndian.PutUint64(b[4:], n)
	return b[:]
}

// seal seals b as the session's next message.
func (s *session) seal(b *wire.Body) *wire.Sealed {
	n := s.sent.Add(1)
	plain := encode(b, s.out.Overhead())
	return &wire.Sealed{Session: s.id, Counter: n, Box: s.out.Seal(plain[:0], nonce(n), plain, s.id)}
}

// open opens a message of the session, once.
func (s *session) open(m *wire.Sealed) (*wire.Body, error) {
	if !bytes.Equal(m.Session, s.id) {
		return nil, errForged
	}
	plain, err := s.in.Open(nil, nonce(m.Counter), m.Box, s.id)
	if err != nil {
		return nil, errForged
	}
	if !s.seen.accept(m.Counter) {
		return nil, errReplayed
	}
	return decode(plain)
}

// window remembers which message counters a session received, among the
// replayWindow counters up to the highest: a bitmap indexed by counter
// modulo replayWindow (the anti-replay window of IPsec, RFC 4303 §3.4.3).
type window struct {
	mu   sync.Mutex
	top  uint64 // the highest counter accepted; 0: none yet
	bits [replayWindow / 64]uint64
}

// accept reports whether counter n is new, and records it.
func (w *window) accept(n uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case n == 0: // counters start at 1
		return false
	case n > w.top:
		// The counters between the old top and n enter the window: their
		// bits held counters that leave it.
		for c := w.top + 1; c < n && c-w.top <= replayWindow; c++ {
			w.bits[c/64%(replayWindow/64)] &^= 1 << (c % 64)
		}
		w.top = n
	case w.top-n >= replayWindow:
		return false
	case w.bits[n/64%(replayWindow/64)]&(1<<(n%64)) != 0:
		return false
	}
	w.bits[n/64%(replayWindow/64)] |= 1 << (n % 64)
	return true
}

// refusal answers a request that did not open.
func refusal(reason wire.Refusal_Reason, health string) *wire.Sealed {
	return &wire.Sealed{Refusal: &wire.Refusal{Reason: reason, Health: health}}
}

// refusedError is the error of a request its receiver refused to open.
type refusedError struct{ r *wire.Refusal }

func (e *refusedError) Error() string { return "refused: " + e.reason() }

// reason says why the receiver refused.
func (e *refusedError) reason() string {
	if e.r.Reason == wire.Refusal_UNKNOWN_SESSION {
		return "it holds no such session (it restarted, or dropped the plan)"
	}
	return "the two do not hold the same cluster secret"
}

// openAnswer opens the answer to a request sealed in session s (nil: a
// greeting from a worker, opened by g).
func openAnswer(res any, s *session, g *greeter) (*wire.Body, error) {
	m, ok := res.(*wire.Sealed)
	if !ok {
		return nil, fmt.Errorf("unexpected answer %T", res)
	}
	if m.Refusal != nil {
		return nil, &refusedError{m.Refusal}
	}
	if s == nil {
		return g.open(m, fromWorker)
	}
	return s.open(m)
}
