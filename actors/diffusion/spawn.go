package diffusion

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"maple/actors"
	"maple/algorithms/data"
	"maple/algorithms/diffusion"
	"maple/algorithms/loss"
	"maple/algorithms/systems"
)

// SchedulerName is the actor name of the scheduler.
const SchedulerName = "scheduler"

// Setup is everything one decentralized run needs.
type Setup struct {
	// Config is the recursion, step size, gradient oracle and privacy scheme.
	Config diffusion.Config
	// A is the P×P combination matrix, A.At(m, p) = a_mp, the weight receiver
	// p gives sender m (left-stochastic, primitive).
	A *mat.Dense
	// Sets are the agents' local datasets, Sets[p] for agent p.
	Sets []*data.Set
	// Loss is the regularized loss every agent minimizes.
	Loss loss.Loss
	// W0 is the initial model of every agent.
	W0 []float64
	// Iterations is the number of iterations (rounds), at least 1.
	Iterations int
	// GradientTime is the virtual compute time of one sample gradient.
	GradientTime float64
	// Devices, if set, are the agents' devices: they charge each gradient
	// step's compute time (replacing GradientTime).
	Devices []*systems.Device
	// Dynamics, if set, makes the graph time-varying: a scheduler draws each
	// round's live graph (with its own devices for the agents that are
	// down) and opens the round with DiffusionLinks instead of Tick.
	Dynamics *diffusion.Dynamics
	// Async, if set, runs asynchronous ATC (diffusion.AsyncAgent): agents
	// combine whatever has arrived Wait seconds after their compute, for
	// Iterations steps each.
	Async *Async
}

// Async configures asynchronous agents.
type Async struct {
	// Wait is the virtual time between the end of an agent's compute and
	// its combine.
	Wait float64
}

// Network validates the setup's configuration and matrix and returns the
// precomputed network view the agents share.
func (s *Setup) Network() (*diffusion.Network, error) {
	return diffusion.NewNetwork(s.A, s.Config)
}

// UnmaskedEdges lists the edges whose messages local graph-homomorphic masks
// cannot protect (into receivers with fewer than two neighbours besides
// themselves), for the run's summary; empty for the other schemes. The run
// also warns about each such receiver.
func (s *Setup) UnmaskedEdges() ([]diffusion.Edge, error) {
	net, err := s.Network()
	if err != nil {
		return nil, err
	}
	return net.Unmasked(), nil
}

// SetupBounds returns, per agent, the paper's bound |N_k| + Σ_{j∈N_k}|N_j|/2
// on the LGH set-up messages it sends (diffusion.Network.SetupBound), to set
// beside the counts the agents report under KeySetup.
func (s *Setup) SetupBounds() ([]float64, error) {
	net, err := s.Network()
	if err != nil {
		return nil, err
	}
	bounds := make([]float64, net.Agents())
	for k := range bounds {
		bounds[k] = net.SetupBound(k)
	}
	return bounds, nil
}

// Spawn creates the actors of a decentralized run on r — the scheduler, named
// "scheduler", then agent/0 … agent/P−1, so that agent p's ID is the
// scheduler's ID + 1 + p — and returns the scheduler's ID; start the run with
// r.Execute(id, &msg.Start{}). Every state machine is built, and every input
// checked, before the first actor is spawned.
func Spawn(r *actors.Run, s Setup) (actors.ID, error) {
	if s.Iterations < 1 {
		return 0, fmt.Errorf("%d iterations; a run needs at least 1", s.Iterations)
	}
	if !(s.GradientTime >= 0) || math.IsInf(s.GradientTime, 1) {
		return 0, fmt.Errorf("gradient compute time %g must be non-negative and finite", s.GradientTime)
	}
	net, err := s.Network()
	if err != nil {
		return 0, err
	}
	if len(s.Sets) != net.Agents() {
		return 0, fmt.Errorf("%d datasets for %d agents", len(s.Sets), net.Agents())
	}
	streams := func(owner, purpose string) *rand.Rand { return r.Rand(owner, purpose) }
	if s.Devices != nil && len(s.Devices) != net.Agents() {
		return 0, fmt.Errorf("%d devices for %d agents", len(s.Devices), net.Agents())
	}
	if s.Async != nil {
		return spawnAsync(r, s, net, streams)
	}
	cores := make([]*diffusion.Agent, net.Agents())
	for p := range cores {
		if cores[p], err = diffusion.NewAgent(net, p, s.Sets[p], s.Loss, s.W0, streams); err != nil {
			return 0, err
		}
	}
	var (
		schedID actors.ID
		targets *[]actors.ID
	)
	if s.Dynamics != nil {
		process, err := diffusion.NewLinkProcess(s.A, *s.Dynamics, streams)
		if err != nil {
			return 0, err
		}
		ls := &linkScheduler{process: process, net: net, rounds: s.Iterations}
		schedID, targets = r.Spawn(SchedulerName, ls), &ls.agents
	} else {
		sched := &actors.Scheduler{Rounds: s.Iterations}
		schedID, targets = r.Spawn(SchedulerName, sched), &sched.Targets
	}
	for p, core := range cores {
		b := &Agent{Core: core, Scheduler: schedID, First: schedID + 1, Agents: len(cores), GradientTime: s.GradientTime}
		id := r.Spawn(diffusion.AgentName(p), b)
		if s.Devices != nil {
			b.Device = s.Devices[p]
			r.Place(id, s.Devices[p])
		}
		*targets = append(*targets, id)
	}
	return schedID, nil
}

// spawnAsync creates the actors of an asynchronous run: a scheduler that
// starts every agent with one Tick and waits for their Done, and the
// asynchronous agents, placed on their devices.
func spawnAsync(r *actors.Run, s Setup, net *diffusion.Network, streams diffusion.Streams) (actors.ID, error) {
	cores := make([]*diffusion.AsyncAgent, net.Agents())
	for p := range cores {
		var err error
		if cores[p], err = diffusion.NewAsyncAgent(net, p, s.Sets[p], s.Loss, s.W0, streams); err != nil {
			return 0, err
		}
	}
	sched := &actors.Scheduler{Rounds: 1}
	schedID := r.Spawn(SchedulerName, sched)
	for p, core := range cores {
		a := &asyncAgent{core: core, scheduler: schedID, first: schedID + 1, agents: len(cores), steps: s.Iterations,
			wait: s.Async.Wait, gradient: s.GradientTime}
		id := r.Spawn(diffusion.AgentName(p), a)
		if s.Devices != nil {
			a.device = s.Devices[p]
			r.Place(id, s.Devices[p])
		}
		sched.Targets = append(sched.Targets, id)
	}
	return schedID, nil
}
