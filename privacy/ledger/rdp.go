package ledger

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/floats"

	"maple/privacy/accountant"
)

// rdpState is the Rényi DP accountant's state: the RDP of the rounds so far
// at accountant.DefaultOrders.
type rdpState struct {
	orders []float64
	total  []float64
}

// rdpSteps holds one round's RDP at accountant.DefaultOrders by Round, for
// every ledger of the process: tabulating a thousand orders of the sampled
// Gaussian costs far more than a run's other accounting, and every run of
// a curve has the same rounds.
var rdpSteps sync.Map // Round → []float64

func newRDP() *rdpState {
	o := accountant.DefaultOrders()
	return &rdpState{orders: o, total: make([]float64, len(o))}
}

// compose adds one round of r, which Check(RDP, r) accepted.
func (s *rdpState) compose(r Round) {
	v, ok := rdpSteps.Load(r)
	if !ok {
		f := s.round(r)
		step := make([]float64, len(s.orders))
		for i, alpha := range s.orders {
			step[i] = f(alpha)
		}
		v, _ = rdpSteps.LoadOrStore(r, step)
	}
	floats.Add(s.total, v.([]float64))
}

// round returns one round's RDP as a function of the order:
//
//   - Poisson sampling, add/remove: the exact RDP of the sampled Gaussian
//     mechanism (accountant.PoissonGaussianRDP, Mironov, Talwar & Zhang
//     2019), at every order;
//   - fixed-size sampling, replace-one, Gaussian noise of multiplier z (so
//     z/2 for the sensitivity 2C) or the distributed discrete Gaussian
//     (accountant.DDG.ReplaceOneRDP): Wang, Balle & Kasiviswanathan 2019,
//     Thm 9 (accountant.SubsampledRDP), at integer orders;
//   - every record in every round: the Gaussian mechanism of sensitivity C
//     (add/remove) or 2C (replace-one), or the distributed discrete
//     Gaussian.
func (s *rdpState) round(r Round) func(alpha float64) float64 {
	m := r.Mechanism
	z := m.NoiseMultiplier
	if m.Relation == accountant.ReplaceOne {
		z /= 2 // sensitivity 2C
	}
	eps := func(alpha float64) float64 { return accountant.GaussianRDP(alpha, z) }
	if r.Distributed {
		eps = r.DDG.ReplaceOneRDP
	}
	switch {
	case m.Rate >= 1:
		return eps
	case m.Sampling == accountant.Poisson:
		return func(alpha float64) float64 { return accountant.PoissonGaussianRDP(alpha, m.Rate, m.NoiseMultiplier) }
	}
	// The sampling bound holds at integer orders, and needs ε(j) at every
	// j ≤ α: tabulate it once.
	last := int(s.orders[len(s.orders)-1])
	table := make([]float64, last+1)
	for j := 2; j <= last; j++ {
		table[j] = eps(float64(j))
	}
	return func(alpha float64) float64 {
		if alpha != math.Trunc(alpha) {
			return math.Inf(1)
		}
		return accountant.SubsampledRDP(int(alpha), m.Rate, func(j int) float64 { return table[j] })
	}
}

// epsilon converts the RDP so far into the best (ε, δ) over the orders.
func (s *rdpState) epsilon(delta float64) (eps, order float64) {
	eps = math.Inf(1)
	for i, a := range s.orders {
		if math.IsInf(s.total[i], 1) || math.IsNaN(s.total[i]) {
			continue
		}
		if e := accountant.Balle2020.Epsilon(s.total[i], a, delta); e < eps {
			eps, order = e, a
		}
	}
	return eps, order
}
