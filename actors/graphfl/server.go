// Package graphfl holds the actor behaviours of graph federated learning: a
// server that is a FedAvg server (actors/fedavg.ServerParts: sampling,
// broadcast, collection of replies, aggregation) followed by the exchange
// with its neighbouring servers (the algorithms/graphfl.Exchange state
// machine), and clients that are FedAvg agents (actors/fedavg.Agent). With
// one server, the actors, their names and their messages are FedAvg's.
package graphfl

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	afedavg "maple/actors/fedavg"
	"maple/actors/msg"
	"maple/algorithms/graphfl"
	"maple/privacy/pairmask"
)

// Observation keys under which servers report to the run's observer (outside
// the protocol: these are not messages and are not traced).
const (
	// KeyModel reports w_{p,i} at the end of every round (FedAvg's key).
	KeyModel = "model"
	// KeyAggregate reports the noise-free aggregate ψ_{p,i} of the round.
	KeyAggregate = "aggregate"
	// KeyDraw reports the server's graph-homomorphic or broadcast draw
	// g_{p,i} of the round.
	KeyDraw = "gh-noise"
	// KeySetup reports, at the end of a round in which the server sent local
	// graph-homomorphic set-up messages, their counts so far [roles, keys,
	// relays].
	KeySetup = "lgh-setup"
)

// Server is the behaviour of one server. Tick opens the round: the exchange
// begins (announcing roles in the first round under local graph-homomorphic
// masks) and the FedAvg half samples the clients and sends them the model.
// When the last reply is in, the FedAvg half aggregates and the exchange
// sends the aggregate to the neighbours; shares and set-up messages go to the
// exchange. When the exchange completes, the model becomes w_{p,i}, the
// server reports to the observer and sends Done to the scheduler.
type Server struct {
	afedavg.ServerParts
	// Exchange is the server's step-4 state machine.
	Exchange *graphfl.Exchange
	// First is the ID of server 0; server m's ID is First + m.
	First actors.ID
	// Servers is P.
	Servers int

	in     pairmask.SetupMessage // the decoded set-up message, reused
	box    outbox
	counts pairmask.SetupCounts // set-up counts last reported
}

// Receive implements actors.Behaviour.
func (s *Server) Receive(ctx *actors.Context, m proto.Message) error {
	s.box = outbox{ctx: ctx, first: s.First}
	defer func() { s.box.ctx = nil }()
	var complete bool
	var err error
	switch m := m.(type) {
	case *msg.Tick:
		if err := s.Exchange.Begin(ctx.Round(), &s.box); err != nil {
			return err
		}
		_, err = s.Handle(ctx, m)
		return err
	case *msg.LocalModel, *msg.LocalUpdate:
		var replied bool
		if replied, err = s.Handle(ctx, m); err != nil || !replied {
			return err
		}
		s.Core.Combine()
		complete, err = s.Exchange.Aggregate(s.Core.Model(), &s.box)
	case *msg.ServerShare:
		var from int
		if from, err = s.server(ctx, m); err == nil {
			complete, err = s.Exchange.Share(ctx.Round(), from, m.GetPayload(), &s.box)
		}
	case *msg.RoleAssign, *msg.PublicKey, *msg.RelayedPublicKey:
		if err = s.decode(ctx, m); err == nil {
			complete, err = s.Exchange.Setup(&s.in, &s.box)
		}
	default:
		return fmt.Errorf("server cannot handle %s", actors.MessageName(m))
	}
	if err != nil || !complete {
		return err
	}
	copy(s.Core.Model(), s.Exchange.Model())
	s.report(ctx)
	s.EndRound(ctx)
	return nil
}

// server returns the index of the server that sent the message.
func (s *Server) server(ctx *actors.Context, m proto.Message) (int, error) {
	from := int(ctx.Sender() - s.First)
	if from < 0 || from >= s.Servers {
		return 0, fmt.Errorf("%s from %s, which is not a server", actors.MessageName(m), ctx.Name(ctx.Sender()))
	}
	return from, nil
}

// decode translates a set-up message into s.in.
func (s *Server) decode(ctx *actors.Context, m proto.Message) error {
	from, err := s.server(ctx, m)
	if err != nil {
		return err
	}
	s.in = pairmask.SetupMessage{Peer: from}
	switch m := m.(type) {
	case *msg.RoleAssign:
		s.in.Kind, s.in.Role, s.in.Weight = pairmask.Announce, m.GetRole().Pairmask(), m.GetWeight()
		for _, p := range m.GetPartners() {
			s.in.Partners = append(s.in.Partners, int(p))
		}
	case *msg.PublicKey:
		s.in.Kind, s.in.Key = pairmask.PublicKey, m.GetKey()
	case *msg.RelayedPublicKey:
		s.in.Kind, s.in.Origin, s.in.Key = pairmask.RelayedKey, int(m.GetOrigin()), m.GetKey()
	}
	return nil
}

// report tells the observer what the metrics need at the end of a round
// (EndRound reports the model).
func (s *Server) report(ctx *actors.Context) {
	ctx.Observe(KeyAggregate, s.Exchange.Aggregated())
	switch s.Exchange.Scheme() {
	case graphfl.GraphHomomorphic, graphfl.RandomBroadcast:
		ctx.Observe(KeyDraw, s.Exchange.Draw())
	case graphfl.LocalGraphHomomorphic:
		if c := s.Exchange.SetupCounts(); c != s.counts {
			s.counts = c
			ctx.Observe(KeySetup, []float64{float64(c.Roles), float64(c.Keys), float64(c.Relays)})
		}
	}
}

// outbox turns the exchange's messages into protobuf messages. Every message
// gets its own copy of the vectors and keys, which the exchange reuses;
// messages are immutable once sent.
type outbox struct {
	ctx   *actors.Context
	first actors.ID
}

// Share implements graphfl.Outbox.
func (o *outbox) Share(to int, values []float64) {
	o.ctx.Send(o.first+actors.ID(to), &msg.ServerShare{Payload: slices.Clone(values)})
}

// Setup implements graphfl.Outbox.
func (o *outbox) Setup(m *pairmask.SetupMessage) {
	var body proto.Message
	switch m.Kind {
	case pairmask.Announce:
		r := &msg.RoleAssign{Role: msg.MaskRoleOf(m.Role), Weight: m.Weight}
		for _, p := range m.Partners {
			r.Partners = append(r.Partners, int32(p))
		}
		body = r
	case pairmask.PublicKey:
		body = &msg.PublicKey{Key: slices.Clone(m.Key)}
	case pairmask.RelayedKey:
		body = &msg.RelayedPublicKey{Origin: int32(m.Origin), Key: slices.Clone(m.Key)}
	}
	o.ctx.Send(o.first+actors.ID(m.Peer), body)
}

// Warn implements graphfl.Outbox.
func (o *outbox) Warn(message string) { o.ctx.Warn(message) }
