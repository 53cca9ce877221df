package secagg

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// newPrivateKey draws the 32 bytes of an X25519 private key from r. It does
// not use ecdh.Curve.GenerateKey, which since Go 1.26 ignores its source of
// randomness: runs must be reproducible from their streams.
func newPrivateKey(r *rand.Rand) (*ecdh.PrivateKey, error) {
	var b [secretBytes]byte
	fill(b[:], r)
	k, err := ecdh.X25519().NewPrivateKey(b[:])
	if err != nil {
		return nil, fmt.Errorf("secagg: X25519 private key: %w", err)
	}
	return k, nil
}

func fill(b []byte, r *rand.Rand) {
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
}

// agree returns the X25519 agreement of priv with the public key pub
// (RFC 7748 §6.1); it fails on malformed or low-order public keys.
func agree(priv *ecdh.PrivateKey, pub []byte) ([]byte, error) {
	p, err := ecdh.X25519().NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("secagg: public key: %w", err)
	}
	s, err := priv.ECDH(p)
	if err != nil {
		return nil, fmt.Errorf("secagg: X25519: %w", err)
	}
	return s, nil
}

// derive returns HKDF-SHA256(secret, salt = "maple/secagg/" + purpose,
// info = the 8-byte big-endian words of info), 32 bytes (RFC 5869).
func derive(secret []byte, purpose string, info ...uint64) [32]byte {
	buf := make([]byte, 8*len(info))
	for i, v := range info {
		binary.BigEndian.PutUint64(buf[8*i:], v)
	}
	k, err := hkdf.Key(sha256.New, secret, []byte("maple/secagg/"+purpose), string(buf), 32)
	if err != nil {
		panic(err) // only for keys under 112 bits in FIPS 140-only mode
	}
	var out [32]byte
	copy(out[:], k)
	return out
}

// boxKey returns the AES-256-GCM key of the box from one client to another
// in a round: HKDF of their agreement c_{u,v}, bound to the direction and the
// round, so that each key seals exactly one message and the all-zero nonce
// is never reused.
func boxKey(agreed []byte, round uint64, from, to int) [32]byte {
	return derive(agreed, "box", round, uint64(from), uint64(to))
}

func gcm(key [32]byte) cipher.AEAD {
	b, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	a, err := cipher.NewGCM(b)
	if err != nil {
		panic(err)
	}
	return a
}

// boxAD is the associated data of a box: sender and receiver ids, which
// Bonawitz et al. put in the plaintext (u‖v) to bind a box to its link.
func boxAD(from, to int) []byte {
	var ad [16]byte
	binary.BigEndian.PutUint64(ad[:8], uint64(from))
	binary.BigEndian.PutUint64(ad[8:], uint64(to))
	return ad[:]
}

func seal(key [32]byte, from, to int, plaintext []byte) []byte {
	a := gcm(key)
	return a.Seal(nil, make([]byte, a.NonceSize()), plaintext, boxAD(from, to))
}

func open(key [32]byte, from, to int, box []byte) ([]byte, error) {
	a := gcm(key)
	p, err := a.Open(nil, make([]byte, a.NonceSize()), box, boxAD(from, to))
	if err != nil {
		return nil, fmt.Errorf("secagg: box from client %d to %d: %w", from, to, err)
	}
	return p, nil
}

// maskSeed returns the PRG seed of the pairwise mask of agreement s_{u,v} in
// a round.
func maskSeed(agreed []byte, round uint64) [32]byte { return derive(agreed, "pair-mask", round) }

// selfSeed returns the PRG seed of the self mask of seed b_u in a round.
func selfSeed(b []byte, round uint64) [32]byte { return derive(b, "self-mask", round) }

// addPRG adds (sign = +1) or subtracts (sign = −1) the PRG expansion of
// seed to dst, word by word modulo 2⁶⁴; reducing modulo 2^k afterwards gives
// the same result as working modulo 2^k throughout. The PRG is ChaCha8
// (math/rand/v2), a cryptographically secure generator keyed by the seed.
func addPRG(dst []uint64, seed [32]byte, sign int) {
	c := rand.NewChaCha8(seed)
	if sign > 0 {
		for i := range dst {
			dst[i] += c.Uint64()
		}
		return
	}
	for i := range dst {
		dst[i] -= c.Uint64()
	}
}
