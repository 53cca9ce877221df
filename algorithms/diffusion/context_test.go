package diffusion

import (
	"context"
	"errors"
	"maple/internal/ctxtest"
	"testing"

	"maple/algorithms/systems"
)

// The references observe their context: ReferenceContext checks it once per
// iteration, so a context done after 3 checks lets exactly 3 iterations
// through and stops with its error; AsyncReferenceContext checks it before
// every event and stops with it too. Not interrupted, they are Reference and
// AsyncReference (the engine-parity tests run those).
func TestReferencesObserveInterruption(t *testing.T) {
	A, sets, l, _, _ := metropolisProblem(t)
	cfg := Config{Strategy: ATC, StepSize: 0.1}
	prob := Problem{A: A, Sets: sets, Loss: l, W0: make([]float64, 3)}
	iterations := 0
	err := ReferenceContext(ctxtest.Countdown(3), cfg, prob, 1, 10, Hooks{Models: func(int, [][]float64) { iterations++ }})
	if !errors.Is(err, context.Canceled) || iterations != 3 {
		t.Errorf("ReferenceContext done after 3 checks: %d iterations, %v; want 3 and context.Canceled", iterations, err)
	}
	steps := 0
	err = AsyncReferenceContext(ctxtest.Countdown(50), cfg, prob, 1, 100, AsyncOptions{
		Model: &systems.Model{Latency: 0.1, Compute: systems.Compute{Kind: systems.Fixed, Value: 1}}, Wait: 0.1,
		Observe: func(_, _ int, key string, _ []float64) {
			if key == KeyAsyncModel {
				steps++
			}
		}})
	// 50 events — a Tick to each of the 10 agents, their shares and wake-ups —
	// are fewer than 10 agents × 100 steps need.
	if !errors.Is(err, context.Canceled) || steps >= 10*100 {
		t.Errorf("AsyncReferenceContext done after 50 events: %d steps, %v; want fewer than 1000 and context.Canceled", steps, err)
	}
}
