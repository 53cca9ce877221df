package fedavg

import (
	"context"
	"errors"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
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

// The noise bound of the importance sampling policies observes its context:
// done, it stops with its error; never done, it gives exactly what
// NoiseBound gives.
func TestNoiseBoundObservesInterruption(t *testing.T) {
	const agents = 8
	sets := regression(agents, 20, 5)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	cfg := Config{Agents: agents, Participants: 3, StepSize: 0.02, Normalized: true, Epochs: Range{1, 3}, Batch: Range{1, 4},
		Importance: Importance{Agents: Adaptive, Data: Adaptive}}
	wOpt, err := optimum.LeastSquares(sets, optimum.Uniform(agents), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	u, o := NoiseBound(&cfg, data.Sets(sets), l, wOpt, 7)
	if gu, gotO, err := NoiseBoundContext(context.Background(), &cfg, data.Sets(sets), l, wOpt, 7); err != nil || gu != u || gotO != o {
		t.Errorf("NoiseBoundContext = %v, %v, %v; NoiseBound = %v, %v", gu, gotO, err, u, o)
	}
	if _, _, err := NoiseBoundContext(&countdown{Context: context.Background(), n: 3}, &cfg, data.Sets(sets), l, wOpt, 7); !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted NoiseBoundContext: %v", err)
	}
}
