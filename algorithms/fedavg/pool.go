package fedavg

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"maple/algorithms/compress"
	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/algorithms/systems"
)

// Pool holds the agents of a run lazily (docs/design.md, "Ten million
// clients"). An agent exists as a Member — its state machine with its data,
// its streams, its device and its role — only while it has a task: Wake
// builds it from the run seed and its index, and Park lets it go, keeping
// what it carries to its next task: the positions of the streams it drew
// from (40 bytes each: its mini-batches, and its noise, per-round schedule,
// device, attack and client streams when it has them), the data
// probabilities of the partial data policy, its own client and reply
// encoder when they keep state (a StatefulClient's — SCAFFOLD's c_i, say —, a Compressor's), and
// what the engines record about its last tasks. An agent that never had a
// task costs nothing. Every
// engine holds its agents through a Pool (the actor engine, reference.Reference,
// reference.Simulate), so an agent draws the same numbers whether it stayed in memory
// or was rebuilt, and the same as when every agent was built before the
// first round.
//
// A Pool is used by one goroutine.
type Pool struct {
	cfg     *Config
	data    data.Source
	loss    loss.Loss
	runSeed uint64
	fleet   *systems.Fleet // nil without the systems model
	bad     []bool         // the adversaries, nil for an honest run
	keep    bool
	kept    map[int]*Member
	parked  map[int]*parked
}

// Holding is how a Pool holds the agents that had a task (Config.Hold). It
// changes no number, only memory and time.
type Holding int

const (
	// HoldAuto keeps them when every agent's data and state would fit in
	// KeepBytes (AgentBytes of agent 0's dataset, times K), and parks them
	// otherwise.
	HoldAuto Holding = iota
	// HoldKeep keeps every agent that had a task in memory, whole: Wake
	// returns the same Member each time and Park does nothing. That spares
	// rebuilding an agent at every task, for a few kilobytes per agent.
	HoldKeep
	// HoldPark lets an agent go after every task, keeping only what it
	// carries to its next one (about 200 bytes).
	HoldPark
)

// KeepBytes is the memory HoldAuto lets the agents of a run take whole.
const KeepBytes = 256 << 20

// AgentBytes estimates the memory of an agent held whole on set: its data,
// its state machine and its random streams (memberBytes).
func AgentBytes(set *data.Set) float64 {
	return memberBytes + 8*float64(len(set.X)+len(set.Y)+len(set.Val)+len(set.RowPtr)) + 4*float64(len(set.Col))
}

// memberBytes is the memory of a Member besides its data: the Agent and its
// scratch, two or three random streams of 330 bytes, the Member and the
// map entry that keeps it (measured: about 1.5 kB).
const memberBytes = 2048

// NewPool returns the pool of the agents whose datasets src gives, for a
// run with seed runSeed; fleet builds their devices (nil without the
// systems model). It holds them as cfg.Hold says, and chooses the
// adversaries of cfg.Adversary from the run's (AdversaryOwner,
// AdversaryPurpose) stream.
func NewPool(cfg *Config, src data.Source, l loss.Loss, runSeed uint64, fleet *systems.Fleet) *Pool {
	p := &Pool{cfg: cfg, data: src, loss: l, runSeed: runSeed, fleet: fleet,
		bad:  cfg.ChooseAdversaries(func() *rand.Rand { return rng.New(runSeed, AdversaryOwner, AdversaryPurpose) }, src.Agents()),
		kept: map[int]*Member{}, parked: map[int]*parked{}}
	switch cfg.Hold {
	case HoldKeep:
		p.keep = true
	case HoldAuto:
		p.keep = float64(src.Agents())*AgentBytes(src.Set(0)) <= KeepBytes
	}
	return p
}

// Agents returns the number of agents K.
func (p *Pool) Agents() int { return p.data.Agents() }

// Keeps reports whether the pool keeps its agents awake between their tasks
// (HoldKeep, or HoldAuto when they fit in KeepBytes) rather than parking them.
func (p *Pool) Keeps() bool { return p.keep }

// Adversary reports whether agent k is an adversary.
func (p *Pool) Adversary(k int) bool { return p.bad != nil && p.bad[k] }

// Adversaries returns which agents are adversaries, nil for an honest run.
// The slice must not be changed.
func (p *Pool) Adversaries() []bool { return p.bad }

// Member is an agent of a Pool while it has a task.
type Member struct {
	// K is the agent's index.
	K int
	// Core is the agent's state machine, on its dataset (an adversary's
	// poisoned one).
	Core *Agent
	// Device is the agent's device, nil without the systems model.
	Device *systems.Device
	// Adversary is the agent's adversary, nil for an honest agent, and
	// AttackStream its StreamAttack stream.
	Adversary    Adversary
	AttackStream *rand.Rand
	// LastRound and LastSlot identify the last task the agent handled, once
	// Started, so that an engine ignores a second copy of it; Why says why
	// the agent left the task of round Dropped unanswered ("crashed",
	// "dropped out", "was unavailable"), "" if it answered them all. The
	// engines set them; the pool keeps them across Park.
	LastRound, LastSlot int
	Started             bool
	Dropped             int
	Why                 string

	pool    *Pool
	sources []*rand.ChaCha8 // the saved streams, in the order of parked.pos
	named   []namedStream   // the client's streams (Local.Rand), opened or carried over
	resume  []rng.Position  // the parked positions not yet consumed
}

// namedStream is a stream a client opened with Local.Rand: open while the
// member lives (src set), or carried over from an earlier task (pos).
type namedStream struct {
	purpose string
	src     *rand.ChaCha8
	pos     rng.Position
}

// parked is what a Pool keeps of an agent between its tasks.
type parked struct {
	// pos are the positions of the agent's streams: its schedule under
	// the per-round schedule, its mini-batches, its noise when the
	// configuration adds noise, its attack stream when it is an
	// adversary, then its device's (systems.Device.Save).
	pos    []rng.Position
	named  []namedStream    // src nil
	probs  []float64        // p_n^(k) of the partial data policy, nil otherwise
	client Client           // the agent's own client of a StatefulClient, nil otherwise
	enc    compress.Encoder // the agent's own encoder of a Compressor, nil otherwise

	lastRound, lastSlot, dropped int32
	started                      bool
	why                          string
}

// Wake returns agent k with its state where its last task left it: the
// member kept, or one built from the run seed and k and moved on to what
// Park saved.
func (p *Pool) Wake(k int) *Member {
	if m := p.kept[k]; m != nil {
		return m
	}
	m := &Member{K: k, pool: p}
	name := AgentName(k)
	set := p.data.Set(k)
	if p.Adversary(k) {
		m.Adversary = p.cfg.Adversary
		set = m.Adversary.Poison(set, p.loss)
	}
	pk := p.parked[k]
	if pk != nil {
		delete(p.parked, k)
		m.resume, m.named = pk.pos, pk.named
		m.LastRound, m.LastSlot, m.Dropped = int(pk.lastRound), int(pk.lastSlot), int(pk.dropped)
		m.Started, m.Why = pk.started, pk.why
	}
	// stream opens a stream that is saved at Park: where it stood, or
	// from its start.
	stream := func(purpose string) *rand.Rand {
		var src *rand.ChaCha8
		if pk != nil {
			src, m.resume = m.resume[0].Resume(), m.resume[1:]
		} else {
			src = rng.Source(p.runSeed, name, purpose)
		}
		m.sources = append(m.sources, src)
		return rand.New(src)
	}
	s := Streams{Named: m.open, Fresh: func(purpose string) *rand.Rand { return rng.New(p.runSeed, name, purpose) }}
	if p.cfg.Schedule == PerRound {
		s.Schedule = stream("schedule")
	} else {
		// Drawn once, when the agent is built: E_k and B_k come out the
		// same at every wake, and the stream is not saved.
		s.Schedule = rng.New(p.runSeed, name, "schedule")
	}
	s.Batch = stream("batch")
	if p.cfg.NoiseStd > 0 {
		s.Noise = stream("noise")
	}
	if m.Adversary != nil {
		m.AttackStream = stream(StreamAttack)
	}
	if p.fleet != nil {
		m.Device = p.fleet.Device(k)
		if pk != nil {
			m.resume = m.Device.Resume(m.resume)
		}
	}
	m.Core = NewAgent(p.cfg, set, p.loss, s)
	m.Core.index = k
	if pk != nil && pk.probs != nil {
		m.Core.probs = pk.probs
	}
	if pk != nil && pk.client != nil {
		m.Core.client = pk.client
	}
	if pk != nil && pk.enc != nil {
		m.Core.enc = pk.enc
	}
	if p.keep {
		p.kept[k] = m
	}
	return m
}

// open is the member's Streams.Named: the client's stream for purpose
// (Local.Rand opens each purpose once per state machine), where the
// agent's last task left it, or from its start.
func (m *Member) open(purpose string) *rand.Rand {
	i := slices.IndexFunc(m.named, func(n namedStream) bool { return n.purpose == purpose })
	switch {
	case i < 0:
		m.named = append(m.named, namedStream{purpose: purpose, src: rng.Source(m.pool.runSeed, AgentName(m.K), purpose)})
		i = len(m.named) - 1
	case m.named[i].src == nil:
		m.named[i].src = m.named[i].pos.Resume()
	}
	return rand.New(m.named[i].src)
}

// Park ends agent m's task: unless the pool keeps its members, it saves
// what m carries to its next task and lets m go; m must not be used after.
func (p *Pool) Park(m *Member) {
	if p.keep {
		return
	}
	pk := &parked{lastRound: int32(m.LastRound), lastSlot: int32(m.LastSlot), dropped: int32(m.Dropped), started: m.Started, why: m.Why}
	pk.pos = make([]rng.Position, 0, len(m.sources)+2)
	for _, src := range m.sources {
		pk.pos = append(pk.pos, rng.Save(src))
	}
	if m.Device != nil {
		pk.pos = m.Device.Save(pk.pos)
	}
	for _, n := range m.named {
		if n.src != nil {
			n.pos, n.src = rng.Save(n.src), nil
		}
		pk.named = append(pk.named, n)
	}
	if p.cfg.Importance.Data == Partial {
		pk.probs = m.Core.probs
	}
	if p.cfg.StatefulClient != nil {
		pk.client = m.Core.client
	}
	pk.enc = m.Core.enc
	p.parked[m.K] = pk
}

// Parked returns the number of agents parked: those that had a task and
// are not held in memory.
func (p *Pool) Parked() int { return len(p.parked) }

// Unanswered lists, in ascending order, the agents that left a task
// unanswered (their Member's Why), as a stalled run reports them: "agent/3:
// dropped out in round 2 (no reply sent)".
func (p *Pool) Unanswered() []string {
	type silent struct {
		k, round int
		why      string
	}
	var all []silent
	for k, m := range p.kept {
		if m.Why != "" {
			all = append(all, silent{k, m.Dropped, m.Why})
		}
	}
	for k, pk := range p.parked {
		if pk.why != "" {
			all = append(all, silent{k, int(pk.dropped), pk.why})
		}
	}
	slices.SortFunc(all, func(a, b silent) int { return a.k - b.k })
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = fmt.Sprintf("%s: %s in round %d (no reply sent)", AgentName(s.k), s.why, s.round)
	}
	return out
}
