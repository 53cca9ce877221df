package diffusion

import (
	"context"
	"errors"
	"testing"

	"maple/algorithms/systems"
)

// countdown is a context that is done once its first n checks have passed:
// it interrupts a computation at a fixed point of its work, without timing.
type countdown struct {
	context.Context
	n int
}

func (c *countdown) Err() error {
	if c.n <= 0 {
		return context.Canceled
	}
	c.n--
	return nil
}

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
	err := ReferenceContext(&countdown{Context: context.Background(), n: 3}, cfg, prob, 1, 10, Hooks{Models: func(int, [][]float64) { iterations++ }})
	if !errors.Is(err, context.Canceled) || iterations != 3 {
		t.Errorf("ReferenceContext done after 3 checks: %d iterations, %v; want 3 and context.Canceled", iterations, err)
	}
	steps := 0
	err = AsyncReferenceContext(&countdown{Context: context.Background(), n: 50}, cfg, prob, 1, 100, AsyncOptions{
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
