// Package sampling draws the random index sets of the learning algorithms:
// which agents participate in a round and which samples form a mini-batch.
//
// Every sampler is a pure function of its *rand.Rand stream and its arguments,
// with no hidden state, so that the actor engine and the actor-free reference
// implementations draw identical sets from identical streams. Results are
// returned sorted ascending: contributions are then combined in a fixed order.
package sampling

import (
	"math/rand/v2"
	"slices"
)

// WithReplacement fills dst with len(dst) indices drawn uniformly and
// independently from {0, …, n−1}, then sorts them.
func WithReplacement(dst []int, n int, r *rand.Rand) {
	for i := range dst {
		dst[i] = r.IntN(n)
	}
	sortIndices(dst)
}

// smallSort is the length up to which sortIndices sorts without branching
// on the values.
const smallSort = 16

// sortIndices sorts dst ascending. A mini-batch of a few random indices is
// what insertion sort (slices.Sort's choice below 12 elements) handles
// worst: every comparison is a coin toss for the branch predictor, and in
// graph FL's Fig. 2 (batches of 5 to 10) it took 11 % of the run. Up to
// smallSort elements each new element is carried down the sorted prefix by
// min and max, which compile to conditional moves: k(k−1)/2 comparisons, no
// mispredicted branch. Any correct sort gives the same slice, so the choice
// changes no result.
func sortIndices(dst []int) {
	if len(dst) > smallSort {
		slices.Sort(dst)
		return
	}
	for i := 1; i < len(dst); i++ {
		x := dst[i]
		for j := i; j > 0; j-- {
			a := dst[j-1]
			dst[j], x = max(a, x), min(a, x)
		}
		dst[0] = x
	}
}

// floydLimit is the sample size up to which Floyd's algorithm, whose
// membership test scans the partial sample, beats a permutation of all n
// indices.
const floydLimit = 64

// WithoutReplacement fills dst with len(dst) distinct indices drawn uniformly
// from {0, …, n−1} (every subset of that size is equally likely), sorted
// ascending. It panics if len(dst) > n, which the callers' validation excludes.
//
// Small samples use Floyd's algorithm (len(dst) draws, no allocation); larger
// ones a partial Fisher–Yates shuffle of the identity permutation, which
// records only the entries its swaps moved, so that its time and memory
// grow with len(dst) and not with n (a sample of 100 among 10⁷ agents).
func WithoutReplacement(dst []int, n int, r *rand.Rand) {
	k := len(dst)
	if k > n {
		panic("sampling: sample larger than population")
	}
	if k <= floydLimit {
		floyd(dst, n, r)
	} else {
		moved := make(map[int]int, 2*k) // perm[i] where it differs from i
		at := func(i int) int {
			if v, ok := moved[i]; ok {
				return v
			}
			return i
		}
		for i := 0; i < k; i++ {
			j := i + r.IntN(n-i)
			dst[i], moved[j] = at(j), at(i)
		}
	}
	sortIndices(dst)
}

// floyd is Floyd's sampling algorithm: for j = n−k, …, n−1 draw t uniform in
// {0, …, j} and take t unless already taken, else take j.
func floyd(dst []int, n int, r *rand.Rand) {
	k := len(dst)
	for i, j := 0, n-k; j < n; i, j = i+1, j+1 {
		t := r.IntN(j + 1)
		if slices.Contains(dst[:i], t) {
			t = j
		}
		dst[i] = t
	}
}

// IntInRange returns an integer drawn uniformly from the closed range [lo, hi].
func IntInRange(lo, hi int, r *rand.Rand) int {
	return lo + r.IntN(hi-lo+1)
}
