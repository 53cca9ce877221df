package randomwalk

import (
	"context"
	"errors"
	"maple/internal/ctxtest"
	"testing"

	"maple/algorithms/data"
)

// stepCounter counts the steps a reference reports.
type stepCounter struct {
	nopObserver
	steps int
}

func (s *stepCounter) Step(int, int, int, []float64, int)    { s.steps++ }
func (s *stepCounter) Gossip(int, int, []float64, int, bool) { s.steps++ }

// ReferenceContext checks its context before every move of a token and every
// gossip iteration: done after 5 checks, gossip runs exactly 5 iterations
// (two reports each) and a walk fewer than its 100 steps, and both stop with
// the context's error. Not interrupted it is Reference, which the
// engine-parity tests run.
func TestReferenceObservesInterruption(t *testing.T) {
	p, _ := testProblem(t, 10, 0.5, data.MixtureConfig{Dim: 2, Mean: 1, Variance: 1}, 3)
	for _, c := range []struct {
		cfg  Config
		want func(steps int) bool
	}{
		{Config{Protocol: Gossip, Walks: 1, StepSize: 0.1, Exponent: 1, Radius: 10}, func(s int) bool { return s == 2*5 }},
		{Config{Protocol: Walk, Walks: 1, StepSize: 0.1, Exponent: 1, Radius: 10}, func(s int) bool { return s < 100 }},
	} {
		obs := &stepCounter{}
		err := ReferenceContext(ctxtest.Countdown(5), c.cfg, p, 1, 100, obs, nil)
		if !errors.Is(err, context.Canceled) || !c.want(obs.steps) {
			t.Errorf("%v done after 5 checks: %d steps reported, %v", c.cfg.Protocol, obs.steps, err)
		}
	}
}
