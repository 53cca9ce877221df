// Package rng derives the independent, reproducible random streams that every
// random draw in maple comes from.
//
// A run is identified by its run seed, itself derived from the scenario seed and
// the Monte-Carlo run index. Inside a run, each stream is named by the actor that
// owns it and the purpose it serves ("batch", "participation", "noise", ...). The
// stream's ChaCha8 key is the SHA-256 hash of that name, so streams never overlap,
// do not depend on the order in which they are created, and are identical in the
// actor engine and in the actor-free reference implementations.
package rng

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// RunSeed returns the seed of Monte-Carlo run number run of a scenario whose seed
// is seed. Recording it is enough to replay that single run.
func RunSeed(seed uint64, run int) uint64 {
	h := sha256.New()
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], seed)
	binary.LittleEndian.PutUint64(buf[8:], uint64(run))
	h.Write([]byte("maple/run\x00"))
	h.Write(buf[:])
	var sum [sha256.Size]byte
	return binary.LittleEndian.Uint64(h.Sum(sum[:0]))
}

// Key returns the 32-byte ChaCha8 key of the stream named (actor, purpose) in the
// run with seed runSeed. The three parts are length-prefixed, so distinct names
// can never collide.
func Key(runSeed uint64, actor, purpose string) [32]byte {
	// The hashed bytes, on the stack for names of ordinary length: keying
	// millions of agents' streams allocates nothing.
	var stack [128]byte
	b := append(stack[:0], streamDomain...)
	b = binary.LittleEndian.AppendUint64(b, runSeed)
	for _, part := range [...]string{actor, purpose} {
		b = binary.LittleEndian.AppendUint64(b, uint64(len(part)))
		b = append(b, part...)
	}
	return sha256.Sum256(b)
}

// IndexedKey returns Key(runSeed, actor, purpose) with the decimal index
// k appended to the actor's name (the stream (prefix+k, purpose), at = 0)
// or to the purpose (the stream (actor, prefix+k), at = 1), without
// building the name: the same bytes hashed, so the same key — what keying
// the streams of millions of agents by name ("agent/" + k) costs, less the
// string.
func IndexedKey(runSeed uint64, actor, purpose string, at, k int) [32]byte {
	var stack [128]byte
	b := append(stack[:0], streamDomain...)
	b = binary.LittleEndian.AppendUint64(b, runSeed)
	for i, part := range [...]string{actor, purpose} {
		if i != at {
			b = binary.LittleEndian.AppendUint64(b, uint64(len(part)))
			b = append(b, part...)
			continue
		}
		start := len(b)
		b = binary.LittleEndian.AppendUint64(b, 0) // the length, set below
		b = append(b, part...)
		b = strconv.AppendInt(b, int64(k), 10)
		binary.LittleEndian.PutUint64(b[start:], uint64(len(b)-start-8))
	}
	return sha256.Sum256(b)
}

// streamDomain starts the bytes a stream's key hashes.
const streamDomain = "maple/stream\x00"

// New returns the stream named (actor, purpose) in the run with seed runSeed.
// The returned generator is not safe for concurrent use: it belongs to one actor.
func New(runSeed uint64, actor, purpose string) *rand.Rand {
	return rand.New(Source(runSeed, actor, purpose))
}

// Source returns the generator of the stream named (actor, purpose) in the
// run with seed runSeed: New is rand.New of it. Keep the source of a stream
// whose position must be saved (Save).
func Source(runSeed uint64, actor, purpose string) *rand.ChaCha8 {
	return rand.NewChaCha8(Key(runSeed, actor, purpose))
}

// Position is where a stream stands: its generator's current ChaCha8 seed and
// how many values of it were used, 40 bytes against the 330 of a live
// generator with its buffer. Resume continues the stream from it exactly,
// so that an actor held lazily (docs/design.md, "Ten million clients") keeps
// its streams while it is parked.
type Position [40]byte

// chacha8Prefix is the prefix of a ChaCha8 generator's binary form, which
// Position leaves out.
const chacha8Prefix = "chacha8:"

// Save returns the position of src. Only the values src gave through Uint64
// (every method of rand.Rand) count: src must not have been read with Read,
// whose buffered bytes a Position does not hold (it panics then, a
// programming error).
func Save(src *rand.ChaCha8) Position {
	b, err := src.MarshalBinary()
	if err != nil || len(b) != len(chacha8Prefix)+len(Position{}) || string(b[:len(chacha8Prefix)]) != chacha8Prefix {
		panic(fmt.Sprintf("rng: a stream read with Read cannot be saved (%d bytes, %v)", len(b), err))
	}
	var p Position
	copy(p[:], b[len(chacha8Prefix):])
	return p
}

// Resume returns a generator at position p: it yields exactly what the
// generator p was saved from would have yielded next.
func (p Position) Resume() *rand.ChaCha8 {
	b := make([]byte, 0, len(chacha8Prefix)+len(p))
	b = append(append(b, chacha8Prefix...), p[:]...)
	src := new(rand.ChaCha8)
	if err := src.UnmarshalBinary(b); err != nil {
		panic("rng: invalid stream position: " + err.Error()) // only Save makes positions
	}
	return src
}
