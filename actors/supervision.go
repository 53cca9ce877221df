package actors

import (
	"errors"
	"fmt"
)

// ErrStalled reports a run in which no message was left in flight but the
// scheduler had not finished: the protocol is waiting for a message nobody
// will send.
var ErrStalled = errors.New("run stalled: no message in flight and the scheduler has not finished")

// ErrInterrupted reports a run stopped through Options.Done before it
// finished. Deliveries happen one at a time, so the run stopped between two
// of them, and nothing it computed is a result.
var ErrInterrupted = errors.New("run interrupted")

// Failure is the error that stops a run when an actor's behaviour returns an
// error or panics. It names the actor, the round and the message being handled.
type Failure struct {
	// Actor is the name of the failing actor, Round the round of the message
	// it was handling and Message that message's type; Cause is the error
	// returned or the panic value.
	Actor   string
	Round   int
	Message string
	Cause   error
	// Stack is the goroutine stack of a panic; empty for returned errors.
	Stack string
}

// Error implements error.
func (f *Failure) Error() string {
	return fmt.Sprintf("actor %s failed in round %d handling %s: %v", f.Actor, f.Round, f.Message, f.Cause)
}

// Unwrap returns the cause.
func (f *Failure) Unwrap() error { return f.Cause }
