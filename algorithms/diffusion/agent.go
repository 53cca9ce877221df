package diffusion

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/sampling"
	"maple/privacy/homomorphic"
)

// Agent is the state machine of one agent of the generalized recursion
// (spec §2.2). The actor layer feeds it its round's Tick (Begin) and every
// message it receives (Step), and sends what it puts in the Outbox. Begin and
// Step report when the iteration is complete; Model then holds w_{p,i}.
//
// Within an iteration the stages run in the order 1, 0, 2. A stage whose
// matrix is I is a local copy; a communicating stage sends y (w, φ or ψ) plus
// its noise or masks to every receiver, waits for every sender's message, and
// combines them with the self term in ascending sender id, whatever the order
// of arrival. Messages of a later stage of the same iteration, or of the
// iteration before Begin, are buffered. All per-message work uses buffers
// allocated once.
type Agent struct {
	net   *Network
	cfg   *Config
	id    int
	set   *data.Set
	loss  loss.Loss
	batch *rand.Rand // StreamBatch
	noise *rand.Rand // StreamNoise
	idx   []int

	w, phi, psi, grad []float64
	state             AdaptState // the adaptation step's memory

	next    int  // the iteration in progress, or the next one to begin
	begun   bool // Begin(next) has been called
	pos     int  // index in stageOrder of the current stage
	started bool // the current stage's self term and draws are prepared

	column  []term    // the a_mp > 0 of column p, ascending m, self included
	terms   []Term    // the terms of a combination on a live graph, reused
	fixed   [3][]Term // per communicating stage: the terms of its combination on the network's graph
	slot    []int32   // per agent m: its index among the senders, −1 if it is not one
	targets []int     // receivers ∪ {p}, ascending
	recv    []int     // per target: its index among the receivers, −1 for p
	edge    []float64 // per receiver: the coefficient of the GH draw in its share (graph-homomorphic only)
	sent    []bool    // per target: the current stage's message is out
	unsent  int       // targets not yet served in the current stage
	inbox   [3][][]float64
	got     [3][]bool
	have    [3]int
	self    []float64    // the current stage's self term
	draws   [3][]float64 // the GH draw g_p of each stage
	shared  [3][]float64 // the noise-free value y of each communicating stage
	out     []float64    // the outgoing payload, reused
	msg     Message      // the outgoing set-up or repair message, reused
	share   Message      // the outgoing share: Kind and Values (out) are set once
	lgh     *lgh         // nil unless LGH with a communicating stage
	counts  SetupCounts  // set-up messages of the round in progress
	last    SetupCounts  // set-up messages of the last completed round
	box     Outbox       // the outbox of the call in progress
	live    *Live        // the round's live links (time-varying graph), or nil
	expect  int          // senders whose shares the current iteration waits for
	rep     repair       // the repair of masks whose partner is down
}

// repair is a receiver's repair of a stage whose LGH masks cannot all
// cancel (policies drop-mask and re-key).
type repair struct {
	stage    int     // the stage under repair, −1 for none
	rekey    bool    // re-key (else drop-mask)
	pending  int     // replies still awaited
	checked  [3]bool // stages of the iteration checked (and repaired)
	asked    []bool  // per sender slot: a reply is awaited from it
	reveals  [][]float64
	revealed []bool
}

// term is one weight a_mp of the receiver's column; slot indexes the inbox,
// or is −1 for the self term.
type term struct {
	a    float64
	slot int
}

// NewAgent returns the state machine of agent p, learning on set with loss l
// from the initial model w0, drawing from streams.
func NewAgent(net *Network, p int, set *data.Set, l loss.Loss, w0 []float64, streams Streams) (*Agent, error) {
	if err := checkAgent(net, p, set, l, w0); err != nil {
		return nil, err
	}
	dim := len(w0)
	a := &Agent{
		net: net, cfg: &net.cfg, id: p, set: set, loss: l, next: 1,
		batch: streams(AgentName(p), StreamBatch),
		noise: streams(AgentName(p), StreamNoise),
		idx:   make([]int, max(net.cfg.Batch, 1)),
		w:     slices.Clone(w0),
		phi:   make([]float64, dim), psi: make([]float64, dim), grad: make([]float64, dim),
		self: make([]float64, dim), out: make([]float64, dim), state: NewAdaptState(dim),
	}
	a.share = Message{Kind: Share, Values: a.out}
	a.layout()
	a.rep.stage = -1
	if net.cfg.Privacy.Scheme == LocalGraphHomomorphic && net.Communicates() {
		var err error
		if a.lgh, err = newLGH(a, streams); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func checkAgent(net *Network, p int, set *data.Set, l loss.Loss, w0 []float64) error {
	switch {
	case p < 0 || p >= net.Agents():
		return fmt.Errorf("agent %d does not exist in a network of %d", p, net.Agents())
	case set == nil || set.Len() == 0:
		return fmt.Errorf("agent %d has no data", p)
	case l.Dim(set.Dim) != len(w0):
		return fmt.Errorf("agent %d: data of dimension %d (model dimension %d), initial model of dimension %d", p, set.Dim, l.Dim(set.Dim), len(w0))
	case net.cfg.Gradient == Batch && net.cfg.Batch > set.Len():
		return fmt.Errorf("agent %d: batches of %d distinct samples, but it holds %d", p, net.cfg.Batch, set.Len())
	}
	return nil
}

// layout allocates the per-stage buffers, the combination order and the
// sender slots.
func (a *Agent) layout() {
	senders := a.net.senders[a.id]
	a.slot = senderSlots(a.net, a.id)
	for m, slot := 0, 0; m < a.net.Agents(); m++ {
		switch {
		case m == a.id:
			a.column = append(a.column, term{a: a.net.Weight(m, a.id), slot: -1})
		case slot < len(senders) && senders[slot] == m:
			a.column = append(a.column, term{a: a.net.Weight(m, a.id), slot: slot})
			slot++
		}
	}
	a.targets = append(slices.Clone(a.net.receivers[a.id]), a.id)
	slices.Sort(a.targets)
	for _, t := range a.targets {
		r, ok := slices.BinarySearch(a.net.receivers[a.id], t)
		if !ok {
			r = -1
		}
		a.recv = append(a.recv, r)
	}
	a.sent = make([]bool, len(a.targets))
	if pr := &a.cfg.Privacy; pr.Scheme == GraphHomomorphic {
		for _, p := range a.net.receivers[a.id] {
			a.edge = append(a.edge, homomorphic.EdgeCoefficient(a.net.a, pr.Form, a.id, p))
		}
	}
	for j := range 3 {
		if !a.net.uses[j] {
			continue
		}
		a.inbox[j] = make([][]float64, len(senders))
		for s := range senders {
			a.inbox[j][s] = make([]float64, len(a.w))
		}
		a.got[j] = make([]bool, len(senders))
		a.shared[j] = make([]float64, len(a.w))
		if a.cfg.Privacy.Scheme == GraphHomomorphic {
			a.draws[j] = make([]float64, len(a.w))
		}
		for _, c := range a.column {
			x := a.self
			if c.slot >= 0 {
				x = a.inbox[j][c.slot]
			}
			a.fixed[j] = append(a.fixed[j], Term{Weight: c.a, X: x, Self: c.slot < 0})
		}
	}
}

// senderSlots returns, per agent m, m's index among agent p's senders, or −1
// if m does not send to p: the slot of m's shares, found without a search.
func senderSlots(net *Network, p int) []int32 {
	slots := make([]int32, net.Agents())
	for m := range slots {
		slots[m] = -1
	}
	for s, m := range net.senders[p] {
		slots[m] = int32(s)
	}
	return slots
}

// slotOf returns sender m's entry in slots, or −1 if m is not a sender (or
// not an agent).
func slotOf(slots []int32, m int) int {
	if m < 0 || m >= len(slots) {
		return -1
	}
	return int(slots[m])
}

// Model returns w_{p,i} after iteration i has completed (w_{p,0} before the
// first). The slice is the agent's state: copy it to keep it.
func (a *Agent) Model() []float64 { return a.w }

// Draw returns the graph-homomorphic draw g_p of stage j in the last
// iteration that reached that stage, or nil if stage j adds no GH noise. The
// observer uses it to evaluate the network residual; it is never a message.
func (a *Agent) Draw(j int) []float64 { return a.draws[j] }

// Shared returns the noise-free value y (w, φ or ψ) the agent shared in
// stage j in the last iteration that reached that stage, or nil if stage j
// does not communicate. Observers use it to measure what an eavesdropper
// reconstructs from the noisy messages; it is never a message.
func (a *Agent) Shared(j int) []float64 { return a.shared[j] }

// Counts returns the LGH set-up messages the agent sent in the last completed
// round.
func (a *Agent) Counts() SetupCounts { return a.last }

// OutDegree returns the number of agents the agent sends its shares to
// besides itself: the most shares it sends in one stage.
func (a *Agent) OutDegree() int { return len(a.net.receivers[a.id]) }

// Begin starts iteration i, which must be the one after the last completed.
// It reports whether the iteration completed at once (it does when no stage
// communicates).
func (a *Agent) Begin(i int, out Outbox) (complete bool, err error) {
	return a.BeginLive(i, nil, out)
}

// BeginLive is Begin for a round of a time-varying graph: live says which
// of the agent's links are up and its weights in the round's combination
// matrix (nil: the network's). The agent sends only on live links, waits
// only for live senders and combines with the live weights; an agent that is
// down skips the round (its iterate stays w_{p,i−1}, it computes nothing).
// The LGH set-up protocol does not depend on the round's links.
func (a *Agent) BeginLive(i int, live *Live, out Outbox) (complete bool, err error) {
	if a.begun || i != a.next {
		return false, fmt.Errorf("agent %d: iteration %d begins, but the next iteration is %d (in progress: %v)", a.id, i, a.next, a.begun)
	}
	a.box = out
	a.begun, a.pos, a.started = true, 0, false
	a.live = live
	a.expect = len(a.net.senders[a.id])
	if live != nil {
		if len(live.Senders) != a.expect || len(live.Receivers) != len(a.net.receivers[a.id]) {
			return false, fmt.Errorf("agent %d: a live view of %d senders and %d receivers, the network has %d and %d", a.id, len(live.Senders), len(live.Receivers), a.expect, len(a.net.receivers[a.id]))
		}
		a.expect = 0
		for _, up := range live.Senders {
			if up {
				a.expect++
			}
		}
	}
	if a.lgh != nil {
		a.lgh.begin(i)
	}
	if live != nil && live.Down {
		for j := range 3 {
			if a.have[j] > 0 {
				return false, fmt.Errorf("agent %d is down in iteration %d but holds %d shares of stage %d", a.id, i, a.have[j], j)
			}
		}
		a.finish()
		return true, nil
	}
	return a.pump()
}

// senderLive reports whether the agent's s-th sender is live this round.
func (a *Agent) senderLive(s int) bool { return a.live == nil || a.live.Senders[s] }

// Step handles message m of iteration i (the envelope's round). Messages of
// the iteration in progress, or of the next one before Begin, are accepted;
// any other message is a protocol error. It reports whether the message
// completed the iteration.
func (a *Agent) Step(i int, m *Message, out Outbox) (complete bool, err error) {
	// Set-up messages do not depend on the iteration; a receiver's repair
	// request can reach a sender that has just completed the iteration.
	late := m.Kind.setup() && i < a.next || m.Kind.request() && i == a.next-1 && !a.begun
	if i != a.next && !late {
		return false, fmt.Errorf("agent %d: %v message from agent %d of iteration %d while iteration %d is open", a.id, m.Kind, m.Peer, i, a.next)
	}
	a.box = out
	if m.Kind == Share {
		err = a.accept(m)
	} else if a.lgh == nil {
		err = fmt.Errorf("agent %d: unexpected %v message from agent %d: scheme %v has no key protocol", a.id, m.Kind, m.Peer, a.cfg.Privacy.Scheme)
	} else {
		a.lgh.round = i
		err = a.lgh.step(m)
	}
	if err != nil || !a.begun {
		return false, err
	}
	return a.pump()
}

// accept buffers a Share.
func (a *Agent) accept(m *Message) error {
	j := m.Stage
	if j < 0 || j > 2 || !a.net.uses[j] {
		return fmt.Errorf("agent %d: share of stage %d from agent %d, which does not communicate", a.id, j, m.Peer)
	}
	if a.begun && stagePos[j] < a.pos {
		return fmt.Errorf("agent %d: share of stage %d from agent %d after that stage was combined", a.id, j, m.Peer)
	}
	s := slotOf(a.slot, m.Peer)
	switch {
	case s < 0:
		return fmt.Errorf("agent %d: share from agent %d, which it does not listen to", a.id, m.Peer)
	case a.begun && !a.senderLive(s):
		return fmt.Errorf("agent %d: share of stage %d from agent %d, whose link is down this iteration", a.id, j, m.Peer)
	case a.got[j][s]:
		return fmt.Errorf("agent %d: second share of stage %d from agent %d", a.id, j, m.Peer)
	case len(m.Values) != len(a.w):
		return fmt.Errorf("agent %d: share of dimension %d from agent %d, model has %d", a.id, len(m.Values), m.Peer, len(a.w))
	}
	copy(a.inbox[j][s], m.Values)
	a.got[j][s] = true
	a.have[j]++
	return nil
}

// pump advances through the stages as far as the messages received allow.
func (a *Agent) pump() (bool, error) {
	for a.pos < len(stageOrder) {
		j := stageOrder[a.pos]
		if !a.net.uses[j] {
			a.combineLocal(j)
			a.pos++
			continue
		}
		if !a.started {
			a.startStage(j)
		}
		if a.unsent > 0 {
			a.emit(j)
		}
		if a.unsent > 0 || a.have[j] < a.expect {
			return false, nil
		}
		if a.lgh != nil && a.live != nil && a.cfg.Privacy.Partner != IgnorePartner && !a.rep.checked[j] {
			if a.rep.stage != j {
				a.lgh.startRepair(j)
			}
			if a.rep.pending > 0 {
				return false, nil
			}
			a.rep.checked[j] = true
		}
		a.combine(j)
		a.pos++
		a.started = false
	}
	a.finish()
	return true, nil
}

// input and output return the vectors a stage reads and writes: stage 1
// maps w to φ, stage 0 φ to ψ, stage 2 ψ to w.
func (a *Agent) input(j int) []float64 {
	switch j {
	case Stage0:
		return a.phi
	case Stage1:
		return a.w
	}
	return a.psi
}

func (a *Agent) output(j int) []float64 {
	switch j {
	case Stage0:
		return a.psi
	case Stage1:
		return a.phi
	}
	return a.w
}

// startStage prepares the self term (with the GH self-correction) and the
// send list of communicating stage j.
func (a *Agent) startStage(j int) {
	copy(a.self, a.input(j))
	copy(a.shared[j], a.self)
	if pr := &a.cfg.Privacy; pr.Scheme == GraphHomomorphic {
		pr.Mechanism.Fill(a.draws[j], pr.Std, a.noise)
		c := homomorphic.SelfCoefficient(a.net.a, a.id)
		if a.live != nil {
			c = -(1 - a.live.Self) / a.live.Self
		}
		floats.AddScaled(a.self, c, a.draws[j])
	}
	clear(a.sent)
	a.unsent = len(a.targets)
	a.started = true
}

// emit sends the messages of stage j that are ready and not yet sent, in
// ascending receiver order. Under the random scheme that order is also the
// order of the noise draws, the self term's (if any) at its own position.
func (a *Agent) emit(j int) {
	pr := &a.cfg.Privacy
	for t, p := range a.targets {
		if a.sent[t] {
			continue
		}
		if p == a.id {
			if pr.SelfNoise {
				pr.Mechanism.Add(a.self, pr.Std, a.noise)
			}
		} else if a.live != nil && !a.live.Receivers[a.recv[t]] {
			// the link to p is down this round: nothing is sent or drawn
		} else if !a.payload(j, a.recv[t]) {
			continue
		} else {
			a.share.Peer, a.share.Stage = p, j
			a.box.Send(&a.share)
		}
		a.sent[t] = true
		a.unsent--
	}
}

// payload writes the stage-j message for its r-th receiver into a.out, or
// reports that its masks are not ready yet.
func (a *Agent) payload(j, r int) bool {
	pr := &a.cfg.Privacy
	if pr.Scheme == LocalGraphHomomorphic && !a.lgh.ready(r, j) {
		return false
	}
	copy(a.out, a.input(j))
	switch pr.Scheme {
	case Random:
		pr.Mechanism.Add(a.out, pr.Std, a.noise)
	case GraphHomomorphic:
		floats.AddScaled(a.out, a.edge[r], a.draws[j])
	case LocalGraphHomomorphic:
		a.lgh.apply(a.out, r, j)
	}
	return true
}

// combine forms the stage-j aggregate with the configuration's combination
// step, Σ_m a_mp x_m in ascending m by default.
func (a *Agent) combine(j int) {
	if a.lgh != nil {
		if n := a.lgh.detect(); n > 0 {
			a.box.Report(KeyUncancelled, []float64{float64(n)})
		}
	}
	z := a.output(j)
	a.cfg.combiner().Combine(z, a.combination(j))
	if a.rep.stage == j && !a.rep.rekey {
		for s, ok := range a.rep.revealed {
			if ok {
				floats.AddScaled(z, -1, a.rep.reveals[s]) // the masks of partners that are down
			}
		}
	}
	a.have[j] = 0
	clear(a.got[j])
	if j == Stage0 {
		a.adapt(z)
	}
}

// combination returns the terms of the stage-j combination: the network's,
// built once, or those of the round's live graph (its live senders, with its
// weights).
func (a *Agent) combination(j int) []Term {
	if a.live == nil {
		return a.fixed[j]
	}
	a.terms = a.terms[:0]
	for i, c := range a.column {
		t := a.fixed[j][i]
		switch {
		case c.slot < 0:
			t.Weight = a.live.Self
		case !a.live.Senders[c.slot]:
			continue
		default:
			t.Weight = a.live.Weights[c.slot]
		}
		a.terms = append(a.terms, t)
	}
	return a.terms
}

// combineLocal runs stage j with matrix I: a copy, plus the gradient step at
// stage 0.
func (a *Agent) combineLocal(j int) {
	z := a.output(j)
	copy(z, a.input(j))
	if j == Stage0 {
		a.adapt(z)
	}
}

// adapt takes the configuration's adaptation step from z with the
// gradient at the agent's own, noise-free φ_p: z − μ∇̂J_p(φ_p) by default.
func (a *Agent) adapt(z []float64) {
	a.box.Spend(gradient(a.grad, a.phi, a.set, a.loss, a.cfg, a.idx, a.batch))
	a.cfg.adapter().Adapt(z, a.grad, a.cfg.StepSize, &a.state)
}

// finish closes the iteration.
func (a *Agent) finish() {
	a.begun = false
	a.next++
	a.rep.stage, a.rep.checked = -1, [3]bool{}
	a.last, a.counts = a.counts, SetupCounts{}
	if a.lgh != nil {
		a.lgh.endIteration()
	}
}

// gradient sets dst to the oracle's gradient ∇̂J(w) on set and returns the
// number of sample gradients it took: the full local gradient, or the mean
// over cfg.Batch (1 for Sample) distinct samples drawn from r into idx. It is
// shared by Agent and Reference so that both take the same gradients.
func gradient(dst, w []float64, set *data.Set, l loss.Loss, cfg *Config, idx []int, r *rand.Rand) int {
	switch cfg.Gradient {
	case Sample:
		idx = idx[:1]
	case Batch:
		idx = idx[:cfg.Batch]
	default:
		l.FullGrad(dst, w, set)
		return set.Len()
	}
	sampling.WithoutReplacement(idx, set.Len(), r)
	l.Grad(dst, w, set, idx, nil)
	return len(idx)
}
