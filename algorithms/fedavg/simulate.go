package fedavg

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/algorithms/systems"
)

// Observation keys the actor behaviours report (package actors/fedavg uses
// these values) and Simulate reports through SimOptions.Observe, in the round
// of the message concerned.
const (
	ObsDropped   = "dropped"
	ObsLate      = "late"
	ObsTimeout   = "timeout"
	ObsTime      = "time"
	ObsEmpty     = "empty"
	ObsStaleness = "staleness"
	ObsModel     = "model"
	// ObsLost and ObsDuplicate are the actor engine's own observations of a
	// message lost on its link and of a message sent twice (actors.KeyLost,
	// actors.KeyDuplicate); the value is the receiver.
	ObsLost      = "engine/lost"
	ObsDuplicate = "engine/duplicate"
)

// SimOptions configure Simulate.
type SimOptions struct {
	// Model is the systems model of the run; nil is the ideal network.
	Model *systems.Model
	// Observe, if set, receives what the actor run's observer would: the
	// model and its time after every update, and the events of the systems
	// model. v must be copied to be kept.
	Observe func(round int, key string, v []float64)
}

// Simulate runs rounds rounds (model versions of an asynchronous server) of
// FedAvg under the systems model without actors: a discrete-event
// simulation that sends the messages the actor run sends — Tick and Done
// between the scheduler and the server, GlobalModel, LocalModel and
// LocalUpdate between the server and the agents, the server's timers — with
// the same link delays, losses and duplicates drawn from the same streams,
// delivers them in the engine's order (virtual time, messages before timers,
// then send order) and lets each party handle them with the same state
// machines (Server, AsyncServer, Agent). Its iterates, times and event counts
// are therefore those of the actor run. Importance sampling is not modelled
// (Config.Validate refuses it with the systems features). A run that stalls
// fails with the actor run's message, naming what the server waits for.
func Simulate(cfg Config, sets []*data.Set, l loss.Loss, w0 []float64, runSeed uint64, rounds int, opt SimOptions) error {
	return SimulateContext(context.Background(), cfg, sets, l, w0, runSeed, rounds, opt)
}

// SimulateContext is Simulate, stopping before its next event once ctx is
// done, with an error wrapping ctx.Err(); it changes nothing else, so that a
// run that is not interrupted has Simulate's iterates.
func SimulateContext(ctx context.Context, cfg Config, sets []*data.Set, l loss.Loss, w0 []float64, runSeed uint64, rounds int, opt SimOptions) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Importance.Agents != Uniform || cfg.Importance.Data != Uniform {
		return errors.New("the systems reference does not model importance sampling")
	}
	s := newSim(&cfg, sets, l, w0, runSeed, rounds, opt)
	s.ctx = ctx
	return s.run()
}

// Actor indices of the simulation, in the engine's spawn order.
const (
	simScheduler = 0
	simServer    = 1
	simAgent0    = 2
)

type simKind int

const (
	simStart simKind = iota
	simTick
	simDone
	simModel    // GlobalModel to an agent
	simReply    // LocalModel or LocalUpdate to the server
	simDeadline // the server's FedAvgDeadline timer
	simTimeout  // the server's FedAvgTimeout timer
)

// simMsg is a message (or timer) in flight.
type simMsg struct {
	kind     simKind
	from, to int
	round    int
	slot     int32
	vec      []float64
	agent    int // the agent of a timeout
	lost     bool
}

// simAgent is one agent's state besides its state machine.
type simAgent struct {
	core    *Agent
	device  *systems.Device
	attack  Adversary // nil for an honest agent
	attackR *rand.Rand
	last    [2]int
	started bool
	why     string
	dropped int
}

type sim struct {
	ctx     context.Context
	cfg     *Config
	opt     SimOptions
	model   *systems.Model
	runSeed uint64
	rounds  int
	dim     int

	queue  systems.Queue[simMsg]
	clock  []float64
	fifo   systems.FIFO
	jitter []*rand.Rand
	faults []*rand.Rand
	names  []string

	// the scheduler
	round    int
	finished bool
	// the synchronous server
	server *Server
	open   bool
	sround int
	// the asynchronous server
	async    *AsyncServer
	tasks    int32
	answered []int32
	done     bool

	agents []simAgent
}

func newSim(cfg *Config, sets []*data.Set, l loss.Loss, w0 []float64, runSeed uint64, rounds int, opt SimOptions) *sim {
	K := len(sets)
	m := opt.Model
	if m == nil {
		m = &systems.Model{}
	}
	s := &sim{cfg: cfg, opt: opt, model: m, runSeed: runSeed, rounds: rounds, dim: len(w0),
		clock: make([]float64, simAgent0+K), fifo: systems.FIFO{},
		jitter: make([]*rand.Rand, simAgent0+K), faults: make([]*rand.Rand, simAgent0+K),
		names: make([]string, simAgent0+K), agents: make([]simAgent, K), answered: make([]int32, K)}
	s.names[simScheduler], s.names[simServer] = "scheduler", ServerName
	s.server = NewServer(cfg, w0, rng.New(runSeed, ServerName, "participation"))
	devices := m.Devices(runSeed, K, AgentName)
	bad := cfg.ChooseAdversaries(func() *rand.Rand { return rng.New(runSeed, AdversaryOwner, AdversaryPurpose) }, K)
	for k, set := range sets {
		name := AgentName(k)
		s.names[simAgent0+k] = name
		a := &s.agents[k]
		if bad[k] {
			a.attack = cfg.Adversary
			set = a.attack.Poison(set, l)
			a.attackR = rng.New(runSeed, name, StreamAttack)
		}
		a.core = NewAgent(cfg, set, l, AgentStreams(cfg, func(purpose string) *rand.Rand { return rng.New(runSeed, name, purpose) }))
		a.device = devices[k]
	}
	return s
}

// placed reports whether actor i is a network node (the server and agents).
func placed(i int) bool { return i != simScheduler }

func (s *sim) device(i int) *systems.Device {
	if i >= simAgent0 {
		return s.agents[i-simAgent0].device
	}
	return nil
}

func (s *sim) stream(streams []*rand.Rand, i int, purpose string) *rand.Rand {
	if streams[i] == nil {
		streams[i] = rng.New(s.runSeed, s.names[i], purpose)
	}
	return streams[i]
}

// send mirrors actors.Run.send: the link's delay and fate, drawn from the
// sender's latency and faults streams, FIFO on links whose delays vary.
func (s *sim) send(m simMsg, size func() int) {
	base := systems.Link{Latency: s.model.Latency, Jitter: s.model.Jitter, Bandwidth: s.model.Bandwidth, Loss: s.model.Loss, Duplicate: s.model.Duplicate}
	var l systems.Link
	if !placed(m.from) && !placed(m.to) {
		l = base
		l.Loss, l.Duplicate = 0, 0
	} else {
		l = base.Between(s.device(m.from), s.device(m.to), placed(m.from) && placed(m.to))
	}
	n := 0
	if l.Bandwidth > 0 {
		n = size()
	}
	d := l.Delay(n, func() *rand.Rand { return s.stream(s.jitter, m.from, systems.StreamLatency) })
	copies := l.Copies(func() *rand.Rand { return s.stream(s.faults, m.from, systems.StreamFaults) })
	t := s.clock[m.from] + d
	if l.Reorders() {
		t = s.fifo.Arrive(m.from, m.to, t)
	}
	m.lost = copies == 0
	s.queue.Push(t, false, m)
	if copies == 2 {
		dup := m
		s.queue.Push(t+d, false, dup)
		s.observe(m.round, ObsDuplicate, float64(m.to))
	}
}

func (s *sim) after(from int, delay float64, m simMsg) {
	s.queue.Push(s.clock[from]+delay, true, m)
}

func (s *sim) observe(round int, key string, v ...float64) {
	if s.opt.Observe != nil {
		s.opt.Observe(round, key, v)
	}
}

func (s *sim) run() error {
	s.queue.Push(0, false, simMsg{kind: simStart, to: simScheduler})
	for s.queue.Len() > 0 && !s.finished {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("round %d: interrupted: %w", s.round, err)
		}
		t, m := s.queue.Pop()
		if m.lost {
			s.observe(m.round, ObsLost, float64(m.to))
			continue
		}
		s.clock[m.to] = max(s.clock[m.to], t)
		var err error
		switch m.kind {
		case simStart, simDone:
			s.scheduler(m)
		case simTick, simReply, simDeadline, simTimeout:
			if s.cfg.Async.Mode == Sync {
				err = s.syncServer(m)
			} else {
				err = s.asyncServer(m)
			}
		case simModel:
			err = s.agent(m)
		}
		if err != nil {
			return fmt.Errorf("actor %s failed in round %d: %w", s.names[m.to], m.round, err)
		}
	}
	if !s.finished {
		return s.stalled()
	}
	return nil
}

// scheduler mirrors actors.Scheduler with a single target, the server.
func (s *sim) scheduler(m simMsg) {
	rounds := s.rounds
	if s.cfg.Async.Mode != Sync {
		rounds = 1
	}
	if m.kind == simDone && s.round == rounds {
		s.finished = true
		return
	}
	s.round++
	s.send(simMsg{kind: simTick, from: simScheduler, to: simServer, round: s.round}, func() int { return 0 })
}

// syncServer mirrors actors/fedavg.ServerParts with the synchronous server
// of a combination rule (Server.Combine).
func (s *sim) syncServer(m simMsg) error {
	switch m.kind {
	case simTick:
		s.sround, s.open = m.round, true
		draws, err := s.server.Draw()
		if err != nil {
			return err
		}
		model := append([]float64(nil), s.server.Model()...)
		for slot, k := range draws {
			s.send(simMsg{kind: simModel, from: simServer, to: simAgent0 + k, round: m.round, slot: int32(slot), vec: model},
				func() int { return modelWireSize(int32(slot), len(model)) })
		}
		if t := s.cfg.Collection().Timer(); t > 0 {
			s.after(simServer, t, simMsg{kind: simDeadline, from: simServer, to: simServer, round: m.round})
		}
		return nil
	case simDeadline:
		if !s.open || m.round != s.sround {
			return nil
		}
		s.closeRound(m.round)
		return nil
	}
	k := m.from - simAgent0
	switch {
	case !s.open || m.round != s.sround:
		s.observe(m.round, ObsLate, float64(k))
		return nil
	case s.server.Filled(int(m.slot), k):
		return nil
	}
	complete, err := s.server.Accept(int(m.slot), k, m.vec)
	if err != nil {
		return err
	}
	switch {
	case complete:
		s.open = false
		s.endRound(m.round)
	case s.cfg.Collection().Enough(s.server.Received()):
		s.closeRound(m.round)
	}
	return nil
}

func (s *sim) closeRound(round int) {
	s.open = false
	if s.server.Close() == 0 {
		s.observe(round, ObsEmpty)
	}
	s.endRound(round)
}

func (s *sim) endRound(round int) {
	s.server.Combine()
	s.observe(round, ObsTime, s.clock[simServer])
	s.observe(round, ObsModel, s.server.Model()...)
	s.send(simMsg{kind: simDone, from: simServer, to: simScheduler, round: round}, func() int { return 0 })
}

// asyncServer mirrors actors/fedavg's asynchronous server.
func (s *sim) asyncServer(m simMsg) error {
	switch m.kind {
	case simTick:
		s.async = NewAsyncServer(s.cfg, s.server.Model(), rng.New(s.runSeed, ServerName, "participation"))
		s.dispatch()
		return nil
	case simTimeout:
		if !s.done && s.async.Abandon(m.agent, m.round) {
			s.observe(m.round, ObsTimeout, float64(m.agent))
			s.dispatch()
		}
		return nil
	}
	k := m.from - simAgent0
	switch {
	case s.done:
		return nil
	case s.answered[k] == m.slot:
		return nil
	case !s.async.Waiting(k, m.round):
		s.observe(m.round, ObsLate, float64(k))
		return nil
	}
	s.answered[k] = m.slot
	updated, tau, err := s.async.Arrive(k, m.round, m.vec)
	if err != nil {
		return err
	}
	s.observe(m.round, ObsStaleness, float64(tau))
	if !updated {
		return nil
	}
	v := s.async.Version()
	s.observe(v, ObsTime, s.clock[simServer])
	s.observe(v, ObsModel, s.async.Model()...)
	if v == s.rounds {
		s.done = true
		s.send(simMsg{kind: simDone, from: simServer, to: simScheduler, round: 1}, func() int { return 0 })
		return nil
	}
	s.dispatch()
	return nil
}

func (s *sim) dispatch() {
	agents := s.async.Dispatch()
	if len(agents) == 0 {
		return
	}
	v := s.async.Version()
	model := append([]float64(nil), s.async.Model()...)
	for _, k := range agents {
		s.tasks++
		slot := s.tasks
		s.send(simMsg{kind: simModel, from: simServer, to: simAgent0 + k, round: v, slot: slot, vec: model},
			func() int { return modelWireSize(slot, len(model)) })
		if t := s.cfg.Async.Timeout; t > 0 {
			s.after(simServer, t, simMsg{kind: simTimeout, from: simServer, to: simServer, round: v, agent: k})
		}
	}
}

// agent mirrors actors/fedavg.Agent.
func (s *sim) agent(m simMsg) error {
	k := m.to - simAgent0
	a := &s.agents[k]
	t := [2]int{m.round, int(m.slot)}
	if a.started && (t[0] < a.last[0] || t[0] == a.last[0] && t[1] <= a.last[1]) {
		return nil
	}
	a.started, a.last = true, t
	d := a.device
	drop := func(why string) {
		a.why, a.dropped = why, m.round
		s.observe(m.round, ObsDropped, float64(k))
	}
	switch {
	case d.Crashed(m.round):
		drop("crashed")
		return nil
	case d.DropsOut():
		drop("dropped out")
		return nil
	}
	reply := make([]float64, len(m.vec))
	var out Outcome
	if a.attack == nil || a.attack.Trains() {
		var err error
		if out, err = a.core.Train(reply, m.vec, 0); err != nil {
			return err
		}
	}
	now := s.clock[m.to]
	compute := d.ComputeTime(out.Steps, out.Gradients)
	if !d.Available(now, now+compute) {
		drop("was unavailable")
		return nil
	}
	if a.attack != nil {
		a.attack.Corrupt(reply, m.vec, s.cfg.Share, a.attackR)
	}
	s.clock[m.to] += compute
	slot := m.slot
	s.send(simMsg{kind: simReply, from: m.to, to: simServer, round: m.round, slot: slot, vec: reply},
		func() int { return replyWireSize(slot, len(reply)) })
	return nil
}

// stalled returns the actor run's stall error: what the server waits for,
// then what the agents that did not answer say.
func (s *sim) stalled() error {
	var parts []string
	switch {
	case s.cfg.Async.Mode == Sync && s.open:
		if missing := s.server.Missing(); len(missing) > 0 {
			names := make([]string, len(missing))
			for i, k := range missing {
				names[i] = AgentName(k)
			}
			parts = append(parts, fmt.Sprintf("server: round %d waits for the replies of %s (collection policy %s)", s.sround, strings.Join(names, ", "), s.cfg.Collection()))
		}
	case s.cfg.Async.Mode != Sync && s.async != nil && !s.done:
		agents, versions := s.async.Busy()
		if len(agents) > 0 {
			ps := make([]string, len(agents))
			for i, k := range agents {
				ps[i] = fmt.Sprintf("%s (version %d)", AgentName(k), versions[i])
			}
			parts = append(parts, fmt.Sprintf("server: version %d waits for the updates of %s and has no timeout to give up on them", s.async.Version(), strings.Join(ps, ", ")))
		}
	}
	for k, a := range s.agents {
		if a.why != "" {
			parts = append(parts, fmt.Sprintf("%s: %s in round %d (no reply sent)", AgentName(k), a.why, a.dropped))
		}
	}
	msg := "run stalled: no message in flight and the scheduler has not finished"
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, "; ")
	}
	return errors.New(msg)
}

// modelWireSize is the length of the protobuf encoding of a GlobalModel with
// slot and n weights (and no probability p), as proto.Size computes it.
func modelWireSize(slot int32, n int) int { return vectorMessageSize(slot, n) }

// replyWireSize is the length of the protobuf encoding of a LocalModel or
// LocalUpdate with slot and n values and no importance report.
func replyWireSize(slot int32, n int) int { return vectorMessageSize(slot, n) }

// vectorMessageSize is the encoded size of a message whose field 1 is an
// int32 slot and field 2 a packed repeated double of n values.
func vectorMessageSize(slot int32, n int) int {
	size := 0
	if slot != 0 {
		size += protowire.SizeTag(1) + protowire.SizeVarint(uint64(int64(slot)))
	}
	if n > 0 {
		size += protowire.SizeTag(2) + protowire.SizeBytes(8*n)
	}
	return size
}

// WireSizes returns the encoded sizes Simulate charges to bandwidth for a
// GlobalModel and a reply with slot and n values, for tests that compare
// them with the protobuf library's.
func WireSizes(slot int32, n int) (model, reply int) {
	return modelWireSize(slot, n), replyWireSize(slot, n)
}
