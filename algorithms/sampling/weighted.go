package sampling

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
)

// This file holds the samplers with prescribed, unequal probabilities of
// importance sampling (thesis §2.1.2 and §2.4.3): independent weighted draws,
// and Hartley–Rao systematic sampling without replacement with prescribed
// inclusion probabilities.

// Weighted fills dst with len(dst) indices drawn independently (with
// replacement), index k with probability p[k]/Σp, sorted ascending. p must be
// non-negative with a positive sum. u is scratch of length at least len(dst).
//
// It draws len(dst) uniform variates, sorts them and walks the cumulative
// sums of p once: O(len(p) + len(dst)·log len(dst)) and no allocation. An
// index with p[k] = 0 is never drawn.
func Weighted(dst []int, p, u []float64, r *rand.Rand) {
	var total float64
	for _, v := range p {
		total += v
	}
	u = u[:len(dst)]
	for i := range u {
		u[i] = r.Float64() * total
	}
	slices.Sort(u)
	last := lastPositive(p)
	k, hi := -1, 0.0 // index k covers [hi − p[k], hi)
	for i, target := range u {
		for (k < 0 || hi <= target || p[k] == 0) && k < last {
			k++
			hi += p[k]
		}
		dst[i] = k
	}
}

// Systematic fills dst with n = len(dst) distinct indices by Hartley and
// Rao's systematic sampling with unequal probabilities (the sampler of thesis
// eq. 2.55): with the progressive totals Π_k = π_0 + … + π_k of the inclusion
// probabilities π (Σπ = n, every π_k ≤ 1, as Inclusion returns them), it draws
// one d uniform in [0, 1) and selects, for ℓ = 0, …, n−1, the index k with
// Π_{k−1} ≤ d + ℓ < Π_k. Index k is then included with probability exactly
// π_k, whatever the other π's. The result is sorted ascending.
//
// With order non-nil (scratch of length len(π)), the population is first put
// in a random order drawn from r, as in Hartley and Rao's original scheme:
// the inclusion probabilities are unchanged, but pairs of neighbours in the
// list are no longer always or never selected together. Without it the
// selection follows the index order, as in the thesis.
func Systematic(dst []int, pi []float64, order []int, r *rand.Rand) {
	if order != nil {
		order = order[:len(pi)]
		for i := range order {
			order[i] = i
		}
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	}
	systematicAt(dst, pi, order, r.Float64())
	sortIndices(dst)
}

// systematicAt is Systematic for a given start d ∈ [0, 1), visiting the
// indices in the given order (nil: ascending, systematicInOrder). The targets
// d + ℓ are scaled by Σπ/n so that rounding in the totals cannot push the
// last one past the end; should rounding put two targets in one index's
// interval (only possible within ~1e-16 of a boundary) the second moves to
// the next index with a positive π, so the selection stays n distinct
// indices.
func systematicAt(dst []int, pi []float64, order []int, d float64) {
	if order == nil {
		systematicInOrder(dst, pi, d)
		return
	}
	var total float64
	last := -1
	for j, k := range order {
		total += pi[k]
		if pi[k] > 0 {
			last = j
		}
	}
	scale := total / float64(len(dst))
	j, hi := -1, 0.0 // position j covers [hi − π, hi)
	for l := range dst {
		target := (d + float64(l)) * scale
		prev := j
		for (j <= prev || hi <= target || pi[order[j]] == 0) && j < last {
			j++
			hi += pi[order[j]]
		}
		dst[l] = order[j]
	}
}

// systematicInOrder is systematicAt visiting the indices in ascending order:
// the same sums and comparisons, without the indirection.
func systematicInOrder(dst []int, pi []float64, d float64) {
	var total float64
	last := -1
	for k, v := range pi {
		total += v
		if v > 0 {
			last = k
		}
	}
	scale := total / float64(len(dst))
	k, hi := -1, 0.0 // index k covers [hi − π_k, hi)
	for l := range dst {
		target := (d + float64(l)) * scale
		prev := k
		for (k <= prev || hi <= target || pi[k] == 0) && k < last {
			k++
			hi += pi[k]
		}
		dst[l] = k
	}
}

// lastPositive returns the last index with p[k] > 0, or −1.
func lastPositive(p []float64) int {
	for k := len(p) - 1; k >= 0; k-- {
		if p[k] > 0 {
			return k
		}
	}
	return -1
}

// ErrTooFewPositive is returned by Inclusion when fewer indices have a
// positive probability than the sample needs.
var ErrTooFewPositive = errors.New("fewer indices with a positive probability than the sample size")

// Inclusion sets dst to the inclusion probabilities of a sample of n distinct
// indices drawn in proportion to p (non-negative, not necessarily normalized):
// π_k = n·p_k/Σp, except that no π_k may exceed 1. The indices that would are
// capped at 1 and the excess is shared among the others in proportion to p,
// repeatedly, until none exceeds 1 — the standard treatment of large units in
// πps sampling, which the thesis does not address (spec §1.7). The result sums
// to n (up to rounding) with every π_k ≤ 1; the normalized inclusion
// probabilities the estimators weigh by are π_k/n. dst and p may be the same
// slice.
//
// The capped indices are always those whose p_k reaches a threshold t, so the
// loop only lowers t: t = S/(n − c), where c indices are capped and S is the
// sum of the other p's. Each pass caps at least one more index, so there are
// at most n passes of O(len(p)) and no allocation; a pass counts the capped
// indices, sums the others and finds their largest, which decides whether
// the next threshold caps one more (and the first pass counts the positive
// p's too): without capping, one pass and the scaling.
func Inclusion(dst, p []float64, n int) error {
	threshold := math.Inf(1)
	capped, positive, rest, top := tally(p, threshold)
	if positive < n {
		return ErrTooFewPositive
	}
	for capped != n {
		next := rest / float64(n-capped)
		if !(top >= next) { // no uncapped p_k ≥ next
			break
		}
		threshold = next
		capped, _, rest, top = tally(p, threshold)
	}
	scale := 0.0
	if capped < n {
		scale = float64(n-capped) / rest
	}
	for k, v := range p {
		if v >= threshold {
			dst[k] = 1
		} else {
			dst[k] = v * scale
		}
	}
	return nil
}

// tally returns, for Inclusion's threshold t, the number of p's at or above
// t (capped), the number of positive p's, the sum in index order of the
// others (those below t, and NaNs) and the largest of those below t (−∞ if
// none: NaNs are not compared).
func tally(p []float64, threshold float64) (capped, positive int, rest, top float64) {
	top = math.Inf(-1)
	for _, v := range p {
		if v > 0 {
			positive++
		}
		if v >= threshold {
			capped++
			continue
		}
		rest += v
		if v > top {
			top = v
		}
	}
	return capped, positive, rest, top
}
