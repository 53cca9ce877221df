package data

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

// DrawTo draws what Set returns, into storage that is reused whatever the
// sizes that came before — for a regression source, with one covariance
// per agent or a shared one, and through Replace — and a source that is
// not a Drawer is read with Set.
func TestDrawToIsSet(t *testing.T) {
	src := sources(300)
	for _, name := range []string{"regression", "shared covariance"} {
		d := src[name].(Drawer)
		var dst Set
		for _, k := range []int{5, 0, 299, 17, 17, 3} {
			got := d.DrawTo(k, &dst)
			if got != &dst || !reflect.DeepEqual(*got, *d.Set(k)) {
				t.Errorf("%s: agent %d drawn into reused storage differs from Set", name, k)
			}
		}
		if n := testing.AllocsPerRun(50, func() { d.DrawTo(7, &dst) }); n != 0 && !raceEnabled {
			t.Errorf("%s: DrawTo allocates %v times into storage large enough", name, n)
		}
		other := &Set{Dim: 3, X: []float64{1, 2, 3}, Y: []float64{4}}
		r := Replace(d, 2, other).(Drawer)
		if r.DrawTo(2, &dst) != other || !reflect.DeepEqual(*r.DrawTo(4, &dst), *d.Set(4)) {
			t.Errorf("%s: Replace's DrawTo is not the replaced set and the source's", name)
		}
	}
	if got := drawTo(src["mixture"], 3, new(Set)); !reflect.DeepEqual(got, src["mixture"].Set(3)) {
		t.Error("a source that is not a Drawer is not read with Set")
	}
}

// The two-dimensional loop of linearSamples draws what the general one
// draws, bit for bit, from the same stream: many agents' factors, noise
// levels and samples.
func TestLinearSamplesInTwoDimensions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		factor := covarianceFactor(2, 0.5+r.Float64(), r)
		wStar := []float64{r.NormFloat64(), r.NormFloat64()}
		noise := r.Float64()
		n := 1 + r.IntN(16)
		seed := r.Uint64()
		a, b := newDense(n, 2), newDense(n, 2)
		linearSamples2(a, factor, wStar, noise, rand.New(rand.NewPCG(seed, 0)))
		linearSamplesN(b, factor, wStar, noise, rand.New(rand.NewPCG(seed, 0)))
		same := func(x, y []float64) bool {
			return slices.EqualFunc(x, y, func(u, v float64) bool { return math.Float64bits(u) == math.Float64bits(v) })
		}
		if !same(a.X, b.X) || !same(a.Y, b.Y) {
			t.Fatalf("factor %v, w⋆ %v: %v %v, the general loop %v %v", factor, wStar, a.X, a.Y, b.X, b.Y)
		}
	}
}

// Fold gives each every agent once, in ascending order, with the source's
// dataset and the result work computed for it, for every number of cores
// and of agents around the chunk size, generated or held; it stops at
// each's first error and leaves no goroutine behind.
func TestFoldVisitsAgentsInOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		for _, K := range []int{1, eachChunk, eachChunk + 1, 5*eachChunk + 17} {
			for name, src := range map[string]Source{"generated": sources(K)["regression"], "held": Collect(sources(K)["mixture"])} {
				next := 0
				err := Fold(src, func(lo int, sets []*Set, out []float64) {
					for i, s := range sets {
						out[i] = float64(lo+i) + s.Y[0]
					}
				}, func(k int, s *Set, v *float64) error {
					if k != next || *v != float64(k)+s.Y[0] {
						t.Fatalf("procs %d, K %d, %s: agent %d after %d, result %v", procs, K, name, k, next-1, *v)
					}
					if k%97 == 0 && !reflect.DeepEqual(s, src.Set(k)) {
						t.Fatalf("procs %d, K %d, %s: agent %d's dataset differs", procs, K, name, k)
					}
					next++
					return nil
				})
				if err != nil || next != K {
					t.Fatalf("procs %d, K %d, %s: %d agents visited, err %v", procs, K, name, next, err)
				}
				stop := errors.New("stop")
				visited := 0
				err = Fold(src, func(int, []*Set, []struct{}) {}, func(k int, _ *Set, _ *struct{}) error {
					visited++
					if k == K/2 {
						return stop
					}
					return nil
				})
				if !errors.Is(err, stop) || visited != K/2+1 {
					t.Fatalf("procs %d, K %d, %s: stopped after %d agents with %v", procs, K, name, visited, err)
				}
			}
		}
	}
}

// A pass over the agents of a regression source allocates nothing per
// agent: Fold reuses the storage of the datasets and of the results, so
// that a pass over three times as many agents allocates no more than one
// over as many chunks as the storage holds, give or take a few per chunk.
func TestFoldAllocatesNothingPerAgent(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under -race are not meaningful (race_test.go)")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2} {
		runtime.GOMAXPROCS(procs)
		allocs := func(K int) float64 {
			src := sources(K)["regression"]
			return testing.AllocsPerRun(2, func() {
				Fold(src, func(_ int, sets []*Set, out []int) {
					for i, s := range sets {
						out[i] = s.Len()
					}
				}, func(int, *Set, *int) error { return nil })
			})
		}
		K := 20 * eachChunk
		if small, large := allocs(K), allocs(3*K); large-small > float64(2*K)/eachChunk*4 {
			t.Errorf("GOMAXPROCS %d: a pass over %d agents allocates %v times, over %d %v times", procs, K, small, 3*K, large)
		}
	}
}
