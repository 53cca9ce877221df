package secagg

import (
	"bytes"
	"crypto/ecdh"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"

	"maple/privacy/shamir"
)

// Client is one client's state machine. Start returns its first message;
// Step consumes each server message and returns its answer (nil once the
// client has nothing more to send). It does no I/O and draws every random
// bit from the stream it was given. Its keys, seeds and shares never leave
// it except as the protocol sends them; it formats as a placeholder.
type Client struct {
	cfg     Config
	id      int
	r       *rand.Rand
	next    Phase // the phase of the server message it expects
	done    bool
	cKey    *ecdh.PrivateKey // c_u: encrypts shares
	sKey    *ecdh.PrivateKey // s_u: pairwise masks
	seed    []byte           // b_u: self mask
	input   []uint64
	clipped int
	peers   []peer // the holders that advertised, ascending, itself included
	shared  []int  // the holders that shared keys (U₂ ∩ holders), ascending
	ownSK   []uint64
	ownSeed []uint64
}

type peer struct {
	id         int
	cPub, sPub []byte
	agreed     []byte // c_{u,v}
	box        []byte // the box v sent u
}

// NewClient returns client id's state machine for a round with the given
// input (length cfg.Dim). The input is clipped and encoded at once; Clipped
// reports how many coordinates were clipped.
func NewClient(cfg Config, id int, input []float64, r *rand.Rand) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if id < 0 || id >= cfg.Clients {
		return nil, fmt.Errorf("secagg: client id %d outside [0, %d)", id, cfg.Clients)
	}
	if len(input) != cfg.Dim {
		return nil, fmt.Errorf("secagg: client %d: input of length %d, want %d", id, len(input), cfg.Dim)
	}
	c := &Client{cfg: cfg, id: id, r: r, input: make([]uint64, cfg.Dim)}
	var err error
	if c.clipped, err = cfg.Encoder.Encode(c.input, input); err != nil {
		return nil, fmt.Errorf("secagg: client %d: %w", id, err)
	}
	if c.cKey, err = newPrivateKey(r); err != nil {
		return nil, err
	}
	if c.sKey, err = newPrivateKey(r); err != nil {
		return nil, err
	}
	return c, nil
}

// Clipped returns the number of input coordinates clipped to the encoder's
// range: counted and reported, never wrapped around.
func (c *Client) Clipped() int { return c.clipped }

// Done reports whether the client has sent its last message.
func (c *Client) Done() bool { return c.done }

// Format prints a placeholder whatever the verb, so that keys never reach a
// log.
func (c Client) Format(f fmt.State, _ rune) { fmt.Fprintf(f, "[secagg client %d]", c.id) }

// Start returns the client's AdvertiseKeys message.
func (c *Client) Start() Message {
	return &AdvertiseKeysMsg{
		Route:     Route{From: c.id, To: Server},
		CipherKey: c.cKey.PublicKey().Bytes(),
		MaskKey:   c.sKey.PublicKey().Bytes(),
	}
}

// Step consumes one server message and returns the client's answer.
func (c *Client) Step(m Message) (Message, error) {
	if c.done {
		return nil, fmt.Errorf("secagg: client %d: %T after the round ended", c.id, m)
	}
	if m.Receiver() != c.id || m.Sender() != Server {
		return nil, fmt.Errorf("secagg: client %d: message from %d to %d", c.id, m.Sender(), m.Receiver())
	}
	if m.Phase() != c.next {
		return nil, fmt.Errorf("secagg: client %d: %T in phase %v", c.id, m, c.next)
	}
	var out Message
	var err error
	switch m := m.(type) {
	case *KeyListMsg:
		out, err = c.shareKeys(m)
	case *ForwardedKeysMsg:
		out, err = c.maskInput(m)
	case *SurvivorsMsg:
		out, err = c.unmask(m)
		c.done = err == nil
	default:
		err = fmt.Errorf("secagg: client %d: unexpected %T", c.id, m)
	}
	if err != nil {
		return nil, err
	}
	c.next++
	return out, nil
}

// shareKeys handles round 1: check the key list, draw b_u, share s_u^SK and
// b_u among the holders and seal each holder's pair of shares.
func (c *Client) shareKeys(m *KeyListMsg) (Message, error) {
	if len(m.Keys) < c.cfg.Threshold {
		return nil, &ThresholdError{Phase: AdvertiseKeys, Client: c.id, Survivors: len(m.Keys), Threshold: c.cfg.Threshold}
	}
	seen := map[string]bool{}
	self := -1
	for i, k := range m.Keys {
		if i > 0 && k.ID <= m.Keys[i-1].ID || k.ID < 0 || k.ID >= c.cfg.Clients {
			return nil, fmt.Errorf("secagg: client %d: key list ids not ascending client ids", c.id)
		}
		pair := string(k.CipherKey) + string(k.MaskKey)
		if seen[pair] || bytes.Equal(k.CipherKey, k.MaskKey) {
			return nil, fmt.Errorf("secagg: client %d: repeated public keys in the key list", c.id)
		}
		seen[pair] = true
		if k.ID == c.id {
			if !bytes.Equal(k.CipherKey, c.cKey.PublicKey().Bytes()) || !bytes.Equal(k.MaskKey, c.sKey.PublicKey().Bytes()) {
				return nil, fmt.Errorf("secagg: client %d: the key list misstates its own keys", c.id)
			}
			self = i
		}
	}
	if self < 0 {
		return nil, fmt.Errorf("secagg: client %d: not in its own key list", c.id)
	}
	c.seed = make([]byte, secretBytes)
	fill(c.seed, c.r)
	xs := make([]uint64, len(m.Keys))
	for i, k := range m.Keys {
		xs[i] = uint64(k.ID) + 1
	}
	skShares, err := shamir.Split(c.sKey.Bytes(), c.cfg.Threshold, xs, c.r)
	if err != nil {
		return nil, err
	}
	seedShares, err := shamir.Split(c.seed, c.cfg.Threshold, xs, c.r)
	if err != nil {
		return nil, err
	}
	out := &SharedKeysMsg{Route: Route{From: c.id, To: Server}, Boxes: make([]Box, 0, len(m.Keys)-1)}
	c.peers = make([]peer, len(m.Keys))
	for i, k := range m.Keys {
		c.peers[i] = peer{id: k.ID, cPub: k.CipherKey, sPub: k.MaskKey}
		if i == self {
			c.ownSK, c.ownSeed = skShares[i].Y, seedShares[i].Y
			continue
		}
		agreed, err := agree(c.cKey, k.CipherKey)
		if err != nil {
			return nil, err
		}
		c.peers[i].agreed = agreed
		plain := encodeShares(skShares[i].Y, seedShares[i].Y)
		out.Boxes = append(out.Boxes, Box{Peer: k.ID, Sealed: seal(boxKey(agreed, c.cfg.Round, c.id, k.ID), c.id, k.ID, plain)})
		clear(plain)
	}
	return out, nil
}

// maskInput handles round 2: y_u = x_u + PRG(b_u) + Σ_{v∈U₂} Δ_{u,v} PRG(s_{u,v})
// with Δ_{u,v} = +1 for u > v and −1 for u < v (Bonawitz et al., Fig. 4).
func (c *Client) maskInput(m *ForwardedKeysMsg) (Message, error) {
	if len(m.Boxes)+1 < c.cfg.Threshold {
		return nil, &ThresholdError{Phase: ShareKeys, Client: c.id, Survivors: len(m.Boxes) + 1, Threshold: c.cfg.Threshold}
	}
	y := slices.Clone(c.input)
	addPRG(y, selfSeed(c.seed, c.cfg.Round), +1)
	c.shared = []int{c.id}
	for i, b := range m.Boxes {
		if i > 0 && b.Peer <= m.Boxes[i-1].Peer {
			return nil, fmt.Errorf("secagg: client %d: forwarded boxes not in ascending sender order", c.id)
		}
		p := c.peer(b.Peer)
		if p == nil || b.Peer == c.id {
			return nil, fmt.Errorf("secagg: client %d: a box from client %d, not a holder", c.id, b.Peer)
		}
		p.box = b.Sealed
		c.shared = append(c.shared, b.Peer)
		agreed, err := agree(c.sKey, p.sPub)
		if err != nil {
			return nil, err
		}
		sign := -1
		if c.id > b.Peer {
			sign = +1
		}
		addPRG(y, maskSeed(agreed, c.cfg.Round), sign)
		clear(agreed)
	}
	slices.Sort(c.shared)
	mask := c.cfg.Encoder.Mask()
	for i := range y {
		y[i] &= mask
	}
	return &MaskedInputMsg{Route: Route{From: c.id, To: Server}, Masked: y, bits: c.cfg.Encoder.Bits()}, nil
}

// unmask handles round 4: for every holder v that shared keys, the share of
// b_v if v survived, of s_v^SK if it did not.
func (c *Client) unmask(m *SurvivorsMsg) (Message, error) {
	if len(m.IDs) < c.cfg.Threshold {
		return nil, &ThresholdError{Phase: MaskedInputCollection, Client: c.id, Survivors: len(m.IDs), Threshold: c.cfg.Threshold}
	}
	for i, v := range m.IDs {
		if i > 0 && v <= m.IDs[i-1] {
			return nil, fmt.Errorf("secagg: client %d: survivors not ascending", c.id)
		}
		if _, ok := slices.BinarySearch(c.shared, v); !ok {
			return nil, fmt.Errorf("secagg: client %d: survivor %d did not share keys with it", c.id, v)
		}
	}
	if _, ok := slices.BinarySearch(m.IDs, c.id); !ok {
		return nil, fmt.Errorf("secagg: client %d: not among the survivors it was sent", c.id)
	}
	out := &UnmaskMsg{Route: Route{From: c.id, To: Server}}
	limbs := shamir.Limbs(secretBytes)
	for _, v := range c.shared {
		var sk, seed []uint64
		if v == c.id {
			sk, seed = c.ownSK, c.ownSeed
		} else {
			p := c.peer(v)
			plain, err := open(boxKey(p.agreed, c.cfg.Round, v, c.id), v, c.id, p.box)
			if err != nil {
				return nil, err
			}
			if len(plain) != 2*8*limbs {
				return nil, fmt.Errorf("secagg: client %d: box from %d holds %d bytes", c.id, v, len(plain))
			}
			sk, seed = decodeShares(plain[:8*limbs]), decodeShares(plain[8*limbs:])
			clear(plain)
		}
		if _, survived := slices.BinarySearch(m.IDs, v); survived {
			out.SelfMask = append(out.SelfMask, OwnerShare{Owner: v, Share: seed})
		} else {
			out.MaskKey = append(out.MaskKey, OwnerShare{Owner: v, Share: sk})
		}
	}
	return out, nil
}

func (c *Client) peer(id int) *peer {
	i, ok := slices.BinarySearchFunc(c.peers, id, func(p peer, id int) int { return p.id - id })
	if !ok {
		return nil
	}
	return &c.peers[i]
}

func encodeShares(a, b []uint64) []byte {
	out := make([]byte, 0, 8*(len(a)+len(b)))
	for _, v := range append(slices.Clip(a), b...) {
		out = binary.BigEndian.AppendUint64(out, v)
	}
	return out
}

func decodeShares(b []byte) []uint64 {
	out := make([]uint64, len(b)/8)
	for i := range out {
		out[i] = binary.BigEndian.Uint64(b[8*i:])
	}
	return out
}
