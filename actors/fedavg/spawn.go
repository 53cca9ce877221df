package fedavg

import (
	"fmt"
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
	// Config is the algorithm's configuration.
	Config *fedavg.Config
	// Sets are the agents' local datasets, one per agent.
	Sets []*data.Set
	// Loss is the regularized loss every agent minimizes.
	Loss loss.Loss
	// W0 is the initial global model.
	W0 []float64
	// Rounds is the number of rounds (model versions of an asynchronous
	// server).
	Rounds int
	// Server names a registered server behaviour ("mean", "median", …) and
	// ServerParams are its parameters (nil: its defaults).
	Server       string
	ServerParams params.Values
	// GradientTime is the virtual compute time of one sample gradient; it
	// is ignored when Devices are given (their model charges it).
	GradientTime float64
	// Devices, if set, are the agents' devices (systems.Model.Devices): they
	// charge compute time and decide dropouts, crashes and availability;
	// the server and the agents are then network nodes (actors.Run.Place)
	// whose messages the links may lose or duplicate.
	Devices []*systems.Device
	// Agent, if set, chooses the behaviour of agent k given its honest one:
	// return a to keep it, or another behaviour (an adversary, a dropout
	// model) to replace it.
	Agent func(k int, a *Agent) actors.Behaviour
}

// Spawn creates the actors of a FedAvg run on r — the scheduler, the server
// and one agent per dataset — and returns the scheduler's ID; start the run
// with r.Execute(id, &msg.Start{}). The adversaries of Config.Attack are
// chosen here, from the run's (fedavg.AdversaryOwner, AdversaryPurpose)
// stream.
func Spawn(r *actors.Run, s Setup) (actors.ID, error) {
	factory, ok := LookupServer(s.Server)
	if !ok {
		return 0, fmt.Errorf("unknown server behaviour %q (registered: %v)", s.Server, ServerNames())
	}
	if err := s.Config.Validate(); err != nil {
		return 0, err
	}
	if s.Devices != nil && len(s.Devices) != len(s.Sets) {
		return 0, fmt.Errorf("%d devices for %d agents", len(s.Devices), len(s.Sets))
	}
	rounds := s.Rounds
	if s.Config.Async.Mode != fedavg.Sync {
		rounds = 1 // the asynchronous server finishes after Rounds versions
	}
	sched := &actors.Scheduler{Rounds: rounds}
	schedID := r.Spawn("scheduler", sched)
	p := s.ServerParams
	if p == nil {
		if spec, ok := params.Lookup(ServerSlot, s.Server); ok {
			p = spec.Defaults()
		}
	}
	parts := ServerParts{
		Core:      fedavg.NewServer(s.Config, s.W0, r.Rand(fedavg.ServerName, "participation")),
		Config:    s.Config,
		Scheduler: schedID,
		Agents:    make([]actors.ID, len(s.Sets)),
		Params:    p,
		Rounds:    s.Rounds,
	}
	// The server must exist before the agents (they need its ID) and the
	// agents before the server runs (it needs theirs); the server is spawned
	// first and its agent table filled in below.
	serverID := r.Spawn(fedavg.ServerName, factory(parts))
	sched.Targets = []actors.ID{serverID}
	if s.Devices != nil {
		r.Place(serverID, nil)
	}
	attack := &s.Config.Attack
	bad := fedavg.Adversaries(func() *rand.Rand { return r.Rand(fedavg.AdversaryOwner, fedavg.AdversaryPurpose) }, len(s.Sets), attack.Fraction)
	for k, set := range s.Sets {
		name := fedavg.AgentName(k)
		streams := fedavg.Streams{Schedule: r.Rand(name, "schedule"), Batch: r.Rand(name, "batch")}
		if s.Config.NoiseStd > 0 {
			streams.Noise = r.Rand(name, "noise")
		}
		adversary := attack.Kind != fedavg.NoAttack && bad[k]
		if adversary && attack.Kind == fedavg.LabelFlip {
			set = fedavg.FlipLabels(set, s.Loss)
		}
		core := fedavg.NewAgent(s.Config, set, s.Loss, streams)
		a := &Agent{Core: core, Share: s.Config.Share, Server: serverID, GradientTime: s.GradientTime}
		if s.Devices != nil {
			a.Device = s.Devices[k]
		}
		if adversary {
			a.Attack = attack
		}
		var b actors.Behaviour = a
		if s.Agent != nil {
			b = s.Agent(k, a)
		}
		parts.Agents[k] = r.Spawn(name, b)
		if s.Devices != nil {
			r.Place(parts.Agents[k], s.Devices[k])
		}
	}
	return schedID, nil
}
