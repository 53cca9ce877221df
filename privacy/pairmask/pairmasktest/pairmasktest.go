// Package pairmasktest recomputes, for the tests of the protocols that use
// X25519 masks (local graph-homomorphic noise between diffusion agents and
// between graph FL servers), the key material their nodes draw from their
// key streams, independently of package pairmask: what must never appear in
// a trace, and the public keys that may.
package pairmasktest

import (
	"crypto/ecdh"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// KeyMaterial returns, hex-encoded, every private key of the nodes named
// names, drawn as 32 little-endian bytes from each one's key stream
// (keyStream(name), at its start), and every pairwise X25519 secret between
// them (secrets), and their public keys by name (public).
func KeyMaterial(t testing.TB, names []string, keyStream func(name string) *rand.Rand) (secrets []string, public map[string]string) {
	t.Helper()
	privs := make([]*ecdh.PrivateKey, len(names))
	public = map[string]string{}
	for p, name := range names {
		r := keyStream(name)
		var b [32]byte
		for i := 0; i < 32; i += 8 {
			binary.LittleEndian.PutUint64(b[i:], r.Uint64())
		}
		priv, err := ecdh.X25519().NewPrivateKey(b[:])
		if err != nil {
			t.Fatal(err)
		}
		privs[p] = priv
		secrets = append(secrets, hex.EncodeToString(b[:]))
		public[name] = hex.EncodeToString(priv.PublicKey().Bytes())
	}
	for l := range privs {
		for m := l + 1; m < len(privs); m++ {
			s, err := privs[l].ECDH(privs[m].PublicKey())
			if err != nil {
				t.Fatal(err)
			}
			secrets = append(secrets, hex.EncodeToString(s))
		}
	}
	return secrets, public
}
