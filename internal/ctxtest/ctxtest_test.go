package ctxtest

import (
	"context"
	"testing"
)

// A countdown of 3 lets exactly three checks through, then stays canceled.
func TestCountdownLetsNChecksThrough(t *testing.T) {
	ctx := Countdown(3)
	for i := range 3 {
		if err := ctx.Err(); err != nil {
			t.Fatalf("check %d: %v, want nil", i, err)
		}
	}
	for range 2 {
		if err := ctx.Err(); err != context.Canceled {
			t.Fatalf("after three checks: %v, want context.Canceled", err)
		}
	}
}
