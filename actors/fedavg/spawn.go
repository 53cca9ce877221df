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
	// ServerParams are its parameters (nil: its defaults); Spawn applies
	// what it runs to a copy of Config (ConfigureServer).
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
// with r.Execute(id, &msg.Start{}). The adversaries of Config.Adversary are
// chosen here, from the run's (fedavg.AdversaryOwner, AdversaryPurpose)
// stream.
func Spawn(r *actors.Run, s Setup) (actors.ID, error) {
	cfg := *s.Config
	p, err := ConfigureServer(&cfg, s.Server, s.ServerParams)
	if err != nil {
		return 0, err
	}
	if err := cfg.Validate(); err != nil {
		return 0, err
	}
	s.Config = &cfg
	server := servers[s.Server]
	if s.Devices != nil && len(s.Devices) != len(s.Sets) {
		return 0, fmt.Errorf("%d devices for %d agents", len(s.Devices), len(s.Sets))
	}
	rounds := s.Rounds
	if s.Config.Async.Mode != fedavg.Sync {
		rounds = 1 // the asynchronous server finishes after Rounds versions
	}
	sched := &actors.Scheduler{Rounds: rounds}
	schedID := r.Spawn("scheduler", sched)
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
	var b actors.Behaviour = &ruleServer{parts}
	if server.Behaviour != nil {
		b = server.Behaviour(parts)
	}
	serverID := r.Spawn(fedavg.ServerName, b)
	sched.Targets = []actors.ID{serverID}
	if s.Devices != nil {
		r.Place(serverID, nil)
	}
	bad := cfg.ChooseAdversaries(func() *rand.Rand { return r.Rand(fedavg.AdversaryOwner, fedavg.AdversaryPurpose) }, len(s.Sets))
	for k, set := range s.Sets {
		name := fedavg.AgentName(k)
		a := &Agent{Share: cfg.Share, Server: serverID, GradientTime: s.GradientTime}
		if bad[k] {
			a.Adversary, a.AttackStream = cfg.Adversary, r.Rand(name, fedavg.StreamAttack)
			set = a.Adversary.Poison(set, s.Loss)
		}
		a.Core = fedavg.NewAgent(&cfg, set, s.Loss, fedavg.AgentStreams(&cfg, func(purpose string) *rand.Rand { return r.Rand(name, purpose) }))
		if s.Devices != nil {
			a.Device = s.Devices[k]
		}
		var ab actors.Behaviour = a
		if s.Agent != nil {
			ab = s.Agent(k, a)
		}
		parts.Agents[k] = r.Spawn(name, ab)
		if s.Devices != nil {
			r.Place(parts.Agents[k], s.Devices[k])
		}
	}
	return schedID, nil
}
