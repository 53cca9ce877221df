// Package actors is maple's actor engine: it runs the parties of a protocol
// (servers, agents, a scheduler) as protoactor-go actors that exchange typed
// protobuf messages, records every message in a trace, keeps virtual time, and
// stops the whole run, loudly, when any actor fails.
//
// # Writing a behaviour
//
// A Behaviour is the protocol logic of one actor. It receives one message at a
// time, decodes it with a type switch, calls a state machine from the
// algorithms packages, and sends what the state machine returns:
//
//	type echo struct{ peer actors.ID }
//
//	func (e *echo) Receive(ctx *actors.Context, m proto.Message) error {
//		switch m := m.(type) {
//		case *msg.Tick:
//			ctx.Send(e.peer, &msg.Tick{})
//		default:
//			return fmt.Errorf("unexpected %T", m)
//		}
//		return nil
//	}
//
// The Context gives the behaviour its identity, the round and virtual time of
// the message being handled, deterministic random streams, and the Observe hook
// through which it reports what the metrics are computed from. A behaviour
// never touches protoactor, goroutines or the wall clock, and never shares
// memory with another actor: everything that would cross a network in reality
// is a message. A returned error or a panic stops the run with an error that
// names the actor, the round and the message.
//
// # Determinism
//
// Actors run on protoactor's synchronized dispatcher: a message is processed on
// the sender's goroutine as soon as the receiver is idle, otherwise queued in
// the receiver's mailbox. Within one run the delivery order is therefore a
// pure function of the protocol, and the same run seed gives byte-identical
// traces and metrics whatever GOMAXPROCS is. Parallelism comes from running
// Monte-Carlo runs side by side, each with its own Run.
//
// # Virtual time
//
// Each actor has a clock. A message arrives at the sender's clock plus the link
// latency (Timing); receiving it advances the receiver's clock to at least that
// time, and Context.Spend advances it by modelled compute time. Nothing sleeps.
package actors
