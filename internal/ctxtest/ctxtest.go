// Package ctxtest gives tests contexts that interrupt a computation at a
// fixed point of its work, without timing, so that a test of cancellation
// is deterministic.
package ctxtest

import "context"

// Countdown returns a context whose Err is nil for its first n calls and
// context.Canceled from then on: a computation that checks its context once
// per step runs exactly n steps and stops with context.Canceled.
func Countdown(n int) context.Context {
	return &countdown{Context: context.Background(), n: n}
}

// countdown is the context of Countdown.
type countdown struct {
	context.Context
	n int
}

// Err implements context.Context.
func (c *countdown) Err() error {
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	return nil
}
