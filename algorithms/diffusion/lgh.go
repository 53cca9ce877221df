package diffusion

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/privacy/pairmask"
)

// lgh is an agent's part of the local graph-homomorphic protocol: as a
// receiver it announces roles and relays its senders' public keys or values;
// as a sender it keeps, per receiver, its role, the weight the receiver gives
// it and the mask source shared with each partner.
type lgh struct {
	a       *Agent
	mode    pairmask.Mode
	paper   pairmask.PaperParams
	keys    *pairmask.Agreements // secure mode; never leaves the agent
	links   []link               // parallel to the agent's receivers
	relayed []bool               // per sender: its public key was relayed (secure)
	mask    []float64            // one pair mask, reused
	public  []float64            // paper public values, reused
	delta   []float64            // the masks of one share, for the residual report
	out     []float64            // a residual report, reused
	streams Streams              // for the oracle secrets of re-keyed pairs
	keyOf   [][]byte             // per sender: its public key (secure), for re-keying
	share   []float64            // a re-keyed share, reused
	old     []float64            // the masks a re-keyed share replaces
	round   int                  // the iteration of the message being handled
}

// link is the agent's relation, as a sender, to one receiver.
type link struct {
	receiver int
	known    bool // the role is known (announced, or computed in oracle mode)
	role     pairmask.Role
	weight   float64 // a_{ℓk}, the weight the receiver gives this agent
	partners []partner
	paper    *rand.Rand // PaperStream(receiver)
	drawn    int        // the last iteration whose paper keys were drawn
}

// partner is the mask source the agent shares with one partner at one
// receiver.
type partner struct {
	id     int
	stream *pairmask.MaskStream // secure and oracle: from the pair secret
	keys   [3]pairmask.PaperKeys
	peer   [3][]float64 // paper: the partner's public values, per stage
	got    [3]bool      // paper: peer[j] is this iteration's
}

func newLGH(a *Agent, streams Streams) (*lgh, error) {
	pr := &a.cfg.Privacy
	l := &lgh{
		a: a, mode: pr.Keys, paper: pairmask.PaperParams{T: 1, Sigma: pr.Std},
		relayed: make([]bool, len(a.net.senders[a.id])),
		mask:    make([]float64, len(a.w)),
		public:  make([]float64, 2*len(a.w)),
		delta:   make([]float64, len(a.w)),
		streams: streams,
		keyOf:   make([][]byte, len(a.net.senders[a.id])),
		share:   make([]float64, len(a.w)),
		old:     make([]float64, len(a.w)),
	}
	switch l.mode {
	case pairmask.Secure:
		kp, err := newKeyPair(pr.OSKeys, streams, a.id)
		if err != nil {
			return nil, err
		}
		l.keys = pairmask.NewAgreements(kp)
	case pairmask.Paper:
		if err := l.paper.Validate(); err != nil {
			return nil, err
		}
	}
	for _, k := range a.net.receivers[a.id] {
		ln := link{receiver: k}
		if l.mode == pairmask.Paper {
			ln.paper = streams(AgentName(a.id), PaperStream(k))
		}
		l.links = append(l.links, ln)
	}
	if l.mode == pairmask.Oracle {
		return l, l.computeRoles(streams)
	}
	return l, nil
}

// newKeyPair returns agent p's X25519 key pair: from its StreamKey stream,
// or from the operating system's randomness with OSKeys.
func newKeyPair(osKeys bool, streams Streams, p int) (*pairmask.KeyPair, error) {
	return pairmask.NodeKeyPair(osKeys, func() *rand.Rand { return streams(AgentName(p), StreamKey) })
}

// computeRoles fills in the links of the oracle mode, which has no set-up
// messages: roles follow from the public topology and weights.
func (l *lgh) computeRoles(streams Streams) error {
	for i := range l.links {
		ln := &l.links[i]
		as, ok := l.a.net.plan.Assignment(l.a.id, ln.receiver)
		if !ok {
			return fmt.Errorf("agent %d does not send to agent %d", l.a.id, ln.receiver)
		}
		ln.known, ln.role, ln.weight = true, as.Role, l.a.net.Weight(l.a.id, ln.receiver)
		for _, m := range as.Partners {
			secret := pairmask.OracleSecret(streams(OracleStream(l.a.id, m)))
			ln.partners = append(ln.partners, partner{id: m, stream: pairmask.NewMaskStream(secret)})
		}
	}
	return nil
}

// begin starts iteration i: in the first, the receiver announces roles and
// warns if it cannot mask; in paper mode the sender draws this iteration's
// keys for every receiver whose role it knows.
func (l *lgh) begin(i int) {
	a := l.a
	if i == 1 {
		if n := len(a.net.senders[a.id]); !a.net.plan.Maskable(a.id) && n > 0 {
			a.box.Warn(fmt.Sprintf("agent %d listens to %d agent(s) besides itself, fewer than the two local graph-homomorphic masks need: messages from %v reach it unmasked", a.id, n, a.net.senders[a.id]))
		}
		if a.cfg.Privacy.exchangesKeys() {
			l.announce()
		}
	}
	for idx := range l.links {
		l.drawPaper(&l.links[idx], i)
	}
}

// announce sends every sender its role, the weight this receiver gives it
// (unless A is symmetric, when the sender knows it) and its partners.
func (l *lgh) announce() {
	a := l.a
	for s, sender := range a.net.senders[a.id] {
		as := a.net.plan.Roles(a.id)[s]
		a.msg = Message{Kind: Role, Peer: sender, Role: as.Role, Partners: as.Partners}
		if !a.net.symmetric {
			a.msg.Weight = a.net.Weight(sender, a.id)
		}
		a.box.Send(&a.msg)
		a.counts.Roles++
	}
}

// drawPaper draws the paper-mode keys of iteration i for one receiver, once,
// and sends their public values, stage by stage and partner by partner.
func (l *lgh) drawPaper(ln *link, i int) {
	a := l.a
	if l.mode != pairmask.Paper || !ln.known || ln.role == Unmasked || ln.drawn == i || !a.begun {
		return
	}
	ln.drawn = i
	for _, j := range stageOrder {
		if !a.net.uses[j] {
			continue
		}
		for pi := range ln.partners {
			keys := ln.partners[pi].keys[j]
			keys.Draw(ln.role, ln.paper)
			keys.Public(l.public)
			a.msg = Message{Kind: PaperPublic, Peer: ln.receiver, Other: ln.partners[pi].id, Stage: j, Values: l.public}
			a.box.Send(&a.msg)
			a.counts.Keys++
		}
	}
}

// step handles a protocol message.
func (l *lgh) step(m *Message) error {
	if !l.expects(m.Kind) {
		return fmt.Errorf("agent %d: unexpected %v message from agent %d in %v mode", l.a.id, m.Kind, m.Peer, l.mode)
	}
	switch m.Kind {
	case MaskRequest:
		return l.onMaskRequest(m)
	case Rekey:
		return l.onRekey(m)
	case MaskReveal, RekeyedShare:
		return l.onRepair(m)
	case Role:
		return l.onRole(m)
	case PublicKey:
		return l.onPublicKey(m)
	case RelayedKey:
		return l.onRelayedKey(m)
	case PaperPublic:
		return l.onPaperPublic(m)
	default:
		return l.onRelayedPaper(m)
	}
}

// expects reports whether messages of kind k belong to the key mode.
func (l *lgh) expects(k Kind) bool {
	switch k {
	case Role:
		return l.mode != pairmask.Oracle
	case PublicKey, RelayedKey:
		return l.mode == pairmask.Secure
	case PaperPublic, RelayedPaper:
		return l.mode == pairmask.Paper
	case MaskRequest, MaskReveal:
		return l.a.cfg.Privacy.Partner == DropMask || l.a.cfg.Privacy.Partner == Rekeying
	case Rekey, RekeyedShare:
		return l.a.cfg.Privacy.Partner == Rekeying
	}
	return false
}

// link returns the link to receiver k.
func (l *lgh) link(k int) (*link, error) {
	i, ok := slices.BinarySearch(l.a.net.receivers[l.a.id], k)
	if !ok {
		return nil, fmt.Errorf("agent %d: message from agent %d, which does not listen to it", l.a.id, k)
	}
	return &l.links[i], nil
}

// onRole records receiver m.Peer's announcement and, in secure mode, sends it
// this agent's public key for relaying.
func (l *lgh) onRole(m *Message) error {
	ln, err := l.link(m.Peer)
	if err != nil {
		return err
	}
	if ln.known {
		return fmt.Errorf("agent %d: second role announcement from agent %d", l.a.id, m.Peer)
	}
	if err := l.checkRole(m); err != nil {
		return err
	}
	ln.known, ln.role, ln.weight = true, m.Role, m.Weight
	if ln.weight == 0 {
		ln.weight = l.a.net.Weight(m.Peer, l.a.id) // symmetric A: a_{ℓk} = a_{kℓ}
	}
	for _, id := range m.Partners {
		p := partner{id: id}
		for j := range 3 {
			if l.a.net.uses[j] && l.mode == pairmask.Paper {
				p.keys[j], p.peer[j] = pairmask.NewPaperKeys(len(l.a.w)), make([]float64, 2*len(l.a.w))
			}
		}
		ln.partners = append(ln.partners, p)
	}
	if ln.role == Unmasked {
		return nil
	}
	if l.mode == pairmask.Secure {
		l.a.msg = Message{Kind: PublicKey, Peer: m.Peer, Key: l.keys.PublicBytes()}
		l.a.box.Send(&l.a.msg)
		l.a.counts.Keys++
	}
	l.drawPaper(ln, l.a.next)
	return nil
}

// checkRole validates a role announcement, as a pairmask.Node does.
func (l *lgh) checkRole(m *Message) error {
	a := l.a
	return pairmask.CheckAnnouncement(m.Role, m.Weight, m.Partners, a.id, m.Peer, a.net.Agents(), a.net.symmetric, "agent")
}

// senderRole returns the role of sender s at this receiver.
func (l *lgh) senderRole(s int) (pairmask.Assignment, int, error) {
	a := l.a
	idx, ok := slices.BinarySearch(a.net.senders[a.id], s)
	if !ok || a.net.plan.Roles(a.id)[idx].Role == Unmasked {
		return pairmask.Assignment{}, 0, fmt.Errorf("agent %d: key material from agent %d, which has no masking role here", a.id, s)
	}
	return a.net.plan.Roles(a.id)[idx], idx, nil
}

// onPublicKey relays a sender's public key to each of its partners.
func (l *lgh) onPublicKey(m *Message) error {
	as, idx, err := l.senderRole(m.Peer)
	if err != nil {
		return err
	}
	if l.relayed[idx] {
		return fmt.Errorf("agent %d: second public key from agent %d", l.a.id, m.Peer)
	}
	l.relayed[idx] = true
	if l.a.cfg.Privacy.Partner == Rekeying {
		l.keyOf[idx] = slices.Clone(m.Key)
	}
	for _, p := range as.Partners {
		l.a.msg = Message{Kind: RelayedKey, Peer: p, Other: m.Peer, Key: m.Key}
		l.a.box.Send(&l.a.msg)
		l.a.counts.Relays++
	}
	return nil
}

// partner returns the partner other at the link to receiver k.
func (l *lgh) partner(k, other int) (*link, *partner, error) {
	ln, err := l.link(k)
	if err != nil {
		return nil, nil, err
	}
	if !ln.known {
		return nil, nil, fmt.Errorf("agent %d: key material relayed by agent %d before its role announcement", l.a.id, k)
	}
	for i := range ln.partners {
		if ln.partners[i].id == other {
			return ln, &ln.partners[i], nil
		}
	}
	return nil, nil, fmt.Errorf("agent %d: agent %d relayed key material of agent %d, which is not its partner there", l.a.id, k, other)
}

// onRelayedKey completes the key agreement with one partner.
func (l *lgh) onRelayedKey(m *Message) error {
	_, p, err := l.partner(m.Peer, m.Other)
	if err != nil {
		return err
	}
	if p.stream != nil {
		return fmt.Errorf("agent %d: second public key of agent %d relayed by agent %d", l.a.id, m.Other, m.Peer)
	}
	if p.stream, err = l.keys.Stream(m.Key); err != nil {
		return fmt.Errorf("agent %d: public key of agent %d relayed by agent %d: %w", l.a.id, m.Other, m.Peer, err)
	}
	return nil
}

// onPaperPublic relays a sender's paper public values to the partner they are
// meant for.
func (l *lgh) onPaperPublic(m *Message) error {
	as, _, err := l.senderRole(m.Peer)
	if err != nil {
		return err
	}
	if !slices.Contains(as.Partners, m.Other) {
		return fmt.Errorf("agent %d: agent %d sent public values for agent %d, which is not its partner here", l.a.id, m.Peer, m.Other)
	}
	if err := l.checkPaperValues(m); err != nil {
		return err
	}
	l.a.msg = Message{Kind: RelayedPaper, Peer: m.Other, Other: m.Peer, Stage: m.Stage, Values: m.Values}
	l.a.box.Send(&l.a.msg)
	l.a.counts.Relays++
	return nil
}

func (l *lgh) checkPaperValues(m *Message) error {
	if m.Stage < 0 || m.Stage > 2 || !l.a.net.uses[m.Stage] {
		return fmt.Errorf("agent %d: public values of stage %d from agent %d, which does not communicate", l.a.id, m.Stage, m.Peer)
	}
	if len(m.Values) != 2*len(l.a.w) {
		return fmt.Errorf("agent %d: %d public values from agent %d, want %d", l.a.id, len(m.Values), m.Peer, 2*len(l.a.w))
	}
	return nil
}

// onRelayedPaper stores a partner's public values for this iteration.
func (l *lgh) onRelayedPaper(m *Message) error {
	if err := l.checkPaperValues(m); err != nil {
		return err
	}
	_, p, err := l.partner(m.Peer, m.Other)
	if err != nil {
		return err
	}
	if p.got[m.Stage] {
		return fmt.Errorf("agent %d: second public values of agent %d for stage %d relayed by agent %d", l.a.id, m.Other, m.Stage, m.Peer)
	}
	copy(p.peer[m.Stage], m.Values)
	p.got[m.Stage] = true
	return nil
}

// ready reports whether the stage-j message to the agent's r-th receiver
// can be masked now.
func (l *lgh) ready(r, j int) bool {
	ln := &l.links[r]
	if !ln.known {
		return false
	}
	for i := range ln.partners {
		p := &ln.partners[i]
		if (l.mode == pairmask.Secure && p.stream == nil) || (l.mode == pairmask.Paper && !p.got[j]) {
			return false
		}
	}
	return true
}

// apply adds this agent's masks for its r-th receiver k at stage j of the
// iteration in progress to dst: ±Σ_partners g/a_{ℓk}, partners in ascending
// order (pairmask.ApplyMask).
func (l *lgh) apply(dst []float64, r, j int) {
	ln := &l.links[r]
	k := ln.receiver
	weight := ln.weight
	live := l.a.live
	if live != nil {
		weight = live.Given[r]
		clear(l.delta)
	}
	std := l.a.cfg.Privacy.Std
	for i := range ln.partners {
		p := &ln.partners[i]
		switch l.mode {
		case pairmask.Secure, pairmask.Oracle:
			p.stream.Fill(l.mask, pairmask.Slot{Receiver: k, Iteration: l.a.next, Stage: j}, std)
		default:
			l.paper.Mask(l.mask, p.keys[j], p.peer[j])
		}
		pairmask.ApplyMask(dst, l.mask, ln.role, weight)
		if live != nil {
			floats.AddScaled(l.delta, ln.role.Sign(), l.mask) // = weight · (its share in dst)
		}
	}
	if live != nil && ln.role != Unmasked {
		l.report(k, j, l.delta)
	}
}

// report tells the observer, outside the protocol, the masks this sender
// added to its stage-j share to receiver k, weighted as k combines them
// (a_{ℓk}·Σ ±g/a_{ℓk} = Σ ±g): summed over k's live senders they are the
// residual that does not cancel in k's aggregate.
func (l *lgh) report(k, j int, masks []float64) {
	v := append(append(l.out[:0], float64(k), float64(j)), masks...)
	l.out = v
	l.a.box.Report(KeyMaskResidual, v)
}

// detect counts, at this receiver, the pairs of stage j whose masks cannot
// cancel: a live sender whose partner's link is down this round.
func (l *lgh) detect() int {
	a := l.a
	if a.live == nil || !a.net.plan.Maskable(a.id) {
		return 0
	}
	n := 0
	for s, as := range a.net.plan.Roles(a.id) {
		if !a.live.Senders[s] {
			continue
		}
		for _, m := range as.Partners {
			if t, ok := slices.BinarySearch(a.net.senders[a.id], m); ok && !a.live.Senders[t] {
				n++
			}
		}
	}
	return n
}

// endIteration forgets the partners' paper values of the iteration that ended.
func (l *lgh) endIteration() {
	for i := range l.links {
		for pi := range l.links[i].partners {
			l.links[i].partners[pi].got = [3]bool{}
		}
	}
}

// absent returns the partners of sender slot s at this receiver that are
// down this round.
func (l *lgh) absent(s int) []int {
	a := l.a
	var out []int
	for _, m := range a.net.plan.Roles(a.id)[s].Partners {
		if t, ok := slices.BinarySearch(a.net.senders[a.id], m); ok && !a.live.Senders[t] {
			out = append(out, m)
		}
	}
	return out
}

// startRepair begins, at this receiver, the repair of stage j when some
// live sender's partner is down: under drop-mask (or re-key with fewer than
// two live senders, which cannot be paired) it asks each such sender for the
// masks it shares with its absent partners; under re-key it splits the live
// senders into new roles and asks every one of them for a share masked
// afresh. It leaves rep.pending at the number of replies awaited (0: nothing
// to repair).
func (l *lgh) startRepair(j int) {
	a := l.a
	rep := &a.rep
	n := len(a.net.senders[a.id])
	rep.stage, rep.pending = j, 0
	rep.asked = resizeBools(rep.asked, n)
	rep.revealed = resizeBools(rep.revealed, n)
	clear(rep.asked)
	clear(rep.revealed)
	if len(rep.reveals) != n {
		rep.reveals = make([][]float64, n)
	}
	if l.detect() == 0 {
		return
	}
	var live []int
	for s, m := range a.net.senders[a.id] {
		if a.live.Senders[s] {
			live = append(live, m)
		}
	}
	rep.rekey = a.cfg.Privacy.Partner == Rekeying && len(live) >= 2
	if !rep.rekey {
		for s, m := range a.net.senders[a.id] {
			if !a.live.Senders[s] {
				continue
			}
			if absent := l.absent(s); len(absent) > 0 {
				a.msg = Message{Kind: MaskRequest, Peer: m, Stage: j, Partners: absent}
				a.box.Send(&a.msg)
				rep.asked[s] = true
				rep.pending++
			}
		}
		return
	}
	plus, minus, _ := pairmask.SplitRoles(a.cfg.Privacy.Roles, a.id, live)
	for s, m := range a.net.senders[a.id] {
		if !a.live.Senders[s] {
			continue
		}
		role, partners := pairmask.Plus, minus
		if slices.Contains(minus, m) {
			role, partners = pairmask.Minus, plus
		}
		a.msg = Message{Kind: Rekey, Peer: m, Stage: j, Role: role, Partners: partners}
		if l.mode == pairmask.Secure {
			for _, p := range partners {
				t, _ := slices.BinarySearch(a.net.senders[a.id], p)
				a.msg.Keys = append(a.msg.Keys, l.keyOf[t])
			}
		}
		a.box.Send(&a.msg)
		rep.asked[s] = true
		rep.pending++
	}
}

// onRepair records a sender's reply to a repair request: the masks it
// reveals (drop-mask) or its re-keyed share, which replaces its first one.
func (l *lgh) onRepair(m *Message) error {
	a := l.a
	rep := &a.rep
	s, ok := slices.BinarySearch(a.net.senders[a.id], m.Peer)
	switch {
	case !ok || !a.begun || rep.stage != m.Stage || rep.pending == 0 || !rep.asked[s] || rep.revealed[s]:
		return fmt.Errorf("agent %d: unexpected %v of stage %d from agent %d", a.id, m.Kind, m.Stage, m.Peer)
	case (m.Kind == RekeyedShare) != rep.rekey:
		return fmt.Errorf("agent %d: %v from agent %d under the other repair policy", a.id, m.Kind, m.Peer)
	case len(m.Values) != len(a.w):
		return fmt.Errorf("agent %d: %v of dimension %d from agent %d, model has %d", a.id, m.Kind, len(m.Values), m.Peer, len(a.w))
	}
	if rep.rekey {
		copy(a.inbox[m.Stage][s], m.Values)
	} else {
		if rep.reveals[s] == nil {
			rep.reveals[s] = make([]float64, len(a.w))
		}
		copy(rep.reveals[s], m.Values)
	}
	rep.revealed[s] = true
	rep.pending--
	return nil
}

// maskSum sets dst to Σ ±g over the partners of link ln at receiver k that
// are in only (all of them if only is nil), for stage slot j of the
// iteration of the message being handled, in ascending partner order: the
// masks a share carries, weighted as k combines them.
func (l *lgh) maskSum(dst []float64, ln *link, k, slot int, only []int) {
	clear(dst)
	for i := range ln.partners {
		p := &ln.partners[i]
		if only != nil && !slices.Contains(only, p.id) {
			continue
		}
		p.stream.Fill(l.mask, pairmask.Slot{Receiver: k, Iteration: l.round, Stage: slot}, l.a.cfg.Privacy.Std)
		floats.AddScaled(dst, ln.role.Sign(), l.mask)
	}
}

// onMaskRequest reveals to receiver k the masks of a stage this sender
// shares with its partners there that are down.
func (l *lgh) onMaskRequest(m *Message) error {
	ln, err := l.link(m.Peer)
	if err != nil {
		return err
	}
	for _, id := range m.Partners {
		if !slices.ContainsFunc(ln.partners, func(p partner) bool { return p.id == id }) {
			return fmt.Errorf("agent %d: agent %d asked for the masks of agent %d, which is not its partner there", l.a.id, m.Peer, id)
		}
	}
	if m.Stage < 0 || m.Stage > 2 || !l.a.net.uses[m.Stage] {
		return fmt.Errorf("agent %d: mask request of stage %d from agent %d, which does not communicate", l.a.id, m.Stage, m.Peer)
	}
	l.maskSum(l.share, ln, m.Peer, m.Stage, m.Partners)
	l.a.msg = Message{Kind: MaskReveal, Peer: m.Peer, Stage: m.Stage, Values: l.share}
	l.a.box.Send(&l.a.msg)
	floats.Scale(-1, l.share)
	l.report(m.Peer, m.Stage, l.share) // removed from the receiver's aggregate
	return nil
}

// onRekey masks this sender's stage share to receiver k afresh, with the new
// partners k assigned among its live senders (masks of slot stage + 3), and
// sends it.
func (l *lgh) onRekey(m *Message) error {
	a := l.a
	ln, err := l.link(m.Peer)
	if err != nil {
		return err
	}
	r, _ := slices.BinarySearch(a.net.receivers[a.id], m.Peer)
	switch {
	case m.Stage < 0 || m.Stage > 2 || !a.net.uses[m.Stage]:
		return fmt.Errorf("agent %d: re-key of stage %d from agent %d, which does not communicate", a.id, m.Stage, m.Peer)
	case m.Role != pairmask.Plus && m.Role != pairmask.Minus:
		return fmt.Errorf("agent %d: re-key from agent %d with role %d", a.id, m.Peer, m.Role)
	case len(m.Partners) == 0 || l.mode == pairmask.Secure && len(m.Keys) != len(m.Partners):
		return fmt.Errorf("agent %d: re-key from agent %d with %d partners and %d keys", a.id, m.Peer, len(m.Partners), len(m.Keys))
	case a.live == nil || !a.live.Receivers[r]:
		return fmt.Errorf("agent %d: re-key from agent %d, whose link is down this iteration", a.id, m.Peer)
	}
	l.maskSum(l.old, ln, m.Peer, m.Stage, nil)
	copy(l.share, a.input(m.Stage))
	clear(l.delta)
	weight := a.live.Given[r]
	for i, id := range m.Partners {
		if id == a.id || id < 0 || id >= a.net.Agents() {
			return fmt.Errorf("agent %d: re-key from agent %d with an invalid partner %d", a.id, m.Peer, id)
		}
		var stream *pairmask.MaskStream
		if l.mode == pairmask.Secure {
			if stream, err = l.keys.Stream(m.Keys[i]); err != nil {
				return fmt.Errorf("agent %d: public key of agent %d relayed by agent %d: %w", a.id, id, m.Peer, err)
			}
		} else {
			stream = pairmask.NewMaskStream(pairmask.OracleSecret(l.streams(OracleStream(a.id, id))))
		}
		stream.Fill(l.mask, pairmask.Slot{Receiver: m.Peer, Iteration: l.round, Stage: m.Stage + 3}, a.cfg.Privacy.Std)
		pairmask.ApplyMask(l.share, l.mask, m.Role, weight)
		floats.AddScaled(l.delta, m.Role.Sign(), l.mask)
	}
	a.msg = Message{Kind: RekeyedShare, Peer: m.Peer, Stage: m.Stage, Values: l.share}
	a.box.Send(&a.msg)
	floats.Sub(l.delta, l.old)
	l.report(m.Peer, m.Stage, l.delta) // the fresh masks replace the first ones
	return nil
}
