package data

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// indexedDense returns n dense samples whose first feature is the sample's
// index, so that the samples can be traced through a split.
func indexedDense(n int) *Set {
	s := &Set{Dim: 2, X: make([]float64, 2*n), Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		s.X[2*i], s.X[2*i+1] = float64(i), 1
		s.Y[i] = float64(1 - 2*(i%2))
	}
	return s
}

// indexedSparse is indexedDense in CSR form with a third, varying column.
func indexedSparse(n int) *Set {
	s := &Set{Dim: 5, RowPtr: []int{0}, Y: make([]float64, n)}
	for i := 0; i < n; i++ {
		s.Col = append(s.Col, 0, int32(1+i%4))
		s.Val = append(s.Val, float64(i), 1)
		s.RowPtr = append(s.RowPtr, len(s.Col))
		s.Y[i] = float64(1 - 2*(i%2))
	}
	return s
}

// firstFeatures returns the first stored value of every row: the sample index
// when there is no noise.
func firstFeatures(s *Set) []int {
	ids := make([]int, s.Len())
	for n := range ids {
		if s.Sparse() {
			ids[n] = int(s.Val[s.RowPtr[n]])
		} else {
			ids[n] = int(s.Row(n)[0])
		}
	}
	return ids
}

func TestSplitUsesEverySampleOnce(t *testing.T) {
	for _, tc := range []struct {
		name string
		all  *Set
		c    SplitConfig
	}{
		{"dense, held out", indexedDense(1000), SplitConfig{Agents: 7, SamplesMin: 79, SamplesMax: 688, TestSamples: 100}},
		{"sparse, no test", indexedSparse(501), SplitConfig{Agents: 20, SamplesMin: 235, SamplesMax: 780}},
		{"one each", indexedDense(12), SplitConfig{Agents: 10, SamplesMin: 1, SamplesMax: 9, TestSamples: 2}},
	} {
		sets, test, err := Split(tc.all, tc.c, 5)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var seen []int
		if test != nil {
			seen = firstFeatures(test)
		}
		if len(seen) != tc.c.TestSamples {
			t.Errorf("%s: %d test samples, want %d", tc.name, len(seen), tc.c.TestSamples)
		}
		for k, s := range sets {
			if err := wellFormed(s, true); err != nil || s.Len() < 1 {
				t.Errorf("%s: agent %d: %v, %d samples", tc.name, k, err, s.Len())
			}
			seen = append(seen, firstFeatures(s)...)
		}
		slices.Sort(seen)
		for i, id := range seen {
			if id != i {
				t.Fatalf("%s: sample %d missing or repeated (sorted ids %v…)", tc.name, i, seen[:min(len(seen), i+2)])
			}
		}
		if len(seen) != tc.all.Len() {
			t.Errorf("%s: %d samples dealt, want %d", tc.name, len(seen), tc.all.Len())
		}
	}
}

// Equal bounds give sizes that differ by at most one; the sizes and the deal
// are the same for the same seed and differ for another.
func TestSplitSizesAndDeterminism(t *testing.T) {
	all := indexedDense(103)
	c := SplitConfig{Agents: 10, SamplesMin: 5, SamplesMax: 5}
	sets, _, _ := Split(all, c, 1)
	for k, s := range sets {
		if s.Len() != 10 && s.Len() != 11 {
			t.Errorf("agent %d has %d samples, want 10 or 11", k, s.Len())
		}
	}
	again, _, _ := Split(all, c, 1)
	other, _, _ := Split(all, c, 2)
	for k := range sets {
		if !slices.Equal(sets[k].X, again[k].X) {
			t.Fatalf("agent %d differs between identical calls", k)
		}
	}
	if slices.Equal(sets[0].X, other[0].X) {
		t.Error("a different seed gave agent 0 the same samples")
	}
	// Unequal bounds spread the sizes: the largest share is about 688/79 times
	// the smallest in expectation; demand at least a factor 2.
	c.SamplesMin, c.SamplesMax = 79, 688
	sets, _, _ = Split(indexedDense(3500), c, 1)
	lens := make([]int, len(sets))
	for k, s := range sets {
		lens[k] = s.Len()
	}
	if slices.Max(lens) < 2*slices.Min(lens) {
		t.Errorf("sizes %v are nearly equal despite the range [79, 688]", lens)
	}
}

// Noise perturbs only stored entries, keeps the sparsity pattern and labels,
// leaves the test set and the input untouched, and has the configured
// variance: each agent gets m ≈ 29500 rows whose second entry was exactly 1,
// and the sample variance of its noise has relative standard error
// √(2/m) ≈ 0.82%, so ±6% is over seven standard errors.
func TestSplitNoise(t *testing.T) {
	all := indexedSparse(60000)
	orig := &Set{Dim: all.Dim, RowPtr: slices.Clone(all.RowPtr), Col: slices.Clone(all.Col), Val: slices.Clone(all.Val), Y: slices.Clone(all.Y)}
	c := SplitConfig{Agents: 2, SamplesMin: 1, SamplesMax: 1, TestSamples: 1000, NoiseVarMin: 0.3, NoiseVarMax: 0.3}
	sets, test, err := Split(all, c, 8)
	if err != nil {
		t.Fatal(err)
	}
	if !sparseEqual(all, orig) {
		t.Fatal("Split modified its input")
	}
	for n := 0; n < test.Len(); n++ {
		id := int(test.Val[test.RowPtr[n]])
		if !slices.Equal(test.Val[test.RowPtr[n]:test.RowPtr[n+1]], all.Val[all.RowPtr[id]:all.RowPtr[id+1]]) {
			t.Fatalf("test row %d is not an exact copy of sample %d", n, id)
		}
	}
	for k, s := range sets {
		if err := wellFormed(s, true); err != nil {
			t.Fatal(err)
		}
		var sq float64
		for n := 0; n < s.Len(); n++ {
			cols := s.Col[s.RowPtr[n]:s.RowPtr[n+1]]
			vals := s.Val[s.RowPtr[n]:s.RowPtr[n+1]]
			if len(cols) != 2 || cols[0] != 0 {
				t.Fatalf("agent %d row %d: columns %v, want the pattern [0 j]", k, n, cols)
			}
			d := vals[1] - 1 // the second entry was exactly 1
			sq += d * d
		}
		if v := sq / float64(s.Len()); math.Abs(v-0.3) > 0.06*0.3 {
			t.Errorf("agent %d: noise variance %v, want 0.3 ± 6%%", k, v)
		}
	}
}

func TestSplitErrors(t *testing.T) {
	all := indexedDense(10)
	for _, tc := range []struct {
		c    SplitConfig
		want string
	}{
		{SplitConfig{Agents: 0, SamplesMin: 1, SamplesMax: 1}, "agents:"},
		{SplitConfig{Agents: 1 << 32, SamplesMin: 1, SamplesMax: 1}, "agents:"},
		{SplitConfig{Agents: 2, SamplesMin: 3, SamplesMax: 2}, "samples:"},
		{SplitConfig{Agents: 2, SamplesMin: 1, SamplesMax: 1 << 40}, "samples:"},
		{SplitConfig{Agents: 2, SamplesMin: 1, SamplesMax: 1, TestSamples: -1}, "test_samples:"},
		{SplitConfig{Agents: 2, SamplesMin: 1, SamplesMax: 1, NoiseVarMax: math.NaN()}, "noise_variance:"},
		{SplitConfig{Agents: 5, SamplesMin: 1, SamplesMax: 1, TestSamples: 6}, "test_samples: holding out 6 of 10 samples leaves 4 for 5 agents"},
		{SplitConfig{Agents: 11, SamplesMin: 1, SamplesMax: 1}, "test_samples: holding out 0 of 10 samples leaves 10 for 11 agents"},
	} {
		if _, _, err := Split(all, tc.c, 1); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error starting %q", tc.c, err, tc.want)
		}
	}
}
