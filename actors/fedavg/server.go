// Package fedavg holds the actor behaviours of federated averaging: the
// server, which samples agents and combines their replies, and the agents,
// which train locally. Each is a thin wrapper around the state machines of
// maple/algorithms/fedavg.
//
// Server behaviours are pluggable: the scenario's algorithm.server names one
// registered with RegisterServer. "mean" (eq. 1.31) and "median" (a
// coordinate-wise median, robust to outlying replies) are built in; median.go
// is the worked example of docs/writing-behaviours.md.
package fedavg

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// ServerParts is what every server behaviour shares: the server state
// machine, the IDs it talks to, and the common half of the protocol.
type ServerParts struct {
	// Core is the server's state machine: global model, sampling, replies.
	Core *fedavg.Server
	// Config is the run's FedAvg configuration.
	Config *fedavg.Config
	// Scheduler is the actor that opens rounds; Agents[k] is agent k's actor.
	Scheduler actors.ID
	Agents    []actors.ID
	// Params are the server behaviour's parameters, as the scenario set
	// them (every declared parameter present).
	Params params.Values
	// Rounds is the number of rounds (model versions) of the run.
	Rounds int

	round int  // the round in progress
	open  bool // its replies are being collected
}

// Handle carries out the part of the protocol every synchronous server
// shares. On Tick it samples the round's agents and sends each a
// GlobalModel — after probing every agent with an ImportanceProbe and
// collecting their ImportanceReports when the agent policy asks for it — and,
// under a deadline, sets its FedAvgDeadline timer; on LocalModel or
// LocalUpdate it records the reply. It returns true when the round closes:
// every reply has arrived, the first K have (Collect.Wait FirstK), or the
// deadline has passed. The caller then combines Core.Replies() into
// Core.Model() (Core.Close has been called if replies are missing; with none
// the combination must leave the model unchanged) and calls EndRound.
//
// A reply for a round already closed is late: it is reported (KeyLate) and
// ignored, as is a second copy of a reply.
func (s *ServerParts) Handle(ctx *actors.Context, m proto.Message) (complete bool, err error) {
	switch m := m.(type) {
	case *msg.Tick:
		s.round, s.open = ctx.Round(), true
		if model, ok := s.Core.Probe(); ok {
			probe := &msg.ImportanceProbe{Weights: append([]float64(nil), model...)} // shared, immutable once sent
			for _, id := range s.Agents {
				ctx.Send(id, probe)
			}
			return false, nil
		}
		return false, s.begin(ctx)
	case *msg.ImportanceReport:
		k, ok := s.agentIndex(ctx.Sender())
		if !ok {
			return false, fmt.Errorf("probe report from %s, which is not an agent", ctx.Name(ctx.Sender()))
		}
		ready, err := s.Core.AcceptReport(k, fedavg.Report{GradNorm: m.GetGradNorm(), Sigma2: m.GetSigma2(), Alpha: m.GetAlpha()})
		if err != nil || !ready {
			return false, err
		}
		return false, s.begin(ctx)
	case *msg.LocalModel:
		return s.accept(ctx, m.GetSlot(), m.GetWeights(), fedavg.Report{GradNorm: m.GetGradNorm(), Sigma2: m.GetSigma2(), Alpha: m.GetAlpha()})
	case *msg.LocalUpdate:
		return s.accept(ctx, m.GetSlot(), m.GetUpdate(), fedavg.Report{GradNorm: m.GetGradNorm(), Sigma2: m.GetSigma2(), Alpha: m.GetAlpha()})
	case *msg.FedAvgDeadline:
		if !s.open || ctx.Round() != s.round {
			return false, nil // the round closed before its deadline
		}
		return s.close(ctx), nil
	}
	return false, fmt.Errorf("server cannot handle %T", m)
}

// begin samples the round's agents and sends each the model and, under
// importance sampling of agents, its probability p_k.
func (s *ServerParts) begin(ctx *actors.Context) error {
	draws, err := s.Core.Draw()
	if err != nil {
		return err
	}
	model := append([]float64(nil), s.Core.Model()...) // shared, immutable once sent
	for slot, k := range draws {
		ctx.Send(s.Agents[k], &msg.GlobalModel{Slot: int32(slot), Weights: model, P: s.Core.Probability(slot)})
	}
	if c := &s.Config.Collect; c.Timed() {
		ctx.After(c.Deadline, &msg.FedAvgDeadline{})
	}
	return nil
}

func (s *ServerParts) accept(ctx *actors.Context, slot int32, v []float64, r fedavg.Report) (bool, error) {
	k, ok := s.agentIndex(ctx.Sender())
	if !ok {
		return false, fmt.Errorf("reply from %s, which is not an agent", ctx.Name(ctx.Sender()))
	}
	switch {
	case !s.open || ctx.Round() != s.round:
		ctx.Observe(KeyLate, []float64{float64(k)})
		return false, nil
	case s.Core.Filled(int(slot), k):
		return false, nil // a second copy of a reply
	}
	complete, err := s.Core.AcceptReported(int(slot), k, v, r)
	if err != nil {
		return false, err
	}
	if complete {
		s.open = false
		return true, nil
	}
	if c := &s.Config.Collect; c.Wait == fedavg.FirstK && s.Core.Received() == c.K {
		return s.close(ctx), nil
	}
	return false, nil
}

// close ends the round with the replies received so far.
func (s *ServerParts) close(ctx *actors.Context) bool {
	s.open = false
	if s.Core.Close() == 0 {
		ctx.Observe(KeyEmpty, nil)
		ctx.Warn(fmt.Sprintf("some rounds closed before any reply arrived (%s): the model was not updated in them; the summary counts them under empty_rounds", s.Config.Collect.Describe()))
	}
	return true
}

// agentIndex maps an actor ID back to the agent index k.
func (s *ServerParts) agentIndex(id actors.ID) (int, bool) {
	k := sort.Search(len(s.Agents), func(i int) bool { return s.Agents[i] >= id })
	return k, k < len(s.Agents) && s.Agents[k] == id
}

// EndRound adapts the agents' probabilities under the partial agent policy,
// reports the time and the new global model to the observer and tells the
// scheduler the round is over.
func (s *ServerParts) EndRound(ctx *actors.Context) {
	s.Core.Adapt()
	ctx.Observe(KeyTime, []float64{ctx.Now()})
	ctx.Observe("model", s.Core.Model())
	ctx.Send(s.Scheduler, &msg.Done{})
}

// Waiting implements actors.Waiter: a synchronous server whose round is open
// names the agents whose replies it still waits for.
func (s *ServerParts) Waiting() string {
	if !s.open {
		return ""
	}
	missing := s.Core.Missing()
	if len(missing) == 0 {
		return ""
	}
	names := make([]string, len(missing))
	for i, k := range missing {
		names[i] = fedavg.AgentName(k)
	}
	return fmt.Sprintf("round %d waits for the replies of %s (collection policy %s)", s.round, strings.Join(names, ", "), s.Config.Collect.Wait)
}

// ServerFactory builds a server behaviour from its shared parts.
type ServerFactory func(parts ServerParts) actors.Behaviour

var servers = map[string]ServerFactory{}

// ServerSlot is the behaviour slot of server behaviours (package
// internal/params): scenario files select one with algorithm.fedavg.server.
const ServerSlot = "fedavg.server"

// RegisterServer makes a server behaviour without parameters available to
// scenario files under name (algorithm.fedavg.server). Call it from an init
// function; registering a name twice panics, as it is a programming error.
func RegisterServer(name string, f ServerFactory) {
	RegisterServerSpec(params.Spec{Name: name}, f)
}

// RegisterServerSpec registers a server behaviour with its parameters: the
// scenario loader checks them (algorithm.fedavg.server: {kind: NAME, …}) and
// the factory finds their values in ServerParts.Params. spec.Slot is set to
// ServerSlot.
func RegisterServerSpec(spec params.Spec, f ServerFactory) {
	if _, dup := servers[spec.Name]; dup {
		panic("fedavg: server " + spec.Name + " registered twice")
	}
	spec.Slot = ServerSlot
	params.Register(spec)
	servers[spec.Name] = f
}

// LookupServer returns the server behaviour factory registered under name.
func LookupServer(name string) (ServerFactory, bool) {
	f, ok := servers[name]
	return f, ok
}

// ServerNames lists the registered server behaviours, sorted.
func ServerNames() []string {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func init() {
	RegisterServer("mean", func(p ServerParts) actors.Behaviour { return &meanServer{p} })
}

// meanServer is the server of the thesis: it averages the replies (eq. 1.31,
// or w ← w − μ·mean for shared updates).
type meanServer struct{ ServerParts }

// Receive implements actors.Behaviour.
func (s *meanServer) Receive(ctx *actors.Context, m proto.Message) error {
	complete, err := s.Handle(ctx, m)
	if err != nil || !complete {
		return err
	}
	s.Core.Combine()
	s.EndRound(ctx)
	return nil
}
