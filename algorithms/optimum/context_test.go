package optimum

import (
	"context"
	"errors"
	"maple/internal/ctxtest"
	"slices"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// A solve observes its context: once the context is done it stops with an
// error wrapping the context's, within an iteration or an agent's share of
// the normal equations; never done, it returns exactly what Solve does, bit
// for bit, by every method.
func TestSolveContextObservesInterruption(t *testing.T) {
	regression, _ := data.Regression(data.RegressionConfig{Agents: 5, SamplesMin: 20, SamplesMax: 40, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 1)
	pool, _ := data.Blobs(data.BlobsConfig{Agents: 4, SamplesMin: 30, SamplesMax: 60, Dim: 3, Classes: 3, Separation: 1, TestSamples: 1}, 2)
	blobs, _, err := data.Partition(pool, data.PartitionConfig{SplitConfig: data.SplitConfig{Agents: 4, SamplesMin: 1, SamplesMax: 1}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method string
		l      loss.Loss
		sets   []*data.Set
	}{
		{"closed-form", loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}, regression},
		{"newton", loss.Loss{Kind: loss.Logistic, Rho: 0.01}, logisticSets(t)},
		{"lbfgs", loss.Loss{Kind: loss.Softmax, Rho: 0.01, Classes: 3}, blobs},
	} {
		weights := Uniform(len(c.sets))
		want, wantRep, err := Solve(c.l, c.sets, weights)
		if err != nil || wantRep.Method != c.method {
			t.Fatalf("%s: Solve: %v (method %s)", c.method, err, wantRep.Method)
		}
		got, rep, err := SolveContext(context.Background(), c.l, c.sets, weights)
		if err != nil || !slices.Equal(got, want) || rep != wantRep {
			t.Errorf("%s: SolveContext = %v, %+v, %v; Solve = %v, %+v", c.method, got, rep, err, want, wantRep)
		}
		// Three checks pass: the solve is stopped in its first agents'
		// shares (closed form) or in its first iteration (Newton, L-BFGS).
		for _, ctx := range []context.Context{ctxtest.Countdown(3), canceled()} {
			w, _, err := SolveContext(ctx, c.l, c.sets, weights)
			if !errors.Is(err, context.Canceled) || w != nil {
				t.Errorf("%s: interrupted solve returned %v, %v; want context.Canceled", c.method, w, err)
			}
		}
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
