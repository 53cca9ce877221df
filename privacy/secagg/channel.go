package secagg

import (
	"crypto/ecdh"
	"fmt"
	"math/rand/v2"
)

// Bonawitz et al. (2017, §4 and Fig. 4) run the protocol over private,
// authenticated channels between each client and the server: only the
// server reads what a client sends it. The boxes of phase 1 are sealed
// client to client, so only the unmasking shares of phase 3 — which the
// server is entitled to, and which t at a time reconstruct a client's
// self-mask seed or mask key — need the channel. ServerKey and
// SealToServer/OpenFromClient provide it, so that an observer of the links
// (a message trace) sees no share in the clear.

// ServerKey is the server's X25519 key pair for its private channels with
// the clients. It formats as a placeholder with every fmt verb.
type ServerKey struct{ priv *ecdh.PrivateKey }

// NewServerKey draws the server's key pair from r.
func NewServerKey(r *rand.Rand) (*ServerKey, error) {
	k, err := newPrivateKey(r)
	if err != nil {
		return nil, err
	}
	return &ServerKey{priv: k}, nil
}

// Public returns the server's public key, which it sends the clients.
func (k *ServerKey) Public() []byte { return k.priv.PublicKey().Bytes() }

// Format prints a placeholder whatever the verb, so that the key never
// reaches a log.
func (ServerKey) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[secagg server key]") }

// channelKey returns the AES-256-GCM key of client u's message to the
// server in round: HKDF of the agreement between c_u and the server's key,
// bound to the round and the client, so that each key seals one message.
func channelKey(agreed []byte, round uint64, u int) [32]byte {
	return derive(agreed, "server-channel", round, uint64(u))
}

// SealToServer seals plaintext for the server whose public key is
// serverKey (the key list's): AES-256-GCM under a key agreed between the
// client's cipher key c_u and the server's, with the client's id and the
// server's as associated data.
func (c *Client) SealToServer(serverKey, plaintext []byte) ([]byte, error) {
	agreed, err := agree(c.cKey, serverKey)
	if err != nil {
		return nil, fmt.Errorf("secagg: client %d: server key: %w", c.id, err)
	}
	defer clear(agreed)
	return seal(channelKey(agreed, c.cfg.Round, c.id), c.id, Server, plaintext), nil
}

// OpenFromClient opens what client u sealed with SealToServer, with the
// cipher key u advertised in this round.
func (s *ServerState) OpenFromClient(k *ServerKey, u int, sealed []byte) ([]byte, error) {
	if u < 0 || u >= s.cfg.Clients || s.keys[u].CipherKey == nil {
		return nil, fmt.Errorf("secagg: server: sealed message from client %d, which advertised no key", u)
	}
	agreed, err := agree(k.priv, s.keys[u].CipherKey)
	if err != nil {
		return nil, err
	}
	defer clear(agreed)
	return open(channelKey(agreed, s.cfg.Round, u), u, Server, sealed)
}
