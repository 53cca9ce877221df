package fedavg

import (
	"context"
	"errors"
	"maple/internal/ctxtest"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
)

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
	if _, _, err := NoiseBoundContext(ctxtest.Countdown(3), &cfg, data.Sets(sets), l, wOpt, 7); !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted NoiseBoundContext: %v", err)
	}
}
