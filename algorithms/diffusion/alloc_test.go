package diffusion

import (
	"testing"

	"maple/privacy/pairmask"
	"maple/topology"
)

// router runs a network of state machines without actors: messages are
// queued in a reused slab, with their buffers kept between uses, and
// delivered in send order.
type router struct {
	t      *testing.T
	agents []*Agent
	ports  []port
	queue  []envelope
	iter   int
	done   int
}

type envelope struct {
	from, to int
	m        Message
}

// port is agent from's outbox.
type port struct {
	r    *router
	from int
}

func (p *port) Send(m *Message) {
	r := p.r
	if len(r.queue) == cap(r.queue) {
		r.queue = append(r.queue, envelope{})
	} else {
		r.queue = r.queue[:len(r.queue)+1]
	}
	e := &r.queue[len(r.queue)-1]
	values, key, partners := e.m.Values, e.m.Key, e.m.Partners
	e.from, e.to, e.m = p.from, m.Peer, *m
	e.m.Peer = p.from
	e.m.Values = append(values[:0], m.Values...)
	e.m.Key = append(key[:0], m.Key...)
	e.m.Partners = append(partners[:0], m.Partners...)
}
func (p *port) Spend(int)                {}
func (p *port) Warn(string)              {}
func (p *port) Report(string, []float64) {}

func newRouter(t *testing.T, agents []*Agent) *router {
	r := &router{t: t, agents: agents}
	for p := range agents {
		r.ports = append(r.ports, port{r: r, from: p})
	}
	return r
}

func (r *router) count(done bool, err error) {
	if err != nil {
		r.t.Fatal(err)
	}
	if done {
		r.done++
	}
}

// round runs one iteration of every agent to completion.
func (r *router) round() {
	r.iter++
	r.queue, r.done = r.queue[:0], 0
	for p, a := range r.agents {
		r.count(a.Begin(r.iter, &r.ports[p]))
	}
	for i := 0; i < len(r.queue); i++ {
		e := &r.queue[i]
		r.count(r.agents[e.to].Step(r.iter, &e.m, &r.ports[e.to]))
	}
	if r.done != len(r.agents) {
		r.t.Fatalf("iteration %d: %d of %d agents completed", r.iter, r.done, len(r.agents))
	}
}

// Once set up, an iteration of the state machines allocates nothing: every
// per-message buffer (payloads, masks, inboxes, noise) is reused. The router
// itself reuses its slab, so any allocation counted is the agents'.
func TestSteadyStateDoesNotAllocate(t *testing.T) {
	A, sets, l := regressionNetwork(t, topology.Averaging)
	all := [3]bool{true, true, true}
	for name, pr := range map[string]Privacy{
		"none":       {},
		"random":     {Scheme: Random, Std: 0.1, SelfNoise: true},
		"gh":         {Scheme: GraphHomomorphic, Std: 0.1},
		"lgh-secure": {Scheme: LocalGraphHomomorphic, Std: 0.1},
		"lgh-oracle": {Scheme: LocalGraphHomomorphic, Std: 0.1, Keys: pairmask.Oracle},
		"lgh-paper":  {Scheme: LocalGraphHomomorphic, Std: 0.1, Keys: pairmask.Paper},
	} {
		cfg := Config{Strategy: General, Stages: all, StepSize: 0.05, Gradient: Batch, Batch: 5, Privacy: pr}
		net, err := NewNetwork(A, cfg)
		if err != nil {
			t.Fatal(err)
		}
		agents := make([]*Agent, len(sets))
		for p := range agents {
			if agents[p], err = NewAgent(net, p, sets[p], l, make([]float64, 3), SeedStreams(2)); err != nil {
				t.Fatal(err)
			}
		}
		r := newRouter(t, agents)
		r.round() // set-up and slab growth
		r.round()
		if n := testing.AllocsPerRun(5, r.round); n != 0 {
			t.Errorf("%s: %v allocations per iteration", name, n)
		}
	}
}
