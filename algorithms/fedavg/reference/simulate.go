package reference

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"maple/algorithms/compress"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/algorithms/systems"
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
func Simulate(cfg fedavg.Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, opt SimOptions) error {
	return SimulateContext(context.Background(), cfg, src, l, w0, runSeed, rounds, opt)
}

// SimulateContext is Simulate, stopping before its next event once ctx is
// done, with an error wrapping ctx.Err(); it changes nothing else, so that a
// run that is not interrupted has Simulate's iterates.
func SimulateContext(ctx context.Context, cfg fedavg.Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, opt SimOptions) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Importance.Agents != fedavg.Uniform || cfg.Importance.Data != fedavg.Uniform {
		return errors.New("the systems reference does not model importance sampling")
	}
	if cfg.SecAgg != nil {
		return errors.New("the systems reference does not model secure aggregation's phases: only the actor engine runs them with the systems model")
	}
	s := newSim(&cfg, src, l, w0, runSeed, rounds, opt)
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
	side     []float64            // a rule's side vector (GlobalModel.side, the reply's side)
	comp     *compress.Compressed // a compressed reply, nil for a dense one
	agent    int                  // the agent of a timeout
	lost     bool
}

// simActor is what the simulation keeps of an actor besides its state
// machine: its clock and its link streams (latency jitter, faults). An
// agent's is kept from its first message on; while the agent has messages
// in flight to it (pending) its Member is awake, and in between, unless the
// pool keeps its agents, its link streams are parked as positions, as the
// actor engine parks a lazy actor's (actors.Lazy).
type simActor struct {
	clock          float64
	jitter, faults *rand.Rand
	jitterSrc      *rand.ChaCha8
	faultsSrc      *rand.ChaCha8
	jitterPos      *rng.Position
	faultsPos      *rng.Position

	member  *fedavg.Member // an agent's, while it is awake
	pending int            // messages in flight to an agent
}

type sim struct {
	ctx     context.Context
	cfg     *fedavg.Config
	opt     SimOptions
	model   *systems.Model
	runSeed uint64
	rounds  int
	dim     int

	queue systems.Queue[simMsg]
	fifo  systems.FIFO
	fixed [simAgent0]simActor // the scheduler's and the server's
	pool  *fedavg.Pool
	acts  map[int]*simActor // the agents', by actor index, once they had a message

	// the scheduler
	round    int
	finished bool
	// the synchronous server
	server *fedavg.Server
	open   bool
	sround int
	// the asynchronous server
	async    *fedavg.AsyncServer
	tasks    int32
	answered map[int]int32 // per agent: the task of its last accepted update
	done     bool

	ledger *fedavg.Ledger // DP accounting, nil without DP
}

func newSim(cfg *fedavg.Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, opt SimOptions) *sim {
	m := opt.Model
	if m == nil {
		m = &systems.Model{}
	}
	s := &sim{cfg: cfg, opt: opt, model: m, runSeed: runSeed, rounds: rounds, dim: len(w0),
		fifo: systems.FIFO{}, acts: map[int]*simActor{}, answered: map[int]int32{}}
	s.server = fedavg.NewServer(cfg, w0, rng.New(runSeed, fedavg.ServerName, "participation"))
	s.server.UseStreams(func(purpose string) *rand.Rand { return rng.New(runSeed, fedavg.ServerName, purpose) })
	if l := fedavg.NewLedger(cfg, len(w0), fedavg.LedgerSamples(cfg, src)); l.Active() {
		s.ledger = l
	}
	s.pool = fedavg.NewPool(cfg, src, l, runSeed, m.Fleet(runSeed, src.Agents(), fedavg.AgentName))
	return s
}

// placed reports whether actor i is a network node (the server and agents).
func placed(i int) bool { return i != simScheduler }

// name returns the name of actor i.
func name(i int) string {
	switch i {
	case simScheduler:
		return "scheduler"
	case simServer:
		return fedavg.ServerName
	}
	return fedavg.AgentName(i - simAgent0)
}

// actor returns what the simulation keeps of actor i, waking an agent's
// Member (which gives its device) if it is parked.
func (s *sim) actor(i int) *simActor {
	if i < simAgent0 {
		return &s.fixed[i]
	}
	a := s.acts[i]
	if a == nil {
		a = &simActor{}
		s.acts[i] = a
	}
	if a.member == nil {
		a.member = s.pool.Wake(i - simAgent0)
		if a.jitterPos != nil {
			a.jitterSrc, a.jitterPos = a.jitterPos.Resume(), nil
			a.jitter = rand.New(a.jitterSrc)
		}
		if a.faultsPos != nil {
			a.faultsSrc, a.faultsPos = a.faultsPos.Resume(), nil
			a.faults = rand.New(a.faultsSrc)
		}
	}
	return a
}

// release counts a message to actor i as handled (or lost), and parks an
// agent that has nothing more in flight to it, unless the pool keeps its
// agents.
func (s *sim) release(i int) {
	if i < simAgent0 {
		return
	}
	a := s.acts[i]
	if a.pending--; a.pending > 0 || s.pool.Keeps() {
		return
	}
	s.pool.Park(a.member)
	a.member = nil
	if a.jitterSrc != nil {
		p := rng.Save(a.jitterSrc)
		a.jitterPos, a.jitter, a.jitterSrc = &p, nil, nil
	}
	if a.faultsSrc != nil {
		p := rng.Save(a.faultsSrc)
		a.faultsPos, a.faults, a.faultsSrc = &p, nil, nil
	}
}

func (s *sim) device(i int) *systems.Device {
	if i >= simAgent0 {
		return s.actor(i).member.Device
	}
	return nil
}

// jitter and faults return actor i's link streams.
func (s *sim) jitter(i int) *rand.Rand {
	a := s.actor(i)
	if a.jitter == nil {
		a.jitterSrc = rng.Source(s.runSeed, name(i), systems.StreamLatency)
		a.jitter = rand.New(a.jitterSrc)
	}
	return a.jitter
}

func (s *sim) faults(i int) *rand.Rand {
	a := s.actor(i)
	if a.faults == nil {
		a.faultsSrc = rng.Source(s.runSeed, name(i), systems.StreamFaults)
		a.faults = rand.New(a.faultsSrc)
	}
	return a.faults
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
	d := l.Delay(n, func() *rand.Rand { return s.jitter(m.from) })
	copies := l.Copies(func() *rand.Rand { return s.faults(m.from) })
	t := s.actor(m.from).clock + d
	if l.Reorders() {
		t = s.fifo.Arrive(m.from, m.to, t)
	}
	m.lost = copies == 0
	s.push(t, false, m)
	if copies == 2 {
		dup := m
		s.push(t+d, false, dup)
		s.observe(m.round, fedavg.ObsDuplicate, float64(m.to))
	}
}

// push queues m, counting it as in flight to an agent receiving it.
func (s *sim) push(t float64, timer bool, m simMsg) {
	if m.to >= simAgent0 {
		s.actor(m.to).pending++
	}
	s.queue.Push(t, timer, m)
}

func (s *sim) after(from int, delay float64, m simMsg) {
	s.push(s.actor(from).clock+delay, true, m)
}

func (s *sim) observe(round int, key string, v ...float64) {
	if s.opt.Observe != nil {
		s.opt.Observe(round, key, v)
	}
}

func (s *sim) run() error {
	s.push(0, false, simMsg{kind: simStart, to: simScheduler})
	for s.queue.Len() > 0 && !s.finished {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("round %d: interrupted: %w", s.round, err)
		}
		t, m := s.queue.Pop()
		if m.lost {
			s.observe(m.round, fedavg.ObsLost, float64(m.to))
			s.release(m.to)
			continue
		}
		a := s.actor(m.to)
		a.clock = max(a.clock, t)
		var err error
		switch m.kind {
		case simStart, simDone:
			s.scheduler(m)
		case simTick, simReply, simDeadline, simTimeout:
			if s.cfg.Async.Mode == fedavg.Sync {
				err = s.syncServer(m)
			} else {
				err = s.asyncServer(m)
			}
		case simModel:
			err = s.agent(m)
		}
		if err != nil {
			return fmt.Errorf("actor %s failed in round %d: %w", name(m.to), m.round, err)
		}
		s.release(m.to)
	}
	if !s.finished {
		return s.stalled()
	}
	return nil
}

// scheduler mirrors actors.Scheduler with a single target, the server.
func (s *sim) scheduler(m simMsg) {
	rounds := s.rounds
	if s.cfg.Async.Mode != fedavg.Sync {
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
		if s.cfg.Variable() {
			s.observe(m.round, fedavg.ObsDraws, float64(len(draws)))
		}
		if len(draws) == 0 {
			// A Poisson round without agents: nothing to wait for.
			s.open = false
			s.endRound(m.round)
			return nil
		}
		model := append([]float64(nil), s.server.Model()...)
		var side []float64
		if v := s.server.Side(); v != nil {
			side = append([]float64(nil), v...)
		}
		for slot, k := range draws {
			s.send(simMsg{kind: simModel, from: simServer, to: simAgent0 + k, round: m.round, slot: int32(slot), vec: model, side: side},
				func() int { return fedavg.ModelWireSize(int32(slot), len(model)) + fedavg.ModelSideWireSize(len(side)) })
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
		s.observe(m.round, fedavg.ObsLate, float64(k))
		return nil
	case s.server.Filled(int(m.slot), k):
		return nil
	}
	var complete bool
	var err error
	if m.comp != nil {
		complete, err = s.server.AcceptCompressed(int(m.slot), k, m.comp, m.side, fedavg.Report{})
	} else {
		complete, err = s.server.AcceptReply(int(m.slot), k, m.vec, m.side, fedavg.Report{})
	}
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
		s.observe(round, fedavg.ObsEmpty)
	}
	s.endRound(round)
}

func (s *sim) endRound(round int) {
	s.server.Combine()
	var entry []float64
	if s.ledger != nil {
		c, p := s.ledger.Round(true, s.cfg.Draws())
		s.observe(round, fedavg.ObsPrivacy, c.Epsilon, p.Epsilon)
		entry = s.server.LedgerEntry(c, p)
	}
	s.observe(round, fedavg.ObsTime, s.fixed[simServer].clock)
	s.observe(round, fedavg.ObsModel, s.server.Model()...)
	s.send(simMsg{kind: simDone, from: simServer, to: simScheduler, round: round}, func() int { return fedavg.DoneWireSize(entry) })
}

// asyncServer mirrors actors/fedavg's asynchronous server.
func (s *sim) asyncServer(m simMsg) error {
	switch m.kind {
	case simTick:
		s.async = fedavg.NewAsyncServer(s.cfg, s.server.Model(), rng.New(s.runSeed, fedavg.ServerName, "participation"))
		s.dispatch()
		return nil
	case simTimeout:
		if s.done {
			return nil
		}
		abandoned, err := s.async.Abandon(m.agent, m.round)
		if err != nil {
			return err
		}
		if abandoned {
			s.observe(m.round, fedavg.ObsTimeout, float64(m.agent))
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
		s.observe(m.round, fedavg.ObsLate, float64(k))
		return nil
	}
	s.answered[k] = m.slot
	var updated bool
	var tau int
	var err error
	if m.comp != nil {
		updated, tau, err = s.async.ArriveCompressed(k, m.round, m.comp)
	} else {
		updated, tau, err = s.async.Arrive(k, m.round, m.vec)
	}
	if err != nil {
		return err
	}
	s.observe(m.round, fedavg.ObsStaleness, float64(tau))
	if !updated {
		return nil
	}
	v := s.async.Version()
	s.observe(v, fedavg.ObsTime, s.fixed[simServer].clock)
	s.observe(v, fedavg.ObsModel, s.async.Model()...)
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
			func() int { return fedavg.ModelWireSize(slot, len(model)) })
		if t := s.cfg.Async.Timeout; t > 0 {
			s.after(simServer, t, simMsg{kind: simTimeout, from: simServer, to: simServer, round: v, agent: k})
		}
	}
}

// agent mirrors actors/fedavg.Agent.
func (s *sim) agent(m simMsg) error {
	k := m.to - simAgent0
	act := s.actor(m.to)
	a := act.member
	if a.Started && (m.round < a.LastRound || m.round == a.LastRound && int(m.slot) <= a.LastSlot) {
		return nil
	}
	a.Started, a.LastRound, a.LastSlot = true, m.round, int(m.slot)
	d := a.Device
	drop := func(why string) {
		a.Why, a.Dropped = why, m.round
		s.observe(m.round, fedavg.ObsDropped, float64(k))
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
	var out fedavg.Outcome
	if a.Adversary == nil || a.Adversary.Trains() {
		var err error
		if out, err = a.Core.Train(reply, m.vec, m.side, 0); err != nil {
			return err
		}
		if out.AuditSteps != nil {
			s.observe(m.round, fedavg.ObsAuditSteps, out.AuditSteps...)
		}
	}
	now := act.clock
	compute := d.ComputeTime(out.Steps, out.Gradients)
	if !d.Available(now, now+compute) {
		drop("was unavailable")
		return nil
	}
	if a.Adversary != nil {
		a.Adversary.Corrupt(reply, m.vec, s.cfg.Share, a.AttackStream)
	}
	act.clock += compute
	slot := m.slot
	side := out.ToServer
	sent := simMsg{kind: simReply, from: m.to, to: simServer, round: m.round, slot: slot, vec: reply, side: side}
	if c := a.Core.Compress(reply, m.vec); c != nil {
		sent.vec, sent.comp = nil, c
	}
	size := fedavg.UplinkWireSize(slot, len(reply), sent.comp, len(side), out.Report)
	s.observe(m.round, fedavg.ObsUplink, float64(size))
	s.send(sent, func() int { return size })
	return nil
}

// stalled returns the actor run's stall error: what the server waits for,
// then what the agents that did not answer say.
func (s *sim) stalled() error {
	var parts []string
	switch {
	case s.cfg.Async.Mode == fedavg.Sync && s.open:
		if missing := s.server.Missing(); len(missing) > 0 {
			names := make([]string, len(missing))
			for i, k := range missing {
				names[i] = fedavg.AgentName(k)
			}
			parts = append(parts, fmt.Sprintf("server: round %d waits for the replies of %s (collection policy %s)", s.sround, strings.Join(names, ", "), s.cfg.Collection()))
		}
	case s.cfg.Async.Mode != fedavg.Sync && s.async != nil && !s.done:
		agents, versions := s.async.Busy()
		if len(agents) > 0 {
			ps := make([]string, len(agents))
			for i, k := range agents {
				ps[i] = fmt.Sprintf("%s (version %d)", fedavg.AgentName(k), versions[i])
			}
			parts = append(parts, fmt.Sprintf("server: version %d waits for the updates of %s and has no timeout to give up on them", s.async.Version(), strings.Join(ps, ", ")))
		}
	}
	parts = append(parts, s.pool.Unanswered()...)
	msg := "run stalled: no message in flight and the scheduler has not finished"
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, "; ")
	}
	return errors.New(msg)
}
