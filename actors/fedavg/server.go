// Package fedavg holds the actor behaviours of federated averaging: the
// server, which samples agents and combines their replies, and the agents,
// which train locally. Each is a thin wrapper around the state machines of
// maple/algorithms/fedavg.
//
// It also holds the registries of FedAvg's behaviour slots (registry.go):
// servers, clients, collection policies and adversaries, each registered
// once with its parameters and its pure rule, which both engines apply
// (docs/writing-behaviours.md). krum.go and fedprox.go are the worked
// examples of a server and a client.
package fedavg

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/compress"
	"maple/algorithms/fedavg"
)

// ServerParts is what every server behaviour shares: the server state
// machine, the IDs it talks to, and the common half of the protocol.
type ServerParts struct {
	// Core is the server's state machine: global model, sampling, replies.
	Core *fedavg.Server
	// Config is the run's FedAvg configuration.
	Config *fedavg.Config
	// Scheduler is the actor that opens rounds; Agents.ID(k) is agent k's
	// actor.
	Scheduler actors.ID
	Agents    AgentIDs
	// Params are the server behaviour's parameters, as the scenario set
	// them: a copy of the struct it was registered with (Server.Params).
	Params any
	// Rounds is the number of rounds (model versions) of the run.
	Rounds int
	// Ledger, if set, accounts for the run's differential privacy after
	// every round (privacy.go).
	Ledger *fedavg.Ledger

	round int  // the round in progress
	open  bool // its replies are being collected

	// With circulate set (the synchronous rule server), every agent gets a
	// copy of the model of its own, passed (Context.Pass), and hands its
	// reply over the same way; once a round is combined the server owns
	// those replies' storage and copies the next models into it, so that a
	// round allocates no vector once the first is over. The message
	// structs circulate too, through the run (Context.Recycle, Fresh): the
	// server recycles the replies and takes the tasks it sends from the
	// run, the agents recycle the tasks and take their replies from it.
	// The messages are the same; only their storage is reused.
	circulate bool
	held      [][]float64 // replies handed over since the last combination
	spare     [][]float64 // storage of combined replies, for the next models
}

// Handle carries out the part of the protocol every synchronous server
// shares. On Tick it samples the round's agents (none, under Poisson
// participation, completes the round at once) and sends each a
// GlobalModel — after probing every agent with an ImportanceProbe and
// collecting their ImportanceReports when the agent policy asks for it — and,
// under a deadline, sets its FedAvgDeadline timer; on LocalModel or
// LocalUpdate it records the reply. It returns true when the round closes:
// every reply has arrived, or the collection policy (Config.Collect) says
// it is enough, or its deadline has passed. The caller then combines Core.Replies() into
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
			for k := range s.Agents.Count {
				ctx.Send(s.Agents.ID(k), probe)
			}
			return false, nil
		}
		return s.begin(ctx)
	case *msg.ImportanceReport:
		k, ok := s.agentIndex(ctx.Sender())
		if !ok {
			return false, fmt.Errorf("probe report from %s, which is not an agent", ctx.Name(ctx.Sender()))
		}
		ready, err := s.Core.AcceptReport(k, fedavg.Report{GradNorm: m.GetGradNorm(), Sigma2: m.GetSigma2(), Alpha: m.GetAlpha()})
		if err != nil || !ready {
			return false, err
		}
		return s.begin(ctx)
	case *msg.LocalModel:
		s.hold(ctx, m.GetWeights())
		ctx.Recycle() // for an agent's next reply
		return s.accept(ctx, m.GetSlot(), m.GetWeights(), compressedOf(s.Config, m), m.GetSide(), fedavg.Report{GradNorm: m.GetGradNorm(), Sigma2: m.GetSigma2(), Alpha: m.GetAlpha()})
	case *msg.LocalUpdate:
		s.hold(ctx, m.GetUpdate())
		ctx.Recycle()
		return s.accept(ctx, m.GetSlot(), m.GetUpdate(), compressedOf(s.Config, m), m.GetSide(), fedavg.Report{GradNorm: m.GetGradNorm(), Sigma2: m.GetSigma2(), Alpha: m.GetAlpha()})
	case *msg.FedAvgDeadline:
		if !s.open || ctx.Round() != s.round {
			return false, nil // the round closed before its deadline
		}
		return s.close(ctx), nil
	}
	return false, fmt.Errorf("server cannot handle %T", m)
}

// begin samples the round's agents and sends each the model and, under
// importance sampling of agents, its probability p_k. Under Poisson
// participation it reports the round's number of agents (fedavg.ObsDraws);
// a round without any is complete at once (the caller combines no reply).
func (s *ServerParts) begin(ctx *actors.Context) (complete bool, err error) {
	draws, err := s.Core.Draw()
	if err != nil {
		return false, err
	}
	if s.Config.Variable() {
		ctx.Observe(fedavg.ObsDraws, []float64{float64(len(draws))})
	}
	if len(draws) == 0 {
		s.open = false
		return true, nil
	}
	var side []float64 // shared, immutable once sent
	if v := s.Core.Side(); v != nil {
		side = append([]float64(nil), v...)
	}
	if s.circulate {
		for slot, k := range draws {
			var v []float64
			if n := len(s.spare); n > 0 {
				v, s.spare = s.spare[n-1][:0], s.spare[:n-1]
			}
			g := actors.Fresh[msg.GlobalModel](ctx) // one an agent recycled, after the first round
			g.Slot, g.Weights, g.P, g.Side = int32(slot), append(v, s.Core.Model()...), s.Core.Probability(slot), side
			ctx.Pass(s.Agents.ID(k), g)
		}
	} else {
		model := append([]float64(nil), s.Core.Model()...) // shared, immutable once sent
		for slot, k := range draws {
			ctx.Send(s.Agents.ID(k), &msg.GlobalModel{Slot: int32(slot), Weights: model, P: s.Core.Probability(slot), Side: side})
		}
	}
	if t := s.Config.Collection().Timer(); t > 0 {
		ctx.After(t, &msg.FedAvgDeadline{})
	}
	return false, nil
}

// accept records a reply: v, or the compressed c (nil for a dense reply).
func (s *ServerParts) accept(ctx *actors.Context, slot int32, v []float64, c *compress.Compressed, side []float64, r fedavg.Report) (bool, error) {
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
	var complete bool
	var err error
	if c != nil {
		complete, err = s.Core.AcceptCompressed(int(slot), k, c, side, r)
	} else {
		complete, err = s.Core.AcceptReply(int(slot), k, v, side, r)
	}
	if err != nil {
		return false, err
	}
	if complete {
		s.open = false
		return true, nil
	}
	if s.Config.Collection().Enough(s.Core.Received()) {
		return s.close(ctx), nil
	}
	return false, nil
}

// hold keeps the storage of a reply handed over to the server (Context.Reuse:
// passed, not duplicated, no wiretap) for the models of a later round; a
// compressed reply has none.
func (s *ServerParts) hold(ctx *actors.Context, v []float64) {
	if s.circulate && ctx.Reuse() != nil && v != nil {
		s.held = append(s.held, v)
	}
}

// recycle makes the replies held so far spare storage: called once the
// round is combined, when the server's state machine no longer reads them
// (its next Draw forgets them).
func (s *ServerParts) recycle() {
	s.spare = append(s.spare, s.held...)
	clear(s.held)
	s.held = s.held[:0]
}

// close ends the round with the replies received so far.
func (s *ServerParts) close(ctx *actors.Context) bool {
	s.open = false
	if s.Core.Close() == 0 {
		ctx.Observe(KeyEmpty, nil)
		ctx.Warn(fmt.Sprintf("some rounds closed before any reply arrived (%s): the model was not updated in them; the summary counts them under empty_rounds", s.Config.Collection().Describe()))
	}
	return true
}

// agentIndex maps an actor ID back to the agent index k.
func (s *ServerParts) agentIndex(id actors.ID) (int, bool) { return s.Agents.Index(id) }

// EndRound adapts the agents' probabilities under the partial agent policy,
// reports the time and the new global model to the observer and tells the
// scheduler the round is over, with the privacy ledger's entry under DP.
func (s *ServerParts) EndRound(ctx *actors.Context) { s.endRound(ctx, true, s.Config.Draws()) }

// endRound is EndRound for a round that released a model update or not
// (secure aggregation may fail), whose noise survivors clients added.
func (s *ServerParts) endRound(ctx *actors.Context, released bool, survivors int) {
	s.Core.Adapt()
	ledger := s.account(ctx, released, survivors)
	ctx.Observe(KeyTime, []float64{ctx.Now()})
	ctx.Observe("model", s.Core.Model())
	ctx.Send(s.Scheduler, &msg.Done{Privacy: ledger})
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
	return fmt.Sprintf("round %d waits for the replies of %s (collection policy %s)", s.round, strings.Join(names, ", "), s.Config.Collection())
}
