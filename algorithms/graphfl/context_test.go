package graphfl

import (
	"context"
	"errors"
	"maple/internal/ctxtest"
	"testing"

	"maple/topology"
)

// ReferenceContext checks its context once per round: done after 4 checks,
// it runs exactly 4 rounds and stops with the context's error. Not
// interrupted it is Reference, which the engine-parity tests run.
func TestReferenceObservesInterruption(t *testing.T) {
	const P, K = 6, 4
	sets, l := testSets(P, K)
	prob := Problem{A: topology.Metropolis(testGraph(t)), Sets: sets, Loss: l, W0: make([]float64, 3)}
	rounds := 0
	err := ReferenceContext(ctxtest.Countdown(4), testConfig(P, None), prob, 1, 10,
		Hooks{Models: func(int, [][]float64) { rounds++ }})
	if !errors.Is(err, context.Canceled) || rounds != 4 {
		t.Errorf("done after 4 checks: %d rounds, %v; want 4 and context.Canceled", rounds, err)
	}
}
