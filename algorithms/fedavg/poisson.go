package fedavg

import (
	"math"
	"math/rand/v2"
)

// PoissonSample writes into dst[:0] the agents of one round of Poisson
// participation among n agents — each taken independently with probability
// q — in ascending order, and returns it. It draws the gaps between
// consecutive agents taken rather than a coin per agent: each gap, the
// number of agents skipped, is Geometric(q), ⌊ln U / ln(1 − q)⌋ for U
// uniform on (0, 1] (P(gap ≥ m) = P(U ≤ (1 − q)^m) = (1 − q)^m), so a round
// costs one draw from r per agent taken plus one, O(qn) work, never O(n):
// what a round of ten million agents can afford. q ≥ 1 takes every agent
// and q ≤ 0 none, without drawing.
func PoissonSample(dst []int, n int, q float64, r *rand.Rand) []int {
	dst = dst[:0]
	switch {
	case q <= 0 || n <= 0:
		return dst
	case q >= 1:
		for k := range n {
			dst = append(dst, k)
		}
		return dst
	}
	lq := math.Log1p(-q) // < 0
	k := -1
	for {
		gap := math.Floor(math.Log(1-r.Float64()) / lq) // ≥ 0; +Inf never (1 − Float64 > 0)
		if gap >= float64(n-1-k) {
			return dst // the next agent taken would be past the last
		}
		k += int(gap) + 1
		dst = append(dst, k)
	}
}
