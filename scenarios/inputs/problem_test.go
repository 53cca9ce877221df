package inputs

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"maple/algorithms/data"
	"maple/internal/ctxtest"
)

// A problem of lazily held generated least-squares data, whose checks,
// summary and normal equations take one pass and whose report's gradient
// norm waits for the next pass over the agents (Pass) or for Settle, ends
// with what BuildProblem gives on the same data in memory, bit for bit:
// w^o, the partition summary, the report with its gradient norm — at
// GOMAXPROCS 1 and 3, over more agents than a pass draws ahead at once.
func TestLazyLeastSquaresIsBuildProblem(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	p := plan(t, "name: x\ndata: {agents: 3000, samples: [1, 9], dim: 3}\nloss: {rho: 0.01}\nalgorithm: {kind: test-data}\n")
	c := p.Curves[0]
	ctx := context.Background()
	want, err := BuildProblem(ctx, c, p.Dir, 4)
	if err != nil {
		t.Fatal(err)
	}
	wantDetails := want.Details()
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		for _, pass := range []bool{true, false} {
			var cache ProblemCache
			got, err := cache.Get(ctx, c, p.Dir, 4, true)
			if err != nil {
				t.Fatal(err)
			}
			if got.Sets != nil || !data.Generated(got.Data) {
				t.Fatal("the lazy problem holds its data")
			}
			d := got.Details()
			if _, ok := d["solver"]; ok {
				t.Errorf("GOMAXPROCS %d: the report is given before its gradient norm", procs)
			}
			if pass {
				n := 0
				err = Pass(ctx, got, func(_ int, sets []*data.Set, out []int) {
					for i, s := range sets {
						out[i] = s.Len()
					}
				}, func(k int, s *data.Set, v *int) error {
					if *v != s.Len() || k != n {
						t.Fatalf("agent %d after %d: result %d for %d samples", k, n-1, *v, s.Len())
					}
					n++
					return nil
				})
				if err != nil || n != 3000 {
					t.Fatalf("Pass: %d agents, %v", n, err)
				}
				if got.Solver != want.Solver {
					t.Errorf("GOMAXPROCS %d: after Pass the report is %+v, BuildProblem's %+v", procs, got.Solver, want.Solver)
				}
			}
			if err := got.Settle(ctx, d); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(d, wantDetails) || !reflect.DeepEqual(got.WOpt, want.WOpt) || !reflect.DeepEqual(got.Loss, want.Loss) {
				t.Errorf("GOMAXPROCS %d, pass %v: details %v, w^o %v; BuildProblem's %v, %v", procs, pass, d, got.WOpt, wantDetails, want.WOpt)
			}
			if again := got.Details(); !reflect.DeepEqual(again, wantDetails) {
				t.Errorf("GOMAXPROCS %d: the next job's details %v, want %v", procs, again, wantDetails)
			}
		}
	}
}

// The fused pass and Pass stop once their context is done.
func TestLazyLeastSquaresObservesItsContext(t *testing.T) {
	p := plan(t, "name: x\ndata: {agents: 3000, samples: [1, 9], dim: 3}\nloss: {rho: 0.01}\nalgorithm: {kind: test-data}\n")
	var cache ProblemCache
	if _, err := cache.Get(ctxtest.Countdown(5), p.Curves[0], p.Dir, 4, true); !errors.Is(err, context.Canceled) {
		t.Errorf("building with a context done: %v", err)
	}
	got, err := cache.Get(context.Background(), p.Curves[0], p.Dir, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Settle(ctxtest.Countdown(5), map[string]any{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Settle with a context done: %v", err)
	}
}
