package fedavg

import (
	"maple/privacy/accountant"
	"maple/privacy/accountant/pld"
	"maple/privacy/ledger"
)

// This file is the seam between DP-FedAvg's rounds and the accountant that
// composes them (privacy/ledger): Config.Round says what one round releases
// — its noise, its sampling and the neighbouring relation the scenario
// declares — and Config.NewClientLedger the ledger that composes the run's
// rounds with the accountant the scenario chose.

// Round returns what one of the run's rounds releases under DP-FedAvg,
// whose noise survivors clients added (distributed DP; dim is the model's
// dimension): the Gaussian noise z·C on the sum of the updates clipped to C
// of the agents sampled at q = L/K — fixed-size sampling, Poisson sampling,
// or every agent (q = 1) — under the declared relation, or the distributed
// discrete Gaussian of the survivors' shares.
func (c *Config) Round(dim, survivors int) ledger.Round {
	s := accountant.FixedSize
	if c.Participation == Poisson {
		s = accountant.Poisson
	}
	r := ledger.Round{Mechanism: pld.GaussianMechanism(c.DP.NoiseMultiplier, min(c.Rate(), 1), s, c.DP.Relation)}
	if c.DP.Mode == DistributedDP {
		scfg, _ := c.SecAggRound(1, c.Draws(), dim) // validated
		r.Distributed, r.DDG = true, c.DDG(scfg.Encoder, dim, survivors)
	}
	return r
}

// NewClientLedger returns an empty ledger of the run's client-level
// guarantee, with the accountant the scenario chose (DP.Accountant).
func (c *Config) NewClientLedger() *ledger.Ledger {
	return ledger.New(c.DP.Accountant, ledger.RunOptions)
}
