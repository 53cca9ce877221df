package data

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"go.uber.org/goleak"
)

// sources returns a generated source of every generator, with K agents.
func sources(K int) map[string]Source {
	reg, _ := RegressionSource(RegressionConfig{Agents: K, SamplesMin: 2, SamplesMax: 6, Dim: 3, CovScale: 1, NoiseVarMax: 1}, 5)
	shared, _ := RegressionSource(RegressionConfig{Agents: K, SamplesMin: 2, SamplesMax: 6, Dim: 3, CovScale: 1, SharedCovariance: true, NoiseVarMax: 1}, 5)
	lc := DefaultLogisticConfig()
	lc.Agents, lc.SamplesMin, lc.SamplesMax, lc.TestSamples = K, 3, 7, 10
	logistic, _, _ := LogisticSource(lc, 6)
	cc := DefaultClickConfig()
	cc.Agents, cc.SamplesMin, cc.SamplesMax, cc.TestSamples, cc.Dim = K, 3, 7, 10, 64
	click, _, _ := ClickSource(cc, 7)
	mix, _ := MixtureSource(MixtureConfig{Agents: K, SamplesMin: 1, SamplesMax: 4, Dim: 2, Mean: 1, Variance: 1, Positive: 0.5}, 8)
	return map[string]Source{"regression": reg, "shared covariance": shared, "logistic": logistic, "click": click, "mixture": mix}
}

// A generated source draws agent k's dataset from the run seed and k alone:
// the same samples on every call, in any order, whatever the number of
// agents — which is what lets a run hold millions of agents lazily and
// draw the same numbers as when it held them all.
func TestGeneratedAgentsDependOnTheirIndexAlone(t *testing.T) {
	small, large := sources(10), sources(100000)
	for name, src := range small {
		for _, k := range []int{9, 0, 4, 9} {
			a, b := src.Set(k), large[name].Set(k)
			if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, src.Set(k)) {
				t.Errorf("%s: agent %d differs between calls or between 10 and 100000 agents", name, k)
			}
		}
		if !Generated(src) || Generated(Collect(src)) {
			t.Errorf("%s: Generated is wrong", name)
		}
	}
}

// The in-memory generators are their sources collected, and keep their
// streams: Regression's datasets are the source's, agent by agent.
func TestGeneratorsCollectTheirSources(t *testing.T) {
	c := RegressionConfig{Agents: 7, SamplesMin: 2, SamplesMax: 6, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}
	sets, wStar := Regression(c, 3)
	src, wSrc := RegressionSource(c, 3)
	if !slices.Equal(wStar, wSrc) || src.Agents() != len(sets) {
		t.Fatal("w⋆ or the number of agents differs")
	}
	for k, s := range sets {
		if !reflect.DeepEqual(s, src.Set(k)) {
			t.Errorf("agent %d differs", k)
		}
	}
}

// Each visits every agent once, in ascending order, with the source's
// datasets, for every number of cores and of agents around its chunk size;
// it stops at f's first error and leaves no goroutine behind.
func TestEachVisitsAgentsInOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		for _, K := range []int{1, eachChunk, eachChunk + 1, 5*eachChunk + 17} {
			src := sources(K)["mixture"]
			next := 0
			err := Each(src, func(k int, s *Set) error {
				if k != next {
					t.Fatalf("procs %d, K %d: agent %d after %d", procs, K, k, next-1)
				}
				if k%97 == 0 && !reflect.DeepEqual(s, src.Set(k)) {
					t.Fatalf("procs %d, K %d: agent %d's dataset differs", procs, K, k)
				}
				next++
				return nil
			})
			if err != nil || next != K {
				t.Fatalf("procs %d, K %d: %d agents visited, err %v", procs, K, next, err)
			}
			stop := errors.New("stop")
			visited := 0
			err = Each(src, func(k int, _ *Set) error {
				visited++
				if k == K/2 {
					return stop
				}
				return nil
			})
			if !errors.Is(err, stop) || visited != K/2+1 {
				t.Fatalf("procs %d, K %d: stopped after %d agents with %v", procs, K, visited, err)
			}
		}
	}
}

// Summary, fed one dataset at a time, says what the definition says: the
// minimum, median and maximum of the sorted per-agent counts, for odd and
// even numbers of agents and repeated counts.
func TestSummaryMatchesSortedCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, K := range []int{1, 2, 3, 10, 11, 200} {
		var s Summary
		sizes, classes := make([]float64, K), make([]float64, K)
		all := map[float64]bool{}
		for k := range K {
			set := &Set{Dim: 1, Y: make([]float64, 1+r.IntN(6))}
			set.X = make([]float64, set.Len())
			distinct := map[float64]bool{}
			for n := range set.Y {
				set.Y[n] = float64(r.IntN(5))
				distinct[set.Y[n]], all[set.Y[n]] = true, true
			}
			sizes[k], classes[k] = float64(set.Len()), float64(len(distinct))
			s.Add(set, true)
		}
		got := s.Summary(nil, true)
		spread := func(v []float64) Spread {
			slices.Sort(v)
			return Spread{Min: v[0], Median: (v[(K-1)/2] + v[K/2]) / 2, Max: v[K-1]}
		}
		if got.Agents != K || got.Samples != spread(sizes) || *got.Classes != spread(classes) || got.Total != len(all) {
			t.Errorf("K = %d: got %+v (classes %+v)", K, got, *got.Classes)
		}
	}
}
