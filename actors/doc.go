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
// # Determinism and virtual time
//
// The engine is a discrete-event simulation on top of protoactor. Messages in
// flight wait in a queue ordered by virtual arrival time (ties in send order);
// Execute delivers them one at a time through protoactor's send path to the
// receiver's process, a process kind of the engine's own registered under
// the actor's PID (process.go), which runs the receiver on the calling
// goroutine. Every actor thus
// handles its messages in the order they arrive in virtual time, and the
// delivery order is a pure function of the protocol and the run seed: the
// same seed gives byte-identical traces and metrics whatever GOMAXPROCS is.
// Parallelism comes from running Monte-Carlo runs side by side, each with its
// own Run (and, for speed, one System per worker).
//
// Each actor has a clock. A message arrives at the sender's clock plus the
// link latency (Timing); handling it starts at the later of its arrival and
// the receiver's clock, and Context.Spend advances the clock by modelled
// compute time, so a busy actor queues what arrives meanwhile. Links deliver
// in send order even with jitter. Nothing sleeps on the wall clock.
package actors
