package diffusion

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// AsyncAgent is the state machine of an agent of asynchronous ATC diffusion:
// agents do not wait for each other. Each step, an agent adapts (with the
// configuration's adaptation step, by default)
//
//	ψ_{p,k} = w_{p,k−1} − μ ∇̂J_p(w_{p,k−1}),
//
// sends ψ_{p,k} (plus its privacy noise) to its receivers and, when its step
// is over (the actor sets a timer a wait after its compute time), combines
// whatever its senders' newest iterates have arrived since its last combine:
//
//	w_{p,k} = Σ_m a_mp x_m,  x_m = the fresh ψ from m, or ψ_{p,k} if none,
//
// in ascending m, so that the weight of a sender with nothing fresh stays on
// the agent's own iterate. When every share arrives before every combine
// (equal compute times, wait ≥ the link latency) this is the synchronous ATC
// recursion, bit for bit. Only the ATC strategy and the none and random
// privacy schemes are asynchronous: graph-homomorphic and local
// graph-homomorphic noise cancel only when every receiver combines the same
// round's messages.
type AsyncAgent struct {
	net   *Network
	cfg   *Config
	id    int
	set   *data.Set
	loss  loss.Loss
	batch *rand.Rand
	noise *rand.Rand
	idx   []int

	w, psi, self, grad, out []float64
	state                   AdaptState // the adaptation step's memory
	step                    int        // steps combined so far: w is w_{p,step}
	latest                  [][]float64
	latestStep              []int
	fresh                   []bool
	column                  []term
	terms                   []Term // the terms of the combination in progress
	targets                 []int
	slot                    []int32 // per agent m: its index among the senders, −1 if it is not one
	msg                     Message // the outgoing share: all but Peer set once
}

// NewAsyncAgent returns the asynchronous state machine of agent p.
func NewAsyncAgent(net *Network, p int, set *data.Set, l loss.Loss, w0 []float64, streams Streams) (*AsyncAgent, error) {
	if err := checkAsync(net.cfg); err != nil {
		return nil, err
	}
	if err := checkAgent(net, p, set, l, w0); err != nil {
		return nil, err
	}
	dim := len(w0)
	senders := net.senders[p]
	a := &AsyncAgent{net: net, cfg: &net.cfg, id: p, set: set, loss: l,
		batch: streams(AgentName(p), StreamBatch), noise: streams(AgentName(p), StreamNoise),
		idx: make([]int, max(net.cfg.Batch, 1)),
		w:   slices.Clone(w0), psi: make([]float64, dim), self: make([]float64, dim), grad: make([]float64, dim), out: make([]float64, dim),
		state:  NewAdaptState(dim),
		latest: make([][]float64, len(senders)), latestStep: make([]int, len(senders)), fresh: make([]bool, len(senders)),
	}
	for s := range senders {
		a.latest[s] = make([]float64, dim)
	}
	for m, slot := 0, 0; m < net.Agents(); m++ {
		switch {
		case m == p:
			a.column = append(a.column, term{a: net.Weight(m, p), slot: -1})
		case slot < len(senders) && senders[slot] == m:
			a.column = append(a.column, term{a: net.Weight(m, p), slot: slot})
			slot++
		}
	}
	a.targets = append(slices.Clone(net.receivers[p]), p)
	slices.Sort(a.targets)
	a.slot = senderSlots(net, p)
	a.msg = Message{Kind: Share, Stage: Stage2, Values: a.out}
	return a, nil
}

// checkAsync refuses what the asynchronous recursion does not model.
func checkAsync(cfg Config) error {
	switch {
	case cfg.Strategy != ATC:
		return fmt.Errorf("asynchronous diffusion runs the ATC strategy, not %v", cfg.Strategy)
	case cfg.Privacy.Scheme != None && cfg.Privacy.Scheme != Random:
		return fmt.Errorf("privacy scheme %v cancels only when every receiver combines the same round's messages: asynchronous diffusion takes none or random", cfg.Privacy.Scheme)
	}
	return nil
}

// Model returns w_{p,k} after k combines; copy it to keep it.
func (a *AsyncAgent) Model() []float64 { return a.w }

// Steps returns the number of steps combined so far.
func (a *AsyncAgent) Steps() int { return a.step }

// OutDegree returns the number of agents the agent sends its iterates to
// besides itself: the most shares it sends in one step.
func (a *AsyncAgent) OutDegree() int { return len(a.net.receivers[a.id]) }

// Adapt runs the adapt half of step Steps()+1 from the current iterate and,
// unless silent (the agent dropped out of this step), sends ψ with its
// privacy noise to every receiver, in ascending order (the order of the
// noise draws; the self term's, with SelfNoise, at its own position). It
// reports the sample gradients to out.Spend.
func (a *AsyncAgent) Adapt(out Outbox, silent bool) {
	copy(a.psi, a.w)
	out.Spend(gradient(a.grad, a.w, a.set, a.loss, a.cfg, a.idx, a.batch))
	a.cfg.adapter().Adapt(a.psi, a.grad, a.cfg.StepSize, &a.state)
	copy(a.self, a.psi)
	if silent {
		return
	}
	pr := &a.cfg.Privacy
	for _, p := range a.targets {
		if p == a.id {
			if pr.SelfNoise {
				pr.Mechanism.Add(a.self, pr.Std, a.noise)
			}
			continue
		}
		copy(a.out, a.psi)
		if pr.Scheme == Random {
			pr.Mechanism.Add(a.out, pr.Std, a.noise)
		}
		a.msg.Peer = p
		out.Send(&a.msg)
	}
}

// Receive records a sender's share of step k: it becomes the sender's fresh
// iterate unless a newer one has already arrived (a second copy, or an old
// one overtaken on the link, is ignored).
func (a *AsyncAgent) Receive(k int, m *Message) error {
	s := slotOf(a.slot, m.Peer)
	switch {
	case m.Kind != Share || m.Stage != Stage2:
		return fmt.Errorf("agent %d: unexpected %v message of stage %d from agent %d in asynchronous ATC", a.id, m.Kind, m.Stage, m.Peer)
	case s < 0:
		return fmt.Errorf("agent %d: share from agent %d, which it does not listen to", a.id, m.Peer)
	case len(m.Values) != len(a.w):
		return fmt.Errorf("agent %d: share of dimension %d from agent %d, model has %d", a.id, len(m.Values), m.Peer, len(a.w))
	case k <= a.latestStep[s]:
		return nil
	}
	copy(a.latest[s], m.Values)
	a.latestStep[s], a.fresh[s] = k, true
	return nil
}

// Combine ends the current step: w = Σ_m a_mp x_m over the fresh shares
// (the agent's own ψ for senders with none), in ascending m, or the
// configuration's other combination step. It returns the number of fresh
// shares combined.
func (a *AsyncAgent) Combine() int {
	a.terms = a.terms[:0]
	n := 0
	for _, c := range a.column {
		x := a.self
		if c.slot >= 0 && a.fresh[c.slot] {
			x = a.latest[c.slot]
			n++
		}
		a.terms = append(a.terms, Term{Weight: c.a, X: x, Self: c.slot < 0})
	}
	a.cfg.combiner().Combine(a.w, a.terms)
	clear(a.fresh)
	a.step++
	return n
}
