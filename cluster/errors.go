package cluster

import (
	"errors"
	"fmt"

	"maple/actors"
	"maple/cluster/wire"
	"maple/scenarios"
	"maple/scenarios/run"
)

// toWire describes err for the coordinator, keeping what it needs to report
// the error as it would report the same error of a job run in its own
// process: a scenario error's fields, a panic's stack, an actor failure.
func toWire(err error) *wire.RemoteError {
	var se *scenarios.Error
	var ie *run.InternalError
	var af *actors.Failure
	switch {
	case errors.As(err, &se):
		return &wire.RemoteError{Kind: wire.RemoteError_SCENARIO, Message: err.Error(),
			File: se.File, Origin: se.Origin, Line: int32(se.Line), Field: se.Field, Msg: se.Msg}
	case errors.As(err, &af):
		return &wire.RemoteError{Kind: wire.RemoteError_ACTOR, Message: fmt.Sprint(af.Cause), Stack: af.Stack,
			Actor: af.Actor, Round: int32(af.Round), MessageType: af.Message}
	case errors.As(err, &ie):
		return &wire.RemoteError{Kind: wire.RemoteError_INTERNAL, Message: fmt.Sprint(ie.Value), Stack: ie.Stack}
	}
	return &wire.RemoteError{Kind: wire.RemoteError_OTHER, Message: err.Error()}
}

// fromWire rebuilds an error toWire described on the worker at address. A
// scenario error is the user's and reads as it would have in-process;
// other errors name the worker.
func fromWire(e *wire.RemoteError, worker string) error {
	switch e.Kind {
	case wire.RemoteError_SCENARIO:
		return &scenarios.Error{File: e.File, Origin: e.Origin, Line: int(e.Line), Field: e.Field, Msg: e.Msg}
	case wire.RemoteError_ACTOR:
		return &actors.Failure{Actor: e.Actor, Round: int(e.Round), Message: e.MessageType,
			Cause: fmt.Errorf("%s (on worker %s)", e.Message, worker), Stack: e.Stack}
	case wire.RemoteError_INTERNAL:
		return &run.InternalError{Value: fmt.Sprintf("%s (on worker %s)", e.Message, worker), Stack: e.Stack}
	}
	return fmt.Errorf("%s (on worker %s)", e.Message, worker)
}
