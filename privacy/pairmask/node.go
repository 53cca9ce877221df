package pairmask

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SetupKind is the type of a set-up message of the secure mode.
type SetupKind int

const (
	// Announce is a receiver k telling one of its senders ℓ its role, the
	// weight a_{ℓk} k gives it (0 when A is symmetric: ℓ knows it as its own
	// weight a_{kℓ}) and its partners at k. Sent once, in the first round.
	Announce SetupKind = iota
	// PublicKey carries a sender's X25519 public key to a receiver, which
	// relays it to the sender's partners there.
	PublicKey
	// RelayedKey is a receiver relaying the public key of Origin to one of
	// Origin's partners.
	RelayedKey
)

var setupKindNames = []string{"announce", "public-key", "relayed-key"}

// String returns a short name of k.
func (k SetupKind) String() string {
	if k < 0 || int(k) >= len(setupKindNames) {
		return fmt.Sprintf("SetupKind(%d)", int(k))
	}
	return setupKindNames[k]
}

// SetupMessage is one set-up message between two nodes, in the protocol's
// terms; a caller maps it to its wire format. Only the fields of its Kind are
// meaningful.
type SetupMessage struct {
	// Kind says which of the fields below are meaningful.
	Kind SetupKind
	// Peer is the receiving node of an outgoing message and the sending node
	// of an incoming one.
	Peer int
	// Role, Weight and Partners are the content of an Announce.
	Role     Role
	Weight   float64
	Partners []int
	// Origin is the node whose public key a RelayedKey carries.
	Origin int
	// Key is the X25519 public key of a PublicKey or RelayedKey.
	Key []byte
}

// SetupCounts counts the set-up messages a node sent.
type SetupCounts struct {
	// Roles counts announcements (as a receiver), Keys public keys sent to
	// receivers (as a sender) and Relays public keys relayed to partners (as
	// a receiver).
	Roles, Keys, Relays int
}

// NodeStreams are the random streams a Node draws from: Key, the node's own
// key stream (secure mode), and Pair(a, b), the stream of the unordered pair
// {a, b} that both ends open (oracle mode). Each may be nil when the mode
// does not use it. With OSKey the secure mode draws the key pair from the
// operating system's randomness (NewRandomKeyPair) instead of Key.
type NodeStreams struct {
	Key   *rand.Rand
	Pair  func(a, b int) *rand.Rand
	OSKey bool
}

// Node is one node's share of the local graph-homomorphic protocol, for
// masks of any number of communication stages (the stage is part of the mask
// Slot): as a receiver it announces roles and relays its senders' public keys;
// as a sender it keeps, per receiver, its role, the weight the receiver gives
// it and the mask stream it shares with each partner, and adds its masks to
// its messages (Mask). It supports the Secure mode, with set-up messages, and
// the Oracle mode, without; the paper's real-valued key exchange, which sends
// public values every round, is not part of it.
//
// The private key and the pair secrets never leave the Node: they are sealed
// (see Secret) and the only key material a Node emits is its public key.
type Node struct {
	plan      *Plan
	id        int
	mode      Mode
	weight    func(m, p int) float64
	symmetric bool
	keys      *Agreements // secure mode
	links     []nodeLink  // parallel to plan.Receivers(id)
	relayed   []bool      // per sender: its public key was relayed
	announced bool
	mask      []float64
	counts    SetupCounts
}

// nodeLink is the node's relation, as a sender, to one receiver.
type nodeLink struct {
	known    bool // the role is known (announced, or computed in oracle mode)
	role     Role
	weight   float64 // a_{ℓk}, the weight the receiver gives this node
	partners []nodePartner
}

// nodePartner is the mask source shared with one partner at one receiver.
type nodePartner struct {
	id     int
	stream *MaskStream
}

// NewNode returns node id's share of the protocol on plan, for messages of dim
// coordinates. weight(m, p) is a_mp, the weight receiver p gives sender m: a
// node reads its own column (the weights it applies), and only in the oracle
// mode, where the weights are assumed public, its receivers' weights on it.
// symmetric says that A is symmetric, so that announcements omit the weight.
func NewNode(plan *Plan, id int, mode Mode, weight func(m, p int) float64, symmetric bool, dim int, s NodeStreams) (*Node, error) {
	if id < 0 || id >= plan.Nodes() {
		return nil, fmt.Errorf("pairmask: node %d does not exist in a plan of %d", id, plan.Nodes())
	}
	n := &Node{plan: plan, id: id, mode: mode, weight: weight, symmetric: symmetric,
		links:   make([]nodeLink, len(plan.Receivers(id))),
		relayed: make([]bool, len(plan.Senders(id))),
		mask:    make([]float64, dim)}
	switch mode {
	case Secure:
		kp, err := NodeKeyPair(s.OSKey, func() *rand.Rand { return s.Key })
		if err != nil {
			return nil, err
		}
		n.keys = NewAgreements(kp)
	case Oracle:
		if s.Pair == nil {
			return nil, errors.New("pairmask: oracle mode needs the pair streams")
		}
		for i, k := range plan.Receivers(id) {
			as, _ := plan.Assignment(id, k)
			ln := &n.links[i]
			ln.known, ln.role, ln.weight = true, as.Role, weight(id, k)
			for _, m := range as.Partners {
				ln.partners = append(ln.partners, nodePartner{id: m, stream: NewMaskStream(OracleSecret(s.Pair(id, m)))})
			}
		}
	default:
		return nil, fmt.Errorf("pairmask: mode %v is not supported by Node (secure or oracle)", mode)
	}
	return n, nil
}

// Counts returns the set-up messages the node has sent so far.
func (n *Node) Counts() SetupCounts { return n.counts }

// Announce sends, the first time it is called in the secure mode, every
// sender of this node its role, the weight this node gives it (unless A is
// symmetric) and its partners. Later calls, and calls in the oracle mode, do
// nothing.
func (n *Node) Announce(send func(*SetupMessage)) {
	if n.mode != Secure || n.announced {
		return
	}
	n.announced = true
	for _, l := range n.plan.Senders(n.id) {
		as, _ := n.plan.Assignment(l, n.id)
		m := SetupMessage{Kind: Announce, Peer: l, Role: as.Role, Partners: as.Partners}
		if !n.symmetric {
			m.Weight = n.weight(l, n.id)
		}
		send(&m)
		n.counts.Roles++
	}
}

// Step handles an incoming set-up message and sends what it calls for: a
// public key in answer to an announcement, relays of a sender's public key.
// Messages are only valid during the call.
func (n *Node) Step(m *SetupMessage, send func(*SetupMessage)) error {
	if n.mode != Secure {
		return fmt.Errorf("node %d: unexpected %v message from node %d in %v mode", n.id, m.Kind, m.Peer, n.mode)
	}
	switch m.Kind {
	case Announce:
		return n.onAnnounce(m, send)
	case PublicKey:
		return n.onPublicKey(m, send)
	case RelayedKey:
		return n.onRelayedKey(m)
	}
	return fmt.Errorf("node %d: invalid set-up message kind %v from node %d", n.id, m.Kind, m.Peer)
}

// link returns the link to receiver k.
func (n *Node) link(k int) (*nodeLink, error) {
	i, ok := slices.BinarySearch(n.plan.Receivers(n.id), k)
	if !ok {
		return nil, fmt.Errorf("node %d: node %d does not listen to it", n.id, k)
	}
	return &n.links[i], nil
}

func (n *Node) onAnnounce(m *SetupMessage, send func(*SetupMessage)) error {
	ln, err := n.link(m.Peer)
	if err != nil {
		return err
	}
	if ln.known {
		return fmt.Errorf("node %d: second role announcement from node %d", n.id, m.Peer)
	}
	if err := n.checkAnnounce(m); err != nil {
		return err
	}
	ln.known, ln.role, ln.weight = true, m.Role, m.Weight
	if ln.weight == 0 {
		ln.weight = n.weight(m.Peer, n.id) // symmetric A: a_{ℓk} = a_{kℓ}
	}
	for _, id := range m.Partners {
		ln.partners = append(ln.partners, nodePartner{id: id})
	}
	if ln.role == Unmasked {
		return nil
	}
	send(&SetupMessage{Kind: PublicKey, Peer: m.Peer, Key: n.keys.PublicBytes()})
	n.counts.Keys++
	return nil
}

// checkAnnounce validates a role announcement.
func (n *Node) checkAnnounce(m *SetupMessage) error {
	return CheckAnnouncement(m.Role, m.Weight, m.Partners, n.id, m.Peer, n.plan.Nodes(), n.symmetric, "node")
}

// CheckAnnouncement validates the announcement that receiver peer sent
// node self (of nodes nodes): a role, the weight a_{self,peer} (0 only when
// A is symmetric) and the partners, ascending, distinct, neither end. noun
// names the nodes in the error ("node", "agent").
func CheckAnnouncement(role Role, weight float64, partners []int, self, peer, nodes int, symmetric bool, noun string) error {
	switch {
	case role == Unmasked:
		if len(partners) > 0 {
			return fmt.Errorf("%s %d: unmasked role from %s %d lists partners %v", noun, self, noun, peer, partners)
		}
		return nil
	case role != Plus && role != Minus:
		return fmt.Errorf("%s %d: invalid role %d from %s %d", noun, self, role, noun, peer)
	case weight < 0 || weight > 1 || math.IsNaN(weight) || (weight == 0 && !symmetric):
		return fmt.Errorf("%s %d: %s %d announced the weight %g; a masking receiver must announce a weight in (0, 1] unless A is symmetric", noun, self, noun, peer, weight)
	case len(partners) == 0 || !slices.IsSorted(partners):
		return fmt.Errorf("%s %d: %s %d announced the partners %v; they must be non-empty and ascending", noun, self, noun, peer, partners)
	}
	for i, p := range partners {
		if p < 0 || p >= nodes || p == self || p == peer || (i > 0 && p == partners[i-1]) {
			return fmt.Errorf("%s %d: %s %d announced an invalid partner list %v", noun, self, noun, peer, partners)
		}
	}
	return nil
}

// onPublicKey relays a sender's public key to each of its partners here.
func (n *Node) onPublicKey(m *SetupMessage, send func(*SetupMessage)) error {
	idx, ok := slices.BinarySearch(n.plan.Senders(n.id), m.Peer)
	as, _ := n.plan.Assignment(m.Peer, n.id)
	if !ok || as.Role == Unmasked {
		return fmt.Errorf("node %d: public key from node %d, which has no masking role here", n.id, m.Peer)
	}
	if n.relayed[idx] {
		return fmt.Errorf("node %d: second public key from node %d", n.id, m.Peer)
	}
	n.relayed[idx] = true
	for _, p := range as.Partners {
		send(&SetupMessage{Kind: RelayedKey, Peer: p, Origin: m.Peer, Key: m.Key})
		n.counts.Relays++
	}
	return nil
}

// onRelayedKey completes the key agreement with one partner.
func (n *Node) onRelayedKey(m *SetupMessage) error {
	ln, err := n.link(m.Peer)
	if err != nil {
		return err
	}
	if !ln.known {
		return fmt.Errorf("node %d: key relayed by node %d before its role announcement", n.id, m.Peer)
	}
	i := slices.IndexFunc(ln.partners, func(p nodePartner) bool { return p.id == m.Origin })
	if i < 0 {
		return fmt.Errorf("node %d: node %d relayed the key of node %d, which is not its partner there", n.id, m.Peer, m.Origin)
	}
	p := &ln.partners[i]
	if p.stream != nil {
		return fmt.Errorf("node %d: second public key of node %d relayed by node %d", n.id, m.Origin, m.Peer)
	}
	stream, err := n.keys.Stream(m.Key)
	if err != nil {
		return fmt.Errorf("node %d: public key of node %d relayed by node %d: %w", n.id, m.Origin, m.Peer, err)
	}
	p.stream = stream
	return nil
}

// Ready reports whether this node's messages to receiver k can be masked:
// its role there is known and it shares a secret with every partner.
func (n *Node) Ready(k int) bool {
	ln, err := n.link(k)
	if err != nil || !ln.known {
		return false
	}
	for _, p := range ln.partners {
		if p.stream == nil {
			return false
		}
	}
	return true
}

// Mask adds this node's masks for receiver k at slot at (whose Receiver must
// be k) to dst: ±Σ_partners g/a_{ℓk}, partners in ascending order (ApplyMask),
// each mask of standard deviation std. Nothing is added when k cannot mask.
// It does not allocate.
func (n *Node) Mask(dst []float64, at Slot, std float64) error {
	if !n.Ready(at.Receiver) {
		return fmt.Errorf("node %d: masks for node %d requested before the key agreement", n.id, at.Receiver)
	}
	ln, _ := n.link(at.Receiver)
	for i := range ln.partners {
		ln.partners[i].stream.Fill(n.mask, at, std)
		ApplyMask(dst, n.mask, ln.role, ln.weight)
	}
	return nil
}

// Format prints "[LGH node]" whatever the verb: a Node holds key material.
func (Node) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[LGH node]") }
