package fedavg

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"maple/internal/enum"
	"maple/privacy/accountant"
)

// This file is the seam between DP-FedAvg's rounds and the accountant that
// composes them: RoundMechanism says what one round releases (its noise,
// its sampling and the neighbouring relation it is accounted under),
// RoundAccountant composes such rounds into an (ε, δ) guarantee, and
// Config.RoundAccountant chooses the accountant of a run — today the Rényi
// DP one (RDPAccountant); a privacy-loss-distribution accountant plugs in
// there without touching the ledger or the engines.

// Relation is the neighbouring relation a client-level guarantee is stated
// for.
type Relation int

const (
	// ReplaceOne: one agent's whole local dataset replaced by another, the
	// agents' number fixed. A sum of updates clipped to C moves by up to 2C.
	// It is the relation under which fixed-size sampling is accounted.
	ReplaceOne Relation = iota
	// AddRemove: one agent added or removed. A sum of updates clipped to C
	// moves by up to C. It is the relation under which Poisson sampling is
	// accounted (DP-FedAvg as McMahan et al. 2018 state it).
	AddRemove
)

var relationNames = enum.Of[Relation]("relation", "replace-one", "add-remove")

// String returns the relation's name.
func (r Relation) String() string { return relationNames.String(r) }

// RoundMechanism is one round of DP-FedAvg as an accountant sees it: the
// noisy sum of the clipped updates of a sample of the agents, released
// once.
type RoundMechanism struct {
	// Sampling is how the round's agents were chosen, Rate the probability
	// q that a given agent is (1: every agent, no amplification).
	Sampling accountant.Sampling
	Rate     float64
	// Relation is the neighbouring relation the round is accounted under.
	Relation Relation
	// NoiseMultiplier is z: the Gaussian noise on the sum of the clipped
	// updates has standard deviation z·C (central DP).
	NoiseMultiplier float64
	// Distributed, if set, makes the round's noise the distributed discrete
	// Gaussian DDG of the clients whose shares the sum holds, instead of
	// N(0, (zC)²).
	Distributed bool
	DDG         accountant.DDG
}

// Describe says in words what the round is: its sampling, its relation and
// its noise.
func (m RoundMechanism) Describe() string {
	noise := fmt.Sprintf("Gaussian noise of multiplier z = %g on the sum", m.NoiseMultiplier)
	if m.Distributed {
		noise = fmt.Sprintf("distributed discrete Gaussian of %d clients' shares", m.DDG.Clients)
	}
	return fmt.Sprintf("%s sampling at rate q = %g, %s neighbours, %s", m.Sampling, m.Rate, m.Relation, noise)
}

// RoundAccountant composes rounds of DP-FedAvg into an (ε, δ) guarantee.
// A run's ledger holds one (Config.RoundAccountant) and gives it every
// round that released a noisy sum.
type RoundAccountant interface {
	// Check reports why the accountant has no bound for rounds of m, nil
	// if it has one. Config.Validate asks it of a run's rounds.
	Check(m RoundMechanism) error
	// Compose adds one round of m (which Check accepts) to the composition.
	Compose(m RoundMechanism)
	// Guarantee returns the (ε, δ) guarantee of the rounds composed so
	// far.
	Guarantee(delta float64) Guarantee
	// Bound names the bound one round of m is accounted with and the
	// conversion to (ε, δ), for the summary.
	Bound(m RoundMechanism) string
}

// RoundAccountant returns the accountant of the run's client-level
// guarantee: Rényi DP at accountant.DefaultOrders (RDPAccountant).
func (c *Config) RoundAccountant() RoundAccountant { return NewRDPAccountant() }

// RoundMechanism returns the mechanism of one of the run's rounds under
// DP-FedAvg, whose noise survivors clients added (distributed DP; dim is
// the model's dimension): fixed-size sampling of q = L/K of the agents
// under replace-one neighbours (q = 1 under full participation), or
// Poisson sampling at q = L/K under add/remove neighbours.
func (c *Config) RoundMechanism(dim, survivors int) RoundMechanism {
	m := RoundMechanism{Sampling: accountant.FixedSize, Relation: ReplaceOne, Rate: min(c.Rate(), 1), NoiseMultiplier: c.DP.NoiseMultiplier}
	if c.Participation == Poisson {
		m.Sampling, m.Relation = accountant.Poisson, AddRemove
	}
	if c.DP.Mode == DistributedDP {
		scfg, _ := c.SecAggRound(1, c.Draws(), dim) // validated
		m.Distributed, m.DDG = true, c.DDG(scfg.Encoder, dim, survivors)
	}
	return m
}

// RDPAccountant composes rounds in Rényi DP at accountant.DefaultOrders
// and converts the sum with Balle et al. 2020 (Thm 21), keeping the best
// order. Its bounds:
//
//   - Poisson sampling, add/remove, Gaussian noise: the exact RDP of the
//     sampled Gaussian mechanism (accountant.PoissonGaussianRDP, Mironov,
//     Talwar & Zhang 2019), at every order;
//   - fixed-size sampling, replace-one, Gaussian noise of multiplier z (so
//     z/2 for the sensitivity 2C) or the distributed discrete Gaussian
//     (accountant.DDG.ReplaceOneRDP): Wang, Balle & Kasiviswanathan 2019,
//     Thm 9 (accountant.SubsampledRDP), at integer orders; the unsampled
//     bound at q = 1.
//
// Other pairs of sampling and relation, and the distributed discrete
// Gaussian under Poisson sampling, have no bound here.
type RDPAccountant struct {
	orders []float64
	total  []float64
	steps  map[RoundMechanism][]float64 // one round's RDP at orders, by mechanism
}

// NewRDPAccountant returns an empty Rényi DP accountant.
func NewRDPAccountant() *RDPAccountant {
	o := accountant.DefaultOrders()
	return &RDPAccountant{orders: o, total: make([]float64, len(o)), steps: map[RoundMechanism][]float64{}}
}

// Check implements RoundAccountant.
func (a *RDPAccountant) Check(m RoundMechanism) error {
	switch {
	case m.Sampling == accountant.Poisson && m.Relation == AddRemove && !m.Distributed:
		return nil
	case m.Sampling == accountant.FixedSize && m.Relation == ReplaceOne:
		return nil
	case m.Distributed:
		return fmt.Errorf("the Rényi DP accountant bounds the distributed discrete Gaussian under fixed-size sampling and replace-one neighbours only, not %s sampling with %s neighbours", m.Sampling, m.Relation)
	}
	return fmt.Errorf("the Rényi DP accountant has no bound for %s sampling with %s neighbours", m.Sampling, m.Relation)
}

// Compose implements RoundAccountant. It panics on a mechanism Check
// refuses, which a validated configuration never gives it.
func (a *RDPAccountant) Compose(m RoundMechanism) {
	step, ok := a.steps[m]
	if !ok {
		if err := a.Check(m); err != nil {
			panic("fedavg: " + err.Error())
		}
		f := a.round(m)
		step = make([]float64, len(a.orders))
		for i, alpha := range a.orders {
			step[i] = f(alpha)
		}
		a.steps[m] = step
	}
	floats.Add(a.total, step)
}

// round returns one round's RDP as a function of the order.
func (a *RDPAccountant) round(m RoundMechanism) func(alpha float64) float64 {
	if m.Sampling == accountant.Poisson {
		return func(alpha float64) float64 { return accountant.PoissonGaussianRDP(alpha, m.Rate, m.NoiseMultiplier) }
	}
	eps := func(alpha float64) float64 { return accountant.GaussianRDP(alpha, m.NoiseMultiplier/2) } // sensitivity 2C
	if m.Distributed {
		eps = m.DDG.ReplaceOneRDP
	}
	if m.Rate >= 1 {
		return eps
	}
	// The sampling bound holds at integer orders, and needs ε(j) at every
	// j ≤ α: tabulate it once.
	last := int(a.orders[len(a.orders)-1])
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

// Guarantee implements RoundAccountant.
func (a *RDPAccountant) Guarantee(delta float64) Guarantee {
	return bestGuarantee(a.orders, a.total, delta)
}

// Bound implements RoundAccountant.
func (a *RDPAccountant) Bound(m RoundMechanism) string {
	const conv = "composed in Rényi DP over the orders of accountant.DefaultOrders and converted to (ε, δ) by Balle et al. 2020, Thm 21"
	switch {
	case m.Sampling == accountant.Poisson:
		return "sampled Gaussian mechanism under Poisson sampling and add/remove neighbours (sensitivity C), its exact Rényi DP (Mironov, Talwar & Zhang 2019), " + conv
	case m.Distributed && m.Rate < 1:
		return "distributed discrete Gaussian (Kairouz, Liu & Steinke 2021, Prop. 14 with Thm 1's τ) of the clients whose noise each round's sum holds, sensitivity doubled for replace-one, amplified by fixed-size sampling (Wang, Balle & Kasiviswanathan 2019, Thm 9), " + conv
	case m.Distributed:
		return "distributed discrete Gaussian (Kairouz, Liu & Steinke 2021, Prop. 14 with Thm 1's τ) of the clients whose noise each round's sum holds, sensitivity doubled for replace-one, every agent in every round, " + conv
	case m.Rate < 1:
		return "Gaussian mechanism with noise multiplier z/2 (replace-one sensitivity 2C) amplified by fixed-size sampling without replacement (Wang, Balle & Kasiviswanathan 2019, Thm 9), " + conv
	}
	return "Gaussian mechanism with noise multiplier z/2 (replace-one sensitivity 2C), every agent in every round, " + conv
}

// bestGuarantee converts accumulated RDP at orders into the best (ε, δ)
// over the orders.
func bestGuarantee(orders, rdp []float64, delta float64) Guarantee {
	best := Guarantee{Epsilon: math.Inf(1), Delta: delta}
	for i, a := range orders {
		if math.IsInf(rdp[i], 1) {
			continue
		}
		if e := accountant.Balle2020.Epsilon(rdp[i], a, delta); e < best.Epsilon {
			best.Epsilon, best.Order = e, a
		}
	}
	return best
}
