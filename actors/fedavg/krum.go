package fedavg

import (
	"cmp"
	"slices"

	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// Krum and multi-Krum (Blanchard, El Mhamdi, Guerraoui and Stainer,
// "Machine learning with adversaries: Byzantine tolerant gradient descent",
// NeurIPS 2017): a server that keeps the replies closest to their
// neighbours and averages them, so that f Byzantine replies cannot drag the
// model away.

func init() {
	RegisterServer(Server{
		Name:   "krum",
		Doc:    "Krum and multi-Krum (Blanchard et al. 2017): the mean of the m replies closest to their n − f − 2 nearest neighbours",
		Params: krum{F: 1, M: 1},
	})
}

// krum is the server's parameters, and its combination rule.
type krum struct {
	F int `yaml:"f" range:"[0, inf)" doc:"Byzantine replies tolerated per round: a round needs more than 2f + 2 replies"`
	M int `yaml:"m" range:"[1, inf)" doc:"replies averaged: 1 is Krum, more is multi-Krum (at most n − f)"`
}

// Validate checks the paper's condition n > 2f + 2 on the replies of a full
// round, and that multi-Krum keeps at most n − f of them.
func (k krum) Validate(cfg *fedavg.Config) error {
	n := cfg.Draws()
	if n <= 2*k.F+2 {
		return params.Errorf("f", "Krum tolerates f Byzantine replies among n > 2f + 2, and a round has n = %d replies: f must be at most %d", n, (n-3)/2)
	}
	if k.M > n-k.F {
		return params.Errorf("m", "multi-Krum averages at most n − f = %d of the %d replies, got %d", n-k.F, n, k.M)
	}
	return nil
}

// Combine implements fedavg.Rule: the mean of the m replies Krum scores
// best (krumOrder), taken in slot order.
func (k krum) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	n := len(replies)
	if n == 0 {
		return
	}
	keep := krumOrder(replies, k.F)[:min(k.M, n)]
	slices.Sort(keep) // averaged in slot order, as every rule combines
	chosen := make([][]float64, len(keep))
	for i, slot := range keep {
		chosen[i] = replies[slot]
	}
	fedavg.Mean(model, chosen, share, mu)
}

// krumOrder returns the slots of the n replies from the best Krum score to
// the worst, ties to the lower slot. Reply i scores the sum of its squared
// distances to its n − f − 2 nearest other replies; with fewer replies than
// the paper needs (a round closed early) each score keeps at least one
// neighbour.
func krumOrder(replies [][]float64, f int) []int {
	n := len(replies)
	neighbours := max(min(n-f-2, n-1), min(1, n-1))
	scores := make([]float64, n)
	dist := make([]float64, 0, n-1)
	for i, ri := range replies {
		dist = dist[:0]
		for j, rj := range replies {
			if j != i {
				dist = append(dist, squaredDistance(ri, rj))
			}
		}
		slices.Sort(dist)
		for _, d := range dist[:neighbours] {
			scores[i] += d
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
	return order
}

// squaredDistance returns ‖a − b‖².
func squaredDistance(a, b []float64) float64 {
	var s float64
	for j := range a {
		d := a[j] - b[j]
		s += d * d
	}
	return s
}
