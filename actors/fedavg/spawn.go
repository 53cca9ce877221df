package fedavg

import (
	"fmt"
	"math"
	"math/rand/v2"

	"maple/actors"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/algorithms/systems"
	"maple/internal/params"
)

// Setup is everything one FedAvg run needs.
type Setup struct {
	// Config is the algorithm's configuration; its Hold says how the agents
	// are held between their tasks (fedavg.Pool).
	Config *fedavg.Config
	// Data gives the agents' local datasets, one per agent.
	Data data.Source
	// Loss is the regularized loss every agent minimizes.
	Loss loss.Loss
	// W0 is the initial global model.
	W0 []float64
	// Rounds is the number of rounds (model versions of an asynchronous
	// server).
	Rounds int
	// Server names a registered server behaviour ("mean", "median", …) and
	// ServerParams are its parameters (nil: its defaults); Spawn applies
	// what it runs to a copy of Config (ConfigureServer).
	Server       string
	ServerParams params.Values
	// GradientTime is the virtual compute time of one sample gradient; it
	// is ignored when Fleet is given (its devices charge it).
	GradientTime float64
	// Fleet, if set, builds the agents' devices (systems.Model.Fleet, with
	// the run's seed): they charge compute time and decide dropouts,
	// crashes and availability; the server and the agents are then network
	// nodes (actors.Run.Place) whose messages the links may lose or
	// duplicate.
	Fleet *systems.Fleet
	// Agent, if set, chooses the behaviour of agent k given its honest one
	// whenever the agent is woken: return a to keep it, or another
	// behaviour (an adversary, a dropout model) to replace it. Under
	// secure aggregation the honest behaviour is the protocol's client on
	// a; one that embeds a secAggClient is held, not rebuilt, while its
	// round's protocol is under way.
	Agent func(k int, a *Agent) actors.Behaviour
}

// Spawn creates the actors of a FedAvg run on r — the scheduler, the server
// and the agents, held lazily: agent k's actor exists while a message to it
// is in flight or being handled, its state in between is kept by a
// fedavg.Pool — and returns the scheduler's ID; start the run with
// r.Execute(id, &msg.Start{}). The adversaries of Config.Adversary are
// chosen by the pool, from the run's (fedavg.AdversaryOwner,
// AdversaryPurpose) stream.
func Spawn(r *actors.Run, s Setup) (actors.ID, error) {
	cfg := *s.Config
	p, err := ConfigureServer(&cfg, s.Server, s.ServerParams)
	if err != nil {
		return 0, err
	}
	if err := cfg.Validate(); err != nil {
		return 0, err
	}
	server := servers[s.Server]
	K := s.Data.Agents()
	if K > MaxAgents {
		return 0, fmt.Errorf("%d agents, more than the %d a run may have", K, MaxAgents)
	}
	if s.Fleet != nil && s.Fleet.Agents() != K {
		return 0, fmt.Errorf("devices for %d agents, data for %d", s.Fleet.Agents(), K)
	}
	rounds := s.Rounds
	if cfg.Async.Mode != fedavg.Sync {
		rounds = 1 // the asynchronous server finishes after Rounds versions
	}
	sched := &actors.Scheduler{Rounds: rounds}
	schedID := r.Spawn("scheduler", sched)
	parts := ServerParts{
		Core:      fedavg.NewServer(&cfg, s.W0, r.Rand(fedavg.ServerName, "participation")),
		Config:    &cfg,
		Scheduler: schedID,
		// The agents come right after the server, in a lazy range.
		Agents: AgentIDs{First: schedID + 2, Count: K},
		Params: p,
		Rounds: s.Rounds,
	}
	parts.Core.UseStreams(func(purpose string) *rand.Rand { return r.Rand(fedavg.ServerName, purpose) })
	if l := fedavg.NewLedger(&cfg, len(s.W0), fedavg.LedgerSamples(&cfg, s.Data)); l.Active() {
		parts.Ledger = l
	}
	var b actors.Behaviour = newRuleServer(parts)
	switch {
	case cfg.SecAgg != nil:
		b = newSecAggServer(parts) // secagg.go
	case server.Behaviour != nil:
		b = server.Behaviour(parts)
	}
	serverID := r.Spawn(fedavg.ServerName, b)
	sched.Targets = []actors.ID{serverID}
	if s.Fleet != nil {
		r.Place(serverID, nil)
	}
	agents := &agentRange{pool: fedavg.NewPool(&cfg, s.Data, s.Loss, r.RunSeed(), s.Fleet), share: cfg.Share,
		server: serverID, gradientTime: s.GradientTime, wrap: s.Agent, awake: map[int]*Agent{}}
	if cfg.SecAgg != nil {
		agents.secAgg, agents.held = &cfg, map[int]actors.Behaviour{}
	}
	if first := r.SpawnLazy(K, s.Fleet != nil, agents); first != parts.Agents.First {
		panic(fmt.Sprintf("fedavg: agents spawned from ID %d, not %d", first, parts.Agents.First))
	}
	return schedID, nil
}

// MaxAgents is the largest number of agents a run may have: actor IDs are
// 32-bit, and the scheduler and the server take the first two.
const MaxAgents = math.MaxInt32 - 2

// AgentIDs are the actor IDs of a run's agents, consecutive: agent k's is
// First + k.
type AgentIDs struct {
	First actors.ID
	Count int
}

// ID returns agent k's actor ID.
func (a AgentIDs) ID(k int) actors.ID { return a.First + actors.ID(k) }

// Index returns the agent whose actor ID is id, and whether id is an agent's.
func (a AgentIDs) Index(id actors.ID) (int, bool) {
	k := int(id - a.First)
	return k, id >= a.First && k < a.Count
}

// agentRange holds a run's agents lazily (actors.Lazy) through the pool.
//
// Under secure aggregation a client keeps state between the protocol's
// phases — its keys, its peers' shares, its masked input, its protocol
// stream in use — while it has no message to handle: an agent parked with
// its round's protocol under way (a behaviour that is or embeds a
// secAggClient, inRound) is held whole in held, pool member and behaviour,
// and Wake returns it; it goes to the pool once its part of the round is
// over, or, if the round ended without it (it missed a phase, or the round
// failed), when an agent of a later round is held. So held only ever has
// clients of one round, at most its draws, and a run without secure
// aggregation holds nothing more than before.
type agentRange struct {
	pool         *fedavg.Pool
	share        fedavg.Share
	server       actors.ID
	gradientTime float64
	wrap         func(k int, a *Agent) actors.Behaviour
	awake        map[int]*Agent
	start        []float64 // the agents' Start scratch

	secAgg    *fedavg.Config           // the run's configuration under secure aggregation, nil otherwise
	held      map[int]actors.Behaviour // the clients parked in a round's protocol
	heldRound int                      // the round of held's clients
}

// Name implements actors.Lazy.
func (g *agentRange) Name(k int) string { return fedavg.AgentName(k) }

// Wake implements actors.Lazy.
func (g *agentRange) Wake(k int) (actors.Behaviour, *systems.Device) {
	if b := g.held[k]; b != nil {
		delete(g.held, k)
		return b, g.awake[k].Device
	}
	m := g.pool.Wake(k)
	a := &Agent{Member: m, Share: g.share, Server: g.server, GradientTime: g.gradientTime, Start: &g.start}
	g.awake[k] = a
	var b actors.Behaviour = a
	if g.secAgg != nil {
		b = &secAggClient{Agent: a, Config: g.secAgg, Slot: -1}
	}
	if g.wrap != nil {
		b = g.wrap(k, a)
	}
	return b, m.Device
}

// Park implements actors.Lazy: a secure-aggregation client in its round's
// protocol is held whole, any other agent parked in the pool.
func (g *agentRange) Park(k int, b actors.Behaviour) {
	if c, ok := b.(inProtocol); ok && g.held != nil && c.inRound() {
		if round := c.protocolRound(); round > g.heldRound {
			// The clients still held from an earlier round will not be
			// sent another message of it: their protocol is over.
			for j := range g.held {
				g.park(j)
			}
			g.heldRound = round
		}
		g.held[k] = b
		return
	}
	g.park(k)
}

// park lets agent k go to the pool.
func (g *agentRange) park(k int) {
	delete(g.held, k)
	g.pool.Park(g.awake[k].Member)
	delete(g.awake, k)
}

// Waiting implements actors.LazyWaiter: the agents that left a task
// unanswered say so, so that a stalled run names them.
func (g *agentRange) Waiting() []string { return g.pool.Unanswered() }
