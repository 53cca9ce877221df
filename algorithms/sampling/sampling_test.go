package sampling

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Every index must be included with probability k/n. Over 200000 draws the
// count of an index is Binomial(200000, k/n) (n=5, k=2: standard deviation
// √(200000·0.4·0.6) ≈ 219), so 6 standard deviations is a bound a correct
// sampler exceeds with probability < 1e-8. Both code paths are exercised by
// forcing k above floydLimit in the second case.
func TestWithoutReplacementInclusionProbabilities(t *testing.T) {
	cases := []struct {
		name string
		n, k int
	}{{"floyd", 5, 2}, {"fisher-yates", floydLimit + 3, floydLimit + 1}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			const draws = 200000
			counts := map[int]int{} // first index → count, a marginal of the subset law
			dst := make([]int, c.k)
			for d := 0; d < draws; d++ {
				WithoutReplacement(dst, c.n, r)
				if !slices.IsSorted(dst) {
					t.Fatalf("sample %v not sorted", dst)
				}
				for i := 1; i < len(dst); i++ {
					if dst[i] == dst[i-1] {
						t.Fatalf("sample %v repeats an index", dst)
					}
				}
				for _, x := range dst {
					if x < 0 || x >= c.n {
						t.Fatalf("index %d out of range", x)
					}
					counts[x]++
				}
			}
			// Inclusion probability of each index is k/n.
			p := float64(c.k) / float64(c.n)
			sd := math.Sqrt(draws * p * (1 - p))
			for x := 0; x < c.n; x++ {
				if dev := math.Abs(float64(counts[x]) - draws*p); dev > 6*sd {
					t.Errorf("index %d included %d times, expected %.0f ± %.0f", x, counts[x], draws*p, sd)
				}
			}
		})
	}
}

func TestSubsetLawFloyd(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const draws = 200000
	counts := map[[2]int]int{}
	dst := make([]int, 2)
	for d := 0; d < draws; d++ {
		WithoutReplacement(dst, 5, r)
		counts[[2]int{dst[0], dst[1]}]++
	}
	if len(counts) != 10 {
		t.Fatalf("saw %d distinct subsets, want 10", len(counts))
	}
	sd := math.Sqrt(draws * 0.1 * 0.9)
	for s, c := range counts {
		if math.Abs(float64(c)-draws*0.1) > 6*sd {
			t.Errorf("subset %v drawn %d times, expected %.0f ± %.0f", s, c, draws*0.1, sd)
		}
	}
}

func TestWithReplacementCoversRangeAndRepeats(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dst := make([]int, 10)
	repeated := false
	for d := 0; d < 1000; d++ {
		WithReplacement(dst, 4, r)
		if !slices.IsSorted(dst) {
			t.Fatalf("sample %v not sorted", dst)
		}
		for i := 1; i < len(dst); i++ {
			repeated = repeated || dst[i] == dst[i-1]
		}
		if dst[0] < 0 || dst[len(dst)-1] >= 4 {
			t.Fatalf("index out of range in %v", dst)
		}
	}
	if !repeated {
		t.Error("10 draws from 4 values never repeated: not sampling with replacement")
	}
}

func TestFullSampleIsPermutation(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	dst := make([]int, 6)
	WithoutReplacement(dst, 6, r)
	if !slices.Equal(dst, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("sampling all 6 of 6 gave %v", dst)
	}
}

func TestIntInRange(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	seen := map[int]bool{}
	for i := 0; i < 1000; i++ {
		v := IntInRange(1, 5, r)
		if v < 1 || v > 5 {
			t.Fatalf("IntInRange(1,5) = %d", v)
		}
		seen[v] = true
	}
	if len(seen) != 5 {
		t.Errorf("IntInRange(1,5) produced only %d distinct values in 1000 draws", len(seen))
	}
}

// Above Floyd's limit, the sparse partial shuffle draws exactly the sample of
// a partial Fisher–Yates shuffle of the whole identity permutation, from the
// same stream, whatever the population.
func TestWithoutReplacementIsThePartialShuffle(t *testing.T) {
	for _, c := range []struct{ k, n int }{{floydLimit + 1, floydLimit + 1}, {100, 150}, {100, 10000}, {500, 501}, {300, 1_000_000}} {
		for seed := range uint64(5) {
			got := make([]int, c.k)
			WithoutReplacement(got, c.n, rand.New(rand.NewPCG(seed, 1)))
			r := rand.New(rand.NewPCG(seed, 1))
			perm := make([]int, c.n)
			for i := range perm {
				perm[i] = i
			}
			for i := 0; i < c.k; i++ {
				j := i + r.IntN(c.n-i)
				perm[i], perm[j] = perm[j], perm[i]
			}
			want := slices.Sorted(slices.Values(perm[:c.k]))
			if !slices.Equal(got, want) {
				t.Fatalf("k = %d, n = %d, seed %d: %v, want %v", c.k, c.n, seed, got, want)
			}
		}
	}
}

// sortIndices must give slices.Sort's result at every length, on either
// side of smallSort, with repeats (values below the length) and without.
func TestSortIndicesIsSlicesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 2*smallSort+1; n++ {
		for trial := range 200 {
			got := make([]int, n)
			for i := range got {
				if trial%2 == 0 {
					got[i] = r.IntN(n + 1)
				} else {
					got[i] = r.IntN(1 << 40)
				}
			}
			want := slices.Sorted(slices.Values(got))
			sortIndices(got)
			if !slices.Equal(got, want) {
				t.Fatalf("n = %d: sortIndices gave %v, want %v", n, got, want)
			}
		}
	}
}

// BenchmarkWithReplacement draws graph FL Fig. 2's mini-batches: 10 of 100.
func BenchmarkWithReplacement(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	dst := make([]int, 10)
	for b.Loop() {
		WithReplacement(dst, 100, r)
	}
}
