package secagg

import (
	"crypto/ecdh"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"maple/privacy/shamir"
)

// ServerState is the server's state machine. Step consumes one client
// message; when every client expected in the phase has answered, the phase
// closes and Step returns the server's messages, in ascending recipient id.
// Close closes the current phase with the clients that have answered (the
// caller's deadline). Neither does I/O. A failed phase (a *ThresholdError or
// a protocol violation) ends the round: every later call returns the error.
type ServerState struct {
	cfg       Config
	graph     *Graph
	phase     Phase
	err       error
	answered  []bool
	pending   int // clients expected in the phase that have not answered
	survivors [PhaseCount][]int
	keys      []PeerKeys // by client id, valid where it advertised
	boxes     [][]Box    // boxes[to], in arrival order
	sum       []uint64
	selfMask  map[int][]shamir.Share // by owner, in arrival order
	maskKey   map[int][]shamir.Share
	result    *Result
}

// Result is the outcome of a round.
type Result struct {
	// Sum is Σ_{u∈Included} x_u modulo 2^k, x_u the encoded inputs: decoded
	// by the round's Encoder it is exactly the sum of the quantized inputs.
	Sum []uint64
	// Included lists the clients whose inputs are in Sum (U₃), ascending.
	Included []int
}

// NewServer returns the server's state machine. For SecAgg+ (Neighbours <
// Clients − 1) it draws the Harary graph's permutation from r; the complete
// graph draws nothing.
func NewServer(cfg Config, r *rand.Rand) (*ServerState, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g, err := HararyGraph(cfg.Clients, cfg.Neighbours, r)
	if err != nil {
		return nil, err
	}
	return &ServerState{
		cfg:      cfg,
		graph:    g,
		answered: make([]bool, cfg.Clients),
		pending:  cfg.Clients,
		keys:     make([]PeerKeys, cfg.Clients),
		boxes:    make([][]Box, cfg.Clients),
		selfMask: map[int][]shamir.Share{},
		maskKey:  map[int][]shamir.Share{},
	}, nil
}

// Graph returns the round's communication graph.
func (s *ServerState) Graph() *Graph { return s.graph }

// Phase returns the phase the server is collecting.
func (s *ServerState) Phase() Phase { return s.phase }

// Survivors returns the clients that answered in phase p (U₁, U₂, U₃, U₅ of
// the paper), ascending; nil for a phase not closed yet.
func (s *ServerState) Survivors(p Phase) []int { return s.survivors[p] }

// Result returns the round's result once the unmasking phase has closed.
func (s *ServerState) Result() (*Result, bool) { return s.result, s.result != nil }

// Format prints a placeholder whatever the verb: the server's state holds
// shares and reconstructed secrets.
func (s ServerState) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[secagg server]") }

// expected reports whether client u must answer in the current phase.
func (s *ServerState) expected(u int) bool {
	if s.phase == AdvertiseKeys {
		return true
	}
	_, ok := slices.BinarySearch(s.survivors[s.phase-1], u)
	return ok
}

// Step consumes one client message.
func (s *ServerState) Step(m Message) ([]Message, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.phase >= PhaseCount {
		return nil, fmt.Errorf("secagg: server: %T after the round ended", m)
	}
	u := m.Sender()
	if m.Receiver() != Server || u < 0 || u >= s.cfg.Clients {
		return nil, s.fail(fmt.Errorf("secagg: server: message from %d to %d", u, m.Receiver()))
	}
	if m.Phase() != s.phase || !s.expected(u) || s.answered[u] {
		return nil, s.fail(fmt.Errorf("secagg: server: unexpected %T from client %d in phase %v", m, u, s.phase))
	}
	var err error
	switch m := m.(type) {
	case *AdvertiseKeysMsg:
		s.keys[u] = PeerKeys{ID: u, CipherKey: m.CipherKey, MaskKey: m.MaskKey}
	case *SharedKeysMsg:
		err = s.collectBoxes(u, m)
	case *MaskedInputMsg:
		err = s.collectMasked(u, m)
	case *UnmaskMsg:
		err = s.collectShares(u, m)
	default:
		err = fmt.Errorf("secagg: server: unexpected %T from client %d", m, u)
	}
	if err != nil {
		return nil, s.fail(err)
	}
	s.answered[u] = true
	if s.pending--; s.pending > 0 {
		return nil, nil
	}
	return s.Close()
}

func (s *ServerState) fail(err error) error {
	s.err = err
	return err
}

func (s *ServerState) collectBoxes(u int, m *SharedKeysMsg) error {
	for i, b := range m.Boxes {
		if i > 0 && b.Peer <= m.Boxes[i-1].Peer || !s.graph.Adjacent(u, b.Peer) {
			return fmt.Errorf("secagg: server: client %d sent a box to %d", u, b.Peer)
		}
		if len(b.Sealed) != BoxBytes {
			return fmt.Errorf("secagg: server: client %d sent a box of %d bytes", u, len(b.Sealed))
		}
		s.boxes[b.Peer] = append(s.boxes[b.Peer], Box{Peer: u, Sealed: b.Sealed})
	}
	return nil
}

func (s *ServerState) collectMasked(u int, m *MaskedInputMsg) error {
	if len(m.Masked) != s.cfg.Dim {
		return fmt.Errorf("secagg: server: client %d sent %d coordinates, want %d", u, len(m.Masked), s.cfg.Dim)
	}
	if s.sum == nil {
		s.sum = make([]uint64, s.cfg.Dim)
	}
	for i, v := range m.Masked {
		s.sum[i] += v // modulo 2⁶⁴, reduced modulo 2^k at the end
	}
	return nil
}

func (s *ServerState) collectShares(u int, m *UnmaskMsg) error {
	limbs := shamir.Limbs(secretBytes)
	for _, part := range []struct {
		list     []OwnerShare
		into     map[int][]shamir.Share
		survived bool
	}{{m.SelfMask, s.selfMask, true}, {m.MaskKey, s.maskKey, false}} {
		for _, sh := range part.list {
			v := sh.Owner
			if v < 0 || v >= s.cfg.Clients || !(v == u || s.graph.Adjacent(u, v)) || len(sh.Share) != limbs {
				return fmt.Errorf("secagg: server: client %d sent a share of client %d's secret", u, v)
			}
			_, in3 := slices.BinarySearch(s.survivors[MaskedInputCollection], v)
			_, in2 := slices.BinarySearch(s.survivors[ShareKeys], v)
			if in3 != part.survived || !in2 {
				return fmt.Errorf("secagg: server: client %d sent the wrong secret's share of client %d", u, v)
			}
			part.into[v] = append(part.into[v], shamir.Share{X: uint64(u) + 1, Y: sh.Share})
		}
	}
	return nil
}

// Close closes the current phase with the clients that have answered and
// returns the server's messages for the next (none after unmasking).
func (s *ServerState) Close() ([]Message, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.phase >= PhaseCount {
		return nil, fmt.Errorf("secagg: server: Close after the round ended")
	}
	var alive []int
	for u, a := range s.answered {
		if a {
			alive = append(alive, u)
		}
	}
	s.survivors[s.phase] = alive
	clear(s.answered)
	var out []Message
	var err error
	switch s.phase {
	case AdvertiseKeys:
		if err = s.checkHolders(alive); err == nil {
			out = s.keyLists(alive)
		}
	case ShareKeys:
		if err = s.checkHolders(alive); err == nil {
			out = s.forward(alive)
		}
	case MaskedInputCollection:
		if err = s.checkHolders(alive); err == nil {
			out = s.survivorLists(alive)
		}
	case Unmasking:
		err = s.unmask()
	}
	if err != nil {
		return nil, s.fail(err)
	}
	s.phase++
	s.pending = len(alive) // the survivors of this phase are the next one's expected
	return out, nil
}

// checkHolders fails unless every client in alive has at least t share
// holders in alive (itself included).
func (s *ServerState) checkHolders(alive []int) error {
	t := s.cfg.Threshold
	if s.graph.Complete() {
		if len(alive) < t {
			return &ThresholdError{Phase: s.phase, Client: -1, Survivors: len(alive), Threshold: t}
		}
		return nil
	}
	if len(alive) == 0 {
		return &ThresholdError{Phase: s.phase, Client: -1, Survivors: 0, Threshold: t}
	}
	for _, u := range alive {
		if n := len(intersect(s.graph.Holders(u), alive)); n < t {
			return &ThresholdError{Phase: s.phase, Client: u, Survivors: n, Threshold: t}
		}
	}
	return nil
}

func (s *ServerState) keyLists(alive []int) []Message {
	out := make([]Message, 0, len(alive))
	for _, u := range alive {
		h := intersect(s.graph.Holders(u), alive)
		keys := make([]PeerKeys, len(h))
		for i, v := range h {
			keys[i] = s.keys[v]
		}
		out = append(out, &KeyListMsg{Route: Route{From: Server, To: u}, Keys: keys})
	}
	return out
}

func (s *ServerState) forward(alive []int) []Message {
	out := make([]Message, 0, len(alive))
	for _, u := range alive {
		var boxes []Box
		for _, b := range s.boxes[u] {
			if _, ok := slices.BinarySearch(alive, b.Peer); ok {
				boxes = append(boxes, b)
			}
		}
		slices.SortFunc(boxes, func(a, b Box) int { return a.Peer - b.Peer })
		out = append(out, &ForwardedKeysMsg{Route: Route{From: Server, To: u}, Boxes: boxes})
	}
	s.boxes = nil
	return out
}

func (s *ServerState) survivorLists(alive []int) []Message {
	out := make([]Message, 0, len(alive))
	for _, u := range alive {
		out = append(out, &SurvivorsMsg{Route: Route{From: Server, To: u}, IDs: intersect(s.graph.Holders(u), alive)})
	}
	return out
}

// unmask reconstructs b_v for every v ∈ U₃ and s_v^SK for every v ∈ U₂ ∖ U₃
// with a neighbour in U₃, and removes their masks from the sum:
// z = Σ_{u∈U₃} y_u − Σ_{u∈U₃} PRG(b_u) − Σ_{u∈U₃, v∈U₂∖U₃, u~v} Δ_{u,v} PRG(s_{u,v}).
func (s *ServerState) unmask() error {
	t := s.cfg.Threshold
	combiners := map[string]*shamir.Combiner{}
	reconstruct := func(owner int, shares []shamir.Share) ([]byte, error) {
		if len(shares) < t {
			client := owner
			if s.graph.Complete() {
				client = -1
			}
			return nil, &ThresholdError{Phase: Unmasking, Client: client, Survivors: len(shares), Threshold: t}
		}
		slices.SortFunc(shares, func(a, b shamir.Share) int { return int(a.X) - int(b.X) })
		shares = shares[:t]
		var key strings.Builder
		xs := make([]uint64, t)
		for i, sh := range shares {
			xs[i] = sh.X
			key.WriteString(strconv.FormatUint(sh.X, 10))
			key.WriteByte(',')
		}
		c := combiners[key.String()]
		if c == nil {
			var err error
			if c, err = shamir.NewCombiner(xs); err != nil {
				return nil, err
			}
			combiners[key.String()] = c
		}
		return c.Combine(shares, secretBytes)
	}
	if s.sum == nil {
		s.sum = make([]uint64, s.cfg.Dim)
	}
	included := s.survivors[MaskedInputCollection]
	for _, v := range included {
		b, err := reconstruct(v, s.selfMask[v])
		if err != nil {
			return err
		}
		addPRG(s.sum, selfSeed(b, s.cfg.Round), -1)
	}
	for _, v := range s.survivors[ShareKeys] {
		if _, ok := slices.BinarySearch(included, v); ok {
			continue
		}
		var affected []int
		for _, u := range included {
			if s.graph.Adjacent(u, v) {
				affected = append(affected, u)
			}
		}
		if len(affected) == 0 {
			continue
		}
		skBytes, err := reconstruct(v, s.maskKey[v])
		if err != nil {
			return err
		}
		sk, err := ecdh.X25519().NewPrivateKey(skBytes)
		if err != nil {
			return err
		}
		for _, u := range affected {
			agreed, err := agree(sk, s.keys[u].MaskKey)
			if err != nil {
				return err
			}
			// u added Δ_{u,v}·PRG(s_{u,v}): +1 when u > v.
			sign := +1
			if u > v {
				sign = -1
			}
			addPRG(s.sum, maskSeed(agreed, s.cfg.Round), sign)
		}
	}
	mask := s.cfg.Encoder.Mask()
	for i := range s.sum {
		s.sum[i] &= mask
	}
	s.result = &Result{Sum: s.sum, Included: included}
	s.selfMask, s.maskKey = nil, nil
	return nil
}

// intersect returns the elements of the ascending slices a and b that are in
// both, ascending.
func intersect(a, b []int) []int {
	var out []int
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}
