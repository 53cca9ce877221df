package diffusion

import (
	"context"
	"fmt"
	"math/rand/v2"

	"google.golang.org/protobuf/encoding/protowire"

	"maple/algorithms/rng"
	"maple/algorithms/systems"
)

// AsyncOptions configure an asynchronous run.
type AsyncOptions struct {
	// Model is the systems model: link delays, losses and duplicates,
	// compute times; nil is the ideal network.
	Model *systems.Model
	// Wait is how long after its compute time an agent combines.
	Wait float64
	// Observe, if set, receives each agent's model and time after each
	// combine (keys "model" and "time", round = the agent's step) and the
	// engine's KeyLost observations, as the actor run's observer would.
	Observe func(round, agent int, key string, v []float64)
}

// Observation keys of an asynchronous run.
const (
	// KeyAsyncModel and KeyAsyncTime report an agent's model and virtual
	// time after each combine; a crashed agent reports its last model for
	// every step it misses.
	KeyAsyncModel = "model"
	KeyAsyncTime  = "time"
	// KeyLost mirrors the actor engine's observation of a lost message
	// (actors.KeyLost); the value is the receiver.
	KeyLost = "engine/lost"
)

// AsyncReference runs asynchronous ATC diffusion without actors: a
// discrete-event simulation that sends what the actor run sends — the
// scheduler's Tick to every agent, the agents' shares and their wake-up
// timers, their Done — with the same link delays, losses and duplicates
// drawn from the same streams, delivers it in the engine's order (virtual
// time, messages before timers, then send order) and lets each agent handle
// it with the same state machine (AsyncAgent). Its iterates and times are
// therefore the actor run's.
func AsyncReference(cfg Config, prob Problem, runSeed uint64, steps int, opt AsyncOptions) error {
	return AsyncReferenceContext(context.Background(), cfg, prob, runSeed, steps, opt)
}

// AsyncReferenceContext is AsyncReference, stopping before its next event
// once ctx is done, with an error wrapping ctx.Err(); it changes nothing
// else, so that a run that is not interrupted has AsyncReference's iterates.
func AsyncReferenceContext(ctx context.Context, cfg Config, prob Problem, runSeed uint64, steps int, opt AsyncOptions) error {
	net, err := NewNetwork(prob.A, cfg)
	if err != nil {
		return err
	}
	P := net.Agents()
	if len(prob.Sets) != P {
		return fmt.Errorf("%d datasets for %d agents", len(prob.Sets), P)
	}
	m := opt.Model
	if m == nil {
		m = &systems.Model{}
	}
	s := &asyncSim{ctx: ctx, net: net, m: m, opt: opt, steps: steps, runSeed: runSeed, fifo: systems.FIFO{},
		clock: make([]float64, P+1), jitter: make([]*rand.Rand, P+1), faults: make([]*rand.Rand, P+1),
		devices: m.Devices(runSeed, P, AgentName), crashed: make([]bool, P)}
	streams := SeedStreams(runSeed)
	for p := range P {
		a, err := NewAsyncAgent(net, p, prob.Sets[p], prob.Loss, prob.W0, streams)
		if err != nil {
			return err
		}
		s.agents = append(s.agents, a)
	}
	return s.run()
}

// asyncEvent is a message or timer in flight; actor 0 is the scheduler and
// agent p is actor p+1, as in the actor run.
type asyncEvent struct {
	kind     int // asyncTick, asyncShare, asyncWake, asyncDone
	from, to int
	round    int
	values   []float64
	lost     bool
}

const (
	asyncTick = iota
	asyncShare
	asyncWake
	asyncDone
)

type asyncSim struct {
	ctx     context.Context
	net     *Network
	m       *systems.Model
	opt     AsyncOptions
	steps   int
	runSeed uint64
	agents  []*AsyncAgent
	devices []*systems.Device
	crashed []bool

	queue  systems.Queue[asyncEvent]
	fifo   systems.FIFO
	clock  []float64
	jitter []*rand.Rand
	faults []*rand.Rand
	done   int
	// the agent handling an event, its round, and the outbox it uses
	cur  int
	sent int
}

func (s *asyncSim) name(actor int) string {
	if actor == 0 {
		return "scheduler"
	}
	return AgentName(actor - 1)
}

func (s *asyncSim) stream(streams []*rand.Rand, actor int, purpose string) *rand.Rand {
	if streams[actor] == nil {
		streams[actor] = rng.New(s.runSeed, s.name(actor), purpose)
	}
	return streams[actor]
}

// send mirrors actors.Run.send; agents are network nodes, the scheduler is
// not.
func (s *asyncSim) send(e asyncEvent, size int) {
	base := systems.Link{Latency: s.m.Latency, Jitter: s.m.Jitter, Bandwidth: s.m.Bandwidth, Loss: s.m.Loss, Duplicate: s.m.Duplicate}
	var l systems.Link
	if e.from == 0 || e.to == 0 {
		var dev *systems.Device
		if e.from != 0 {
			dev = s.devices[e.from-1]
		} else {
			dev = s.devices[e.to-1]
		}
		if e.from == 0 {
			l = base.Between(nil, dev, false)
		} else {
			l = base.Between(dev, nil, false)
		}
	} else {
		l = base.Between(s.devices[e.from-1], s.devices[e.to-1], true)
	}
	if l.Bandwidth == 0 {
		size = 0
	}
	d := l.Delay(size, func() *rand.Rand { return s.stream(s.jitter, e.from, systems.StreamLatency) })
	copies := l.Copies(func() *rand.Rand { return s.stream(s.faults, e.from, systems.StreamFaults) })
	t := s.clock[e.from] + d
	if l.Reorders() {
		t = s.fifo.Arrive(e.from, e.to, t)
	}
	e.lost = copies == 0
	s.queue.Push(t, false, e)
	if copies == 2 {
		s.queue.Push(t+d, false, e)
	}
}

func (s *asyncSim) run() error {
	for p := range s.agents {
		s.send(asyncEvent{kind: asyncTick, from: 0, to: p + 1, round: 1}, 0)
	}
	for s.queue.Len() > 0 && s.done < len(s.agents) {
		if err := s.ctx.Err(); err != nil {
			return fmt.Errorf("interrupted: %w", err)
		}
		t, e := s.queue.Pop()
		if e.lost {
			s.observe(e.round, e.from-1, KeyLost, float64(e.to))
			continue
		}
		s.clock[e.to] = max(s.clock[e.to], t)
		if e.to == 0 {
			s.done++ // a Done: the scheduler finishes with the last one
			continue
		}
		p := e.to - 1
		if s.crashed[p] {
			continue
		}
		a := s.agents[p]
		switch e.kind {
		case asyncTick:
			s.adapt(p)
		case asyncShare:
			in := Message{Kind: Share, Peer: e.from - 1, Stage: Stage2, Values: e.values}
			if err := a.Receive(e.round, &in); err != nil {
				return err
			}
		case asyncWake:
			a.Combine()
			s.observe(a.Steps(), p, KeyAsyncTime, s.clock[e.to])
			s.observe(a.Steps(), p, KeyAsyncModel, a.Model()...)
			if a.Steps() == s.steps {
				s.send(asyncEvent{kind: asyncDone, from: e.to, to: 0, round: 1}, 0)
				continue
			}
			s.adapt(p)
		}
	}
	if s.done < len(s.agents) {
		return fmt.Errorf("run stalled: no message in flight and the scheduler has not finished")
	}
	return nil
}

// adapt mirrors the actor's next step: a crash stops the agent (its last
// model stands for the steps it misses), a dropout silences the step.
func (s *asyncSim) adapt(p int) {
	a, d := s.agents[p], s.devices[p]
	step := a.Steps() + 1
	if d.Crashed(step) {
		s.crashed[p] = true
		for k := step; k <= s.steps; k++ {
			s.observe(k, p, KeyAsyncTime, s.clock[p+1])
			s.observe(k, p, KeyAsyncModel, a.Model()...)
		}
		s.send(asyncEvent{kind: asyncDone, from: p + 1, to: 0, round: 1}, 0)
		return
	}
	silent := d.DropsOut()
	s.cur, s.sent = p, step
	a.Adapt(asyncBox{s}, silent)
	s.queue.Push(s.clock[p+1]+s.opt.Wait, true, asyncEvent{kind: asyncWake, from: p + 1, to: p + 1, round: step})
}

func (s *asyncSim) observe(round, agent int, key string, v ...float64) {
	if s.opt.Observe != nil {
		s.opt.Observe(round, agent, key, v)
	}
}

// asyncBox is the outbox of the agent the simulation is running.
type asyncBox struct{ s *asyncSim }

// Send implements Outbox.
func (b asyncBox) Send(m *Message) {
	s := b.s
	values := append([]float64(nil), m.Values...)
	s.send(asyncEvent{kind: asyncShare, from: s.cur + 1, to: m.Peer + 1, round: s.sent, values: values}, shareWireSize(m.Stage, len(values)))
}

// Spend implements Outbox: one gradient step of n sample gradients.
func (b asyncBox) Spend(n int) {
	s := b.s
	s.clock[s.cur+1] += s.devices[s.cur].ComputeTime(1, n)
}

// Warn implements Outbox.
func (asyncBox) Warn(string) {}

// Report implements Outbox.
func (asyncBox) Report(string, []float64) {}

// shareWireSize is the length of the protobuf encoding of a StageShare of
// stage with n values, as proto.Size computes it.
func shareWireSize(stage, n int) int {
	size := 0
	if stage != 0 {
		size += protowire.SizeTag(1) + protowire.SizeVarint(uint64(stage))
	}
	if n > 0 {
		size += protowire.SizeTag(2) + protowire.SizeBytes(8*n)
	}
	return size
}

// ShareWireSize exposes shareWireSize to the actor tests, which compare it
// with the protobuf library's.
func ShareWireSize(stage, n int) int { return shareWireSize(stage, n) }
