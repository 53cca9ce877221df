package graphfl

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"maple/actors"
	afedavg "maple/actors/fedavg"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/graphfl"
	"maple/algorithms/loss"
)

// SchedulerName is the actor name of the scheduler.
const SchedulerName = "scheduler"

// Setup is everything one graph federated learning run needs.
type Setup struct {
	// Config is the number of servers, the clients' learner and the privacy
	// schemes at both levels.
	Config graphfl.Config
	// A is the P×P combination matrix of the servers, A.At(m, p) = a_mp, the
	// weight server p gives server m (left-stochastic, primitive).
	A *mat.Dense
	// Sets are the clients' datasets, Sets[p·K + k] for client k of server p.
	Sets []*data.Set
	// Loss is the regularized loss every client minimizes.
	Loss loss.Loss
	// W0 is the initial model of every server.
	W0 []float64
	// Rounds is the number of rounds, at least 1.
	Rounds int
	// GradientTime is the virtual compute time of one sample gradient.
	GradientTime float64
}

// Network validates the setup's configuration and matrix and returns the
// server network the servers share.
func (s *Setup) Network() (*graphfl.Network, error) {
	return graphfl.NewNetwork(s.A, s.Config)
}

// Spawn creates the actors of a run on r — the scheduler, named "scheduler",
// then the P servers (graphfl.ServerName), so that server p's ID is the
// scheduler's ID + 1 + p, then the clients of server 0, of server 1, … (named
// after their dataset, graphfl.ClientName) — and returns the scheduler's ID;
// start the run with r.Execute(id, &msg.Start{}). Every state machine is
// built, and every input checked, before the first actor is spawned.
func Spawn(r *actors.Run, s Setup) (actors.ID, error) {
	if s.Rounds < 1 {
		return 0, fmt.Errorf("%d rounds; a run needs at least 1", s.Rounds)
	}
	if !(s.GradientTime >= 0) || math.IsInf(s.GradientTime, 1) {
		return 0, fmt.Errorf("gradient compute time %g must be non-negative and finite", s.GradientTime)
	}
	net, err := s.Network()
	if err != nil {
		return 0, err
	}
	P, K, M := net.Servers(), s.Config.Clients.Agents, len(s.W0)
	if len(s.Sets) != P*K {
		return 0, fmt.Errorf("%d datasets for %d servers of %d clients", len(s.Sets), P, K)
	}
	fed := s.Config.Clients // shared by every server and client of the run
	streams := func(owner, purpose string) *rand.Rand { return r.Rand(owner, purpose) }
	servers := make([]*Server, P)
	for p := range servers {
		x, err := graphfl.NewExchange(net, p, M, streams)
		if err != nil {
			return 0, err
		}
		servers[p] = &Server{
			ServerParts: afedavg.ServerParts{
				Core:   fedavg.NewServer(&fed, s.W0, r.Rand(graphfl.ServerName(p, P), graphfl.StreamParticipation)),
				Config: &fed,
				Agents: afedavg.AgentIDs{Count: K},
			},
			Exchange: x, Servers: P,
		}
	}
	clients := make([]*fedavg.Agent, P*K)
	for j := range clients {
		clients[j] = fedavg.NewAgent(&fed, s.Sets[j], s.Loss, graphfl.ClientStreams(&fed, graphfl.ClientName(0, j, K), streams))
	}
	sched := &actors.Scheduler{Rounds: s.Rounds}
	schedID := r.Spawn(SchedulerName, sched)
	for p, srv := range servers {
		srv.Scheduler, srv.First = schedID, schedID+1
		sched.Targets = append(sched.Targets, r.Spawn(graphfl.ServerName(p, P), srv))
	}
	for j, core := range clients {
		p, k := j/K, j%K
		b := &afedavg.Agent{Member: &fedavg.Member{K: k, Core: core}, Share: fed.Share, Server: sched.Targets[p], GradientTime: s.GradientTime}
		id := r.Spawn(graphfl.ClientName(p, k, K), b)
		if k == 0 {
			servers[p].Agents.First = id // a server's clients are spawned one after another
		}
	}
	return schedID, nil
}
