package fedavg

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"google.golang.org/protobuf/encoding/protowire"

	"maple/privacy/accountant"
)

// PrivateClient is implemented by a Client whose local training is
// differentially private at the level of the agent's samples (DP-SGD,
// Abadi et al., CCS 2016): the Ledger composes its steps.
type PrivateClient interface {
	Client
	// StepRDP returns the Rényi DP at order alpha > 1 of one local step on
	// a dataset of samples samples with (expected) mini-batch size batch,
	// under the neighbouring relation of its sampling; +Inf where the bound
	// has no value (fractional orders of fixed-size sampling).
	StepRDP(alpha float64, samples, batch int) float64
	// SampleDelta is the δ of its (ε, δ) guarantee.
	SampleDelta() float64
	// Mechanism says what the guarantee is of, for the report.
	Mechanism() string
}

// Ledger accounts for a run's privacy round by round in Rényi DP, at
// accountant.DefaultOrders, and converts it to (ε, δ) with the conversion
// of Balle et al. 2020:
//
//   - client level (DP-FedAvg): each round releases the noisy sum of the
//     clipped updates of a fixed-size sample of q = L/K of the agents,
//     under the replace-one relation (one agent's data replaced), so that
//     the sensitivity of the sum is 2C: the Gaussian mechanism with noise
//     multiplier z/2 (central DP) or the distributed discrete Gaussian of
//     the round's surviving clients (accountant.DDG.ReplaceOneRDP),
//     amplified by the sampling (accountant.SubsampledRDP, Wang, Balle &
//     Kasiviswanathan 2019); a round that releases nothing costs nothing;
//   - sample level (DP-SGD inside the clients): each round, the agent with
//     the largest sampling rate B_max/N_min takes E_max local steps, and is
//     assumed drawn in every round (no amplification by the sampling of
//     agents): an upper bound for every agent.
type Ledger struct {
	cfg     *Config
	dim     int
	orders  []float64
	client  []float64 // accumulated RDP at orders; nil without DP-FedAvg
	sample  []float64 // nil without a PrivateClient
	priv    PrivateClient
	samples int
	// The RDP of one round at orders: the client level's by number of
	// survivors (it depends on them under distributed DP only), the sample
	// level's.
	clientSteps map[int][]float64
	sampleStep  []float64
}

// Guarantee is an (ε, δ) guarantee and the Rényi order that gave it.
type Guarantee struct {
	Epsilon, Delta, Order float64
}

// NewLedger returns the ledger of a run of cfg on models of dim
// coordinates whose smallest local dataset has minSamples samples.
func NewLedger(cfg *Config, dim, minSamples int) *Ledger {
	l := &Ledger{cfg: cfg, dim: dim, orders: accountant.DefaultOrders(), samples: minSamples, clientSteps: map[int][]float64{}}
	if cfg.DP.Mode != NoDP {
		l.client = make([]float64, len(l.orders))
	}
	if p, ok := cfg.client().(PrivateClient); ok {
		l.priv = p
		l.sample = make([]float64, len(l.orders))
	}
	return l
}

// Active reports whether the run has any guarantee to account for.
func (l *Ledger) Active() bool { return l.client != nil || l.sample != nil }

// Clients reports whether the ledger gives a client-level guarantee, and
// Samples whether it gives a sample-level one.
func (l *Ledger) Clients() bool { return l.client != nil }

// Samples reports whether the ledger gives a sample-level guarantee.
func (l *Ledger) Samples() bool { return l.sample != nil }

// Round accounts for one more round: released says whether the server
// released a noisy sum (a round whose secure aggregation failed releases
// nothing), survivors the number of clients whose noise shares the sum
// holds under distributed DP. It returns the guarantees after the round.
func (l *Ledger) Round(released bool, survivors int) (client, sample Guarantee) {
	if l.client != nil && released && (l.cfg.DP.Mode != DistributedDP || survivors > 0) {
		if l.cfg.DP.Mode != DistributedDP {
			survivors = 0 // the round's RDP does not depend on them
		}
		step, ok := l.clientSteps[survivors]
		if !ok {
			f := l.clientStep(survivors)
			step = make([]float64, len(l.orders))
			for i, a := range l.orders {
				step[i] = f(a)
			}
			l.clientSteps[survivors] = step
		}
		floats.Add(l.client, step)
	}
	if l.sample != nil {
		if l.sampleStep == nil {
			e, b := l.cfg.Epochs.Max, l.cfg.Batch.Max
			l.sampleStep = make([]float64, len(l.orders))
			for i, a := range l.orders {
				l.sampleStep[i] = float64(e) * l.priv.StepRDP(a, l.samples, b)
			}
		}
		floats.Add(l.sample, l.sampleStep)
	}
	if l.client != nil {
		client = l.guarantee(l.client, l.cfg.DP.Delta)
	}
	if l.sample != nil {
		sample = l.guarantee(l.sample, l.priv.SampleDelta())
	}
	return client, sample
}

// clientStep returns one round's client-level RDP as a function of the
// order.
func (l *Ledger) clientStep(survivors int) func(alpha float64) float64 {
	cfg := l.cfg
	q := float64(cfg.Draws()) / float64(cfg.Agents)
	var eps func(alpha float64) float64
	if cfg.DP.Mode == DistributedDP {
		scfg, _ := cfg.SecAggRound(1, l.dim) // validated
		eps = cfg.DDG(scfg.Encoder, l.dim, survivors).ReplaceOneRDP
	} else {
		z := cfg.DP.NoiseMultiplier / 2 // replace-one: sensitivity 2C
		eps = func(alpha float64) float64 { return accountant.GaussianRDP(alpha, z) }
	}
	if q >= 1 {
		return eps
	}
	// The sampling bound holds at integer orders, and needs ε(j) at every
	// j ≤ α: tabulate it once.
	last := int(l.orders[len(l.orders)-1])
	table := make([]float64, last+1)
	for j := 2; j <= last; j++ {
		table[j] = eps(float64(j))
	}
	return func(alpha float64) float64 {
		if alpha != math.Trunc(alpha) {
			return math.Inf(1)
		}
		return accountant.SubsampledRDP(int(alpha), q, func(j int) float64 { return table[j] })
	}
}

// guarantee converts accumulated RDP into the best (ε, δ) over the orders.
func (l *Ledger) guarantee(rdp []float64, delta float64) Guarantee {
	best := Guarantee{Epsilon: math.Inf(1), Delta: delta}
	for i, a := range l.orders {
		if math.IsInf(rdp[i], 1) {
			continue
		}
		if e := accountant.Balle2020.Epsilon(rdp[i], a, delta); e < best.Epsilon {
			best.Epsilon, best.Order = e, a
		}
	}
	return best
}

// DoneWireSize returns the length of the protobuf encoding of the Done a
// server sends the scheduler with its privacy ledger's entry (msg.Done
// holding a msg.PrivacyLedger of these six doubles, each present when not
// zero), as proto.Size computes it; 0 without an entry.
func DoneWireSize(entry []float64) int {
	if entry == nil {
		return 0
	}
	ledger := 0
	for i, v := range entry {
		if v != 0 {
			ledger += protowire.SizeTag(protowire.Number(i+1)) + 8
		}
	}
	return protowire.SizeTag(1) + protowire.SizeBytes(ledger)
}

// LedgerEntry returns the six fields of a PrivacyLedger in their protobuf
// order: client ε and δ, sample ε and δ, z and the next round's C (the last
// two under DP-FedAvg only).
func (s *Server) LedgerEntry(client, sample Guarantee) []float64 {
	e := []float64{client.Epsilon, client.Delta, sample.Epsilon, sample.Delta, 0, 0}
	if s.cfg.DP.Mode != NoDP {
		e[4], e[5] = s.cfg.DP.NoiseMultiplier, s.Clip()
	}
	return e
}
