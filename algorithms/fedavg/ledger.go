package fedavg

import (
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

// Ledger accounts for a run's privacy round by round:
//
//   - client level (DP-FedAvg): each round that releases a noisy sum of
//     clipped updates is one RoundMechanism (Config.RoundMechanism: its
//     sampling, relation and noise — under distributed DP, that of the
//     round's surviving clients), composed by the run's RoundAccountant
//     (Config.RoundAccountant): fixed-size sampling of q = L/K of the
//     agents under replace-one neighbours, or Poisson sampling at q = L/K
//     under add/remove neighbours; a round that releases nothing costs
//     nothing;
//   - sample level (DP-SGD inside the clients): in Rényi DP at
//     accountant.DefaultOrders, converted by Balle et al. 2020, each round
//     the agent with the largest sampling rate B_max/N_min takes E_max
//     local steps, and is assumed drawn in every round (no amplification by
//     the sampling of agents): an upper bound for every agent.
type Ledger struct {
	cfg     *Config
	dim     int
	orders  []float64
	client  RoundAccountant // nil without DP-FedAvg
	sample  []float64       // nil without a PrivateClient
	priv    PrivateClient
	samples int
	// The mechanism of one round by number of survivors (it depends on
	// them under distributed DP only), and the sample level's RDP of one
	// round.
	mechanisms map[int]RoundMechanism
	sampleStep []float64
}

// Guarantee is an (ε, δ) guarantee and the Rényi order that gave it (0
// when the accountant does not work in Rényi DP).
type Guarantee struct {
	Epsilon, Delta, Order float64
}

// NewLedger returns the ledger of a run of cfg on models of dim
// coordinates whose smallest local dataset has minSamples samples.
func NewLedger(cfg *Config, dim, minSamples int) *Ledger {
	l := &Ledger{cfg: cfg, dim: dim, orders: accountant.DefaultOrders(), samples: minSamples, mechanisms: map[int]RoundMechanism{}}
	if cfg.DP.Mode != NoDP {
		l.client = cfg.RoundAccountant()
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
			survivors = 0 // the round's mechanism does not depend on them
		}
		m, ok := l.mechanisms[survivors]
		if !ok {
			m = l.cfg.RoundMechanism(l.dim, survivors)
			l.mechanisms[survivors] = m
		}
		l.client.Compose(m)
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
		client = l.client.Guarantee(l.cfg.DP.Delta)
	}
	if l.sample != nil {
		sample = bestGuarantee(l.orders, l.sample, l.priv.SampleDelta())
	}
	return client, sample
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
