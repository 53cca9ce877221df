package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// Every actor of a run is a protoactor Process of its own kind, registered
// in the System's process registry under its PID, as protoactor's futures,
// routers and remote endpoints are. protoactor's actor processes are built
// for senders on many goroutines: a mailbox with lock-free queues, a
// dispatcher, an actor context that wraps every message, a supervisor that
// hears of failures through system messages. A run needs none of it: it
// delivers one message at a time, in virtual-time order, from the goroutine
// that executes it, and a failure ends the whole run. So the engine
// delivers through protoactor's send path (RootContext.Send, the PID's
// cached process) straight to the cell, which hands the envelope to its
// behaviour; spawning is a registration, stopping a removal.

// SendUserMessage implements actor.Process: it delivers an envelope to the
// cell's behaviour, on the calling goroutine.
func (c *cell) SendUserMessage(_ *actor.PID, message any) {
	env, ok := message.(*Envelope)
	if !ok {
		c.run.fail(&Failure{Actor: c.label(), Round: -1, Message: fmt.Sprintf("%T", message),
			Cause: fmt.Errorf("not an envelope of the run")})
		return
	}
	if c.stopped {
		c.run.fail(&Failure{Actor: c.label(), Round: env.Round, Message: MessageName(env.Body),
			Cause: fmt.Errorf("message from %s to a stopped actor", c.run.Name(env.From))})
		return
	}
	c.receive(env)
}

// SendSystemMessage implements actor.Process. The only system message a
// run's actor acts on is protoactor's Stop; the others (Watch, Restart, …)
// concern supervision trees, which a run does not build.
func (c *cell) SendSystemMessage(pid *actor.PID, message any) {
	if _, ok := message.(*actor.Stop); ok {
		c.Stop(pid)
	}
}

// Stop implements actor.Process: the actor handles no message any more and
// its PID leaves the registry.
func (c *cell) Stop(pid *actor.PID) {
	if !c.registered {
		return
	}
	c.stopped, c.registered = true, false
	c.run.system.actors.ProcessRegistry.Remove(pid)
}

// receive hands env to the behaviour. A returned error or a panic stops the
// actor and fails the run with a Failure naming the actor, the round and the
// message (a panic's with its stack); the envelope is recycled once
// handled, and the message too if the handler recycled it (Recycle).
func (c *cell) receive(env *Envelope) {
	if c.run.failure != nil {
		return
	}
	if env.Time > c.clock {
		c.clock = env.Time
	}
	c.ctx = Context{cell: c, env: env, round: env.Round}
	defer c.recoverPanic(env)
	if err := c.behaviour.Receive(&c.ctx, env.Body); err != nil {
		c.failed(c.failure(env, err, ""))
		return
	}
	if c.ctx.recycle {
		c.run.keep(env.Body)
	}
	c.run.recycle(env)
}

// recoverPanic turns a panic of the behaviour into the run's Failure.
func (c *cell) recoverPanic(env *Envelope) {
	p := recover()
	if p == nil {
		return
	}
	err, ok := p.(error)
	if !ok {
		err = panicError{p}
	}
	c.failed(c.failure(env, err, stack()))
}

// failed stops the actor and fails the run with f.
func (c *cell) failed(f *Failure) {
	c.Stop(c.pid)
	c.run.fail(f)
}
