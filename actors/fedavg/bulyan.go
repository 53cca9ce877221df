package fedavg

import (
	"slices"

	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// Bulyan (El Mhamdi, Guerraoui and Rouault, "The hidden vulnerability of
// distributed learning in Byzantium", ICML 2018): Krum applied again and
// again selects θ = n − 2f of the n replies, then every coordinate averages
// the β = θ − 2f selected values closest to their median. Krum alone keeps
// a reply close to the others in norm, which lets an adversary hide a large
// change in a single coordinate; the median step bounds every coordinate.

func init() {
	RegisterServer(Server{
		Name:   "bulyan",
		Doc:    "Bulyan (El Mhamdi et al. 2018): Krum selects n − 2f replies one by one, then each coordinate averages the n − 4f selected values closest to their median",
		Params: bulyan{F: 1},
	})
}

// bulyan is the server's parameters, and its combination rule.
type bulyan struct {
	F int `yaml:"f" range:"[0, inf)" doc:"Byzantine replies tolerated per round: a round needs at least 4f + 3 replies"`
}

// Validate checks the paper's condition n ≥ 4f + 3 on the replies of a full
// round.
func (b bulyan) Validate(cfg *fedavg.Config) error {
	n := cfg.Draws()
	switch {
	case n < 3:
		return params.Errorf("f", "Bulyan tolerates f Byzantine replies among n ≥ 4f + 3, and a round has n = %d replies: it needs at least 3", n)
	case n < 4*b.F+3:
		return params.Errorf("f", "Bulyan tolerates f Byzantine replies among n ≥ 4f + 3, and a round has n = %d replies: f must be at most %d", n, (n-3)/4)
	}
	return nil
}

// Combine implements fedavg.Rule. The selection takes, θ = n − 2f times,
// the reply Krum (with the same f) scores best among those not yet taken
// (krumOrder: ties to the lower slot); then, per coordinate, the β = θ − 2f
// selected values closest to their median are averaged. A round closed
// early with fewer replies than the paper needs selects and keeps at least
// one.
func (b bulyan) Combine(model []float64, replies [][]float64, share fedavg.Share, mu float64) {
	n := len(replies)
	if n == 0 {
		return
	}
	theta := max(n-2*b.F, 1)
	beta := max(theta-2*b.F, 1)
	left := slices.Clone(replies)
	selected := make([][]float64, 0, theta)
	for range theta {
		best := krumOrder(left, b.F)[0]
		selected = append(selected, left[best])
		left = slices.Delete(left, best, best+1)
	}
	column := make([]float64, theta)
	for j := range model {
		for i, r := range selected {
			column[i] = r[j]
		}
		v := meanNearMedian(column, beta)
		if share == fedavg.Updates {
			model[j] -= mu * v
		} else {
			model[j] = v
		}
	}
}

// meanNearMedian returns the mean of the beta values of column closest to
// its median (the mean of the two middle values when their number is even),
// sorting column in place. They are consecutive once sorted: from the whole
// column, the end farther from the median is dropped until beta remain, the
// upper one on a tie.
func meanNearMedian(column []float64, beta int) float64 {
	slices.Sort(column)
	n := len(column)
	med := (column[(n-1)/2] + column[n/2]) / 2
	lo, hi := 0, n
	for hi-lo > beta {
		if med-column[lo] > column[hi-1]-med {
			lo++
		} else {
			hi--
		}
	}
	var sum float64
	for _, v := range column[lo:hi] {
		sum += v
	}
	return sum / float64(beta)
}
