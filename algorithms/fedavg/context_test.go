package fedavg

import (
	"context"
	"errors"
	"slices"
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

// The reference run of the adaptive policies, which probes every agent's
// sample gradients every round, and the noise bound observe their context:
// done, they stop with its error; never done, they give exactly what the
// functions without a context give.
func TestImportanceSamplingObservesInterruption(t *testing.T) {
	const agents, rounds = 8, 12
	sets := regression(agents, 20, 5)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	cfg := Config{Agents: agents, Participants: 3, StepSize: 0.02, Normalized: true, Epochs: Range{1, 3}, Batch: Range{1, 4},
		Importance: Importance{Agents: Adaptive, Data: Adaptive}}
	w0 := make([]float64, 2)
	trace := func(ctx context.Context) ([][]float64, error) {
		var ws [][]float64
		err := ReferenceContext(ctx, cfg, data.Sets(sets), l, w0, 7, rounds, func(_ int, w []float64) { ws = append(ws, slices.Clone(w)) })
		return ws, err
	}
	var want [][]float64
	if err := Reference(cfg, data.Sets(sets), l, w0, 7, rounds, func(_ int, w []float64) { want = append(want, slices.Clone(w)) }); err != nil {
		t.Fatal(err)
	}
	got, err := trace(context.Background())
	if err != nil || !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("ReferenceContext without interruption: %v; iterates equal to Reference's: %v", err, slices.EqualFunc(got, want, slices.Equal))
	}
	// Each round checks once and once per agent probed: 2·(1 + agents)
	// checks pass two rounds, and the third round's probe is stopped.
	got, err = trace(&countdown{Context: context.Background(), n: 2*(1+agents) + 3})
	if !errors.Is(err, context.Canceled) || len(got) != 2 {
		t.Errorf("interrupted in round 3: %d rounds observed, %v; want 2 and context.Canceled", len(got), err)
	}

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

// SimulateContext checks its context before every event: done after 7
// checks, it handles 7 events — the scheduler's Start and Tick, the server's
// broadcast, … — and stops with the context's error, short of the rounds
// asked for. Not interrupted it is Simulate, which the engine-parity tests
// run.
func TestSimulateObservesInterruption(t *testing.T) {
	sets := regression(4, 10, 3)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	cfg := Config{Agents: 4, Participants: 2, StepSize: 0.02, Epochs: Range{1, 1}, Batch: Range{1, 1}}
	models := 0
	err := SimulateContext(&countdown{Context: context.Background(), n: 7}, cfg, data.Sets(sets), l, make([]float64, 2), 1, 50,
		SimOptions{Observe: func(_ int, key string, _ []float64) {
			if key == ObsModel {
				models++
			}
		}})
	if !errors.Is(err, context.Canceled) || models >= 50 {
		t.Errorf("done after 7 events: %d models, %v; want fewer than 50 and context.Canceled", models, err)
	}
}
