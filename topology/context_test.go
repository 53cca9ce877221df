package topology

import (
	"context"
	"errors"
	"maple/internal/ctxtest"
	"math/rand/v2"
	"slices"
	"testing"
)

// The random generators observe their context: done, they stop with its
// error, before a draw and (geometric graphs, O(n²) a draw) within one;
// never done, they draw exactly what the functions without a context draw
// and leave their stream where those leave it.
func TestGeneratorsObserveInterruption(t *testing.T) {
	stream := func() *rand.Rand { return rand.New(rand.NewPCG(3, 4)) }
	type result struct {
		edges [][2]int
		err   error
	}
	run := func(g *Graph, err error) result {
		if g == nil {
			return result{err: err}
		}
		return result{edges: g.Edges(), err: err}
	}
	for _, c := range []struct {
		name        string
		withContext func(ctx context.Context, r *rand.Rand) result
		plain       func(r *rand.Rand) result
	}{
		{"geometric, connected", func(ctx context.Context, r *rand.Rand) result {
			g, _, err := GeometricContext(ctx, 30, 0.4, 1, r, 100)
			return run(g, err)
		}, func(r *rand.Rand) result { g, _, err := Geometric(30, 0.4, 1, r, 100); return run(g, err) }},
		{"geometric, never connected", func(ctx context.Context, r *rand.Rand) result {
			g, _, err := GeometricContext(ctx, 40, 0.05, 0, r, 20)
			return run(g, err)
		}, func(r *rand.Rand) result { g, _, err := Geometric(40, 0.05, 0, r, 20); return run(g, err) }},
		{"erdos-renyi", func(ctx context.Context, r *rand.Rand) result { return run(ErdosRenyiContext(ctx, 40, 0.2, 2, r, 100)) },
			func(r *rand.Rand) result { return run(ErdosRenyi(40, 0.2, 2, r, 100)) }},
		{"small-world", func(ctx context.Context, r *rand.Rand) result { return run(SmallWorldContext(ctx, 60, 2, 1, r, 100)) },
			func(r *rand.Rand) result { return run(SmallWorld(60, 2, 1, r, 100)) }},
	} {
		r1, r2 := stream(), stream()
		got, want := c.withContext(context.Background(), r1), c.plain(r2)
		if !slices.Equal(got.edges, want.edges) || (got.err == nil) != (want.err == nil) || r1.Uint64() != r2.Uint64() {
			t.Errorf("%s: with a context %v, %v; without %v, %v (or the streams differ afterwards)", c.name, got.edges, got.err, want.edges, want.err)
		}
		for checks := range 2 { // before the first draw; within it (geometric) or before the second
			if got := c.withContext(ctxtest.Countdown(checks), stream()); !errors.Is(got.err, context.Canceled) && (checks == 0 || got.err != nil) {
				t.Errorf("%s interrupted after %d checks: %v", c.name, checks, got.err)
			}
		}
	}
	// Within a geometric draw: the first row's check stops it.
	if _, _, err := GeometricContext(ctxtest.Countdown(1), 30, 0.4, 1, stream(), 100); !errors.Is(err, context.Canceled) {
		t.Errorf("geometric interrupted within its first draw: %v", err)
	}
}
