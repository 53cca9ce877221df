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
	"math/rand/v2"
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
	h := sha256.New()
	var buf [8]byte
	h.Write([]byte("maple/stream\x00"))
	binary.LittleEndian.PutUint64(buf[:], runSeed)
	h.Write(buf[:])
	for _, part := range [...]string{actor, purpose} {
		binary.LittleEndian.PutUint64(buf[:], uint64(len(part)))
		h.Write(buf[:])
		h.Write([]byte(part))
	}
	var key [32]byte
	h.Sum(key[:0])
	return key
}

// New returns the stream named (actor, purpose) in the run with seed runSeed.
// The returned generator is not safe for concurrent use: it belongs to one actor.
func New(runSeed uint64, actor, purpose string) *rand.Rand {
	return rand.New(rand.NewChaCha8(Key(runSeed, actor, purpose)))
}
