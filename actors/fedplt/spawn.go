// Package fedplt holds the actor behaviours of the Fed-PLT family: one
// coordinator and one agent behaviour per method (Fed-PLT and the baselines
// FedPD, FedLin, TAMUNA, LED and 5GCS), each a thin wrapper around the state
// machines of maple/algorithms/fedplt, plus the family's scheduler, which
// ends the run early when the monitor says the tolerance is met.
package fedplt

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedplt"
)

// Setup is everything one run needs.
type Setup struct {
	// Config is the run's configuration, resolved (explicit steps).
	Config *fedplt.Config
	// Problem holds the agents' data and cost.
	Problem *fedplt.Problem
	// X0 are the agents' initial models (fedplt.InitialModels).
	X0 [][]float64
	// Rounds caps the number of rounds.
	Rounds int
	// Observer is the run's observer (the one passed in actors.Options); its
	// monitor decides when the run stops early.
	Observer *Observer
}

// Spawn creates the actors of a run on r — the scheduler, the coordinator
// and one agent per data set — and returns the scheduler's ID; start the run
// with r.Execute(id, &msg.Start{}).
func Spawn(r *actors.Run, s Setup) (actors.ID, error) {
	cfg, p := s.Config, s.Problem
	open := fedplt.Streams(r.Rand)
	sched := &scheduler{rounds: s.Rounds, stop: s.Observer.mon.Done}
	schedID := r.Spawn("scheduler", sched)
	parts := &parts{cfg: cfg, scheduler: schedID, agents: make(roster, cfg.Agents)}
	centre := make([]float64, p.Dim())
	for _, x := range s.X0 {
		for j, v := range x {
			centre[j] += v / float64(len(s.X0))
		}
	}
	var coordinator actors.Behaviour
	switch cfg.Method {
	case fedplt.PLT:
		coordinator = &pltCoordinator{parts: parts, core: fedplt.NewPLTCoordinator(cfg, s.X0, fedplt.NewCoordinatorSampler(cfg, open))}
	case fedplt.FedPD:
		coordinator = &fedpdCoordinator{parts: parts, core: fedplt.NewFedPDCoordinator(cfg.Agents, centre)}
	case fedplt.FedLin:
		coordinator = &fedlinCoordinator{parts: parts, core: fedplt.NewFedLinCoordinator(cfg.Agents, centre)}
	case fedplt.Tamuna:
		coordinator = &tamunaCoordinator{parts: parts, core: fedplt.NewTamunaCoordinator(cfg, centre,
			fedplt.NewCoordinatorSampler(cfg, open), open(fedplt.CoordinatorName, "epochs"))}
	case fedplt.LED:
		coordinator = &ledCoordinator{parts: parts, core: fedplt.NewLEDCoordinator(cfg.Agents, centre)}
	case fedplt.FiveGCS:
		coordinator = &fivegcsCoordinator{parts: parts, core: fedplt.NewFiveGCSCoordinator(cfg, centre, fedplt.NewCoordinatorSampler(cfg, open))}
	default:
		return 0, fmt.Errorf("unknown method %v", cfg.Method)
	}
	coordID := r.Spawn(fedplt.CoordinatorName, coordinator)
	sched.coordinator = coordID
	locals := fedplt.NewLocals(cfg, p, open)
	for i := range cfg.Agents {
		a := agentParts{coordinator: coordID, index: i}
		var b actors.Behaviour
		switch cfg.Method {
		case fedplt.PLT:
			b = &pltAgent{agentParts: a, core: fedplt.NewPLTAgent(cfg, locals[i], s.X0[i])}
		case fedplt.FedPD:
			b = &fedpdAgent{agentParts: a, core: fedplt.NewFedPDAgent(cfg, locals[i], centre)}
		case fedplt.FedLin:
			b = &fedlinAgent{agentParts: a, core: fedplt.NewFedLinAgent(cfg, p, i, locals[i])}
		case fedplt.Tamuna:
			b = &tamunaAgent{agentParts: a, core: fedplt.NewTamunaAgent(cfg, locals[i], p.Dim())}
		case fedplt.LED:
			b = &ledAgent{agentParts: a, core: fedplt.NewLEDAgent(cfg, locals[i], p.Dim())}
		case fedplt.FiveGCS:
			b = &fivegcsAgent{agentParts: a, core: fedplt.NewFiveGCSAgent(cfg, p, i, locals[i])}
		}
		parts.agents[i] = r.Spawn(fedplt.AgentName(i), b)
	}
	s.Observer.agents = parts.agents
	return schedID, nil
}

// roster lists the agents' actor IDs, ascending (they are spawned in order).
type roster []actors.ID

// index maps an actor ID back to the agent index.
func (r roster) index(id actors.ID) (int, bool) {
	i := sort.Search(len(r), func(k int) bool { return r[k] >= id })
	return i, i < len(r) && r[i] == id
}

// parts is what every coordinator behaviour shares.
type parts struct {
	cfg       *fedplt.Config
	scheduler actors.ID
	agents    roster
}

// sender returns the agent index of the message's sender.
func (p *parts) sender(ctx *actors.Context) (int, error) {
	i, ok := p.agents.index(ctx.Sender())
	if !ok {
		return 0, fmt.Errorf("reply from %s, which is not an agent", ctx.Name(ctx.Sender()))
	}
	return i, nil
}

// endRound reports the coordinator's model to the observer (which closes the
// round's metrics) and tells the scheduler the round is over.
func (p *parts) endRound(ctx *actors.Context, model []float64) {
	ctx.Observe("model", model)
	ctx.Send(p.scheduler, &msg.Done{})
}

// agentParts is what every agent behaviour shares.
type agentParts struct {
	coordinator actors.ID
	index       int
}

// charge spends an agent's ledger charge on its virtual clock and reports
// it to the observer.
func (a *agentParts) charge(ctx *actors.Context, c float64) {
	ctx.Spend(c)
	ctx.Observe("cost", []float64{c})
}

func unexpected(who string, m proto.Message) error {
	return fmt.Errorf("%s cannot handle %s", who, m.ProtoReflect().Descriptor().Name())
}

// scheduler opens rounds by sending Tick to the coordinator and, when the
// coordinator answers Done, either opens the next round or ends the run: after
// Rounds rounds, or as soon as the monitor has seen the tolerance met or the
// metric diverge (stop). The stop test is the experimenter's, outside the
// protocol, like the metrics.
type scheduler struct {
	coordinator actors.ID
	rounds      int
	round       int
	stop        func() bool
}

// Receive implements actors.Behaviour.
func (s *scheduler) Receive(ctx *actors.Context, m proto.Message) error {
	switch m.(type) {
	case *msg.Start:
		if s.round != 0 {
			return fmt.Errorf("second Start message")
		}
	case *msg.Done:
		if ctx.Round() != s.round {
			return fmt.Errorf("received Done for round %d from %s while round %d is open", ctx.Round(), ctx.Name(ctx.Sender()), s.round)
		}
		if s.round == s.rounds || s.stop() {
			ctx.Finish()
			return nil
		}
	default:
		return unexpected("scheduler", m)
	}
	s.round++
	ctx.SetRound(s.round)
	ctx.Send(s.coordinator, &msg.Tick{})
	return nil
}

// Observer feeds what the parties report to a fedplt.Monitor: agents report
// "local" (x_i), "dual" (z_i, Fed-PLT) and "cost" (their ledger charge), the
// coordinator "model" at the end of every round, which closes the round.
type Observer struct {
	mon    *fedplt.Monitor
	agents roster
}

// NewObserver returns the observer that feeds mon.
func NewObserver(mon *fedplt.Monitor) *Observer { return &Observer{mon: mon} }

// Observe implements actors.Observer.
func (o *Observer) Observe(from actors.ID, round int, key string, v []float64) {
	if key == "model" {
		o.mon.Model(v)
		o.mon.EndRound(round)
		return
	}
	i, ok := o.agents.index(from)
	if !ok {
		return
	}
	switch key {
	case "local":
		o.mon.Local(i, v)
	case "dual":
		o.mon.Dual(i, v)
	case "cost":
		o.mon.Charge(i, v[0])
	}
}
