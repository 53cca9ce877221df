package fedavg

import (
	"google.golang.org/protobuf/encoding/protowire"

	"maple/privacy/ledger"
)

// PrivateClient is implemented by a Client whose local training is
// differentially private at the level of the agent's samples (DP-SGD,
// Abadi et al., CCS 2016): the Ledger composes its steps.
type PrivateClient interface {
	Client
	// Step returns what one local step on a dataset of samples samples
	// with (expected) mini-batch size batch releases, as an accountant
	// composes it.
	Step(samples, batch int) ledger.Round
	// SampleAccountant is the accountant that composes the steps, and
	// SampleDelta the δ of the (ε, δ) guarantee.
	SampleAccountant() ledger.Kind
	SampleDelta() float64
	// Mechanism says what the guarantee is of, for the report.
	Mechanism() string
}

// Ledger accounts for a run's privacy round by round (privacy/ledger):
//
//   - client level (DP-FedAvg): each round that releases a noisy sum of
//     clipped updates is one ledger.Round (Config.Round: its sampling, the
//     declared relation and its noise — under distributed DP, that of the
//     round's surviving clients), composed by the accountant the scenario
//     chose; a round that releases nothing costs nothing;
//   - sample level (DP-SGD inside the clients): each round the agent with
//     the largest sampling rate B_max/N_min takes E_max local steps, and is
//     assumed drawn in every round (no amplification by the sampling of
//     agents): an upper bound for every agent.
type Ledger struct {
	cfg     *Config
	dim     int
	client  *ledger.Ledger // nil without DP-FedAvg
	sample  *ledger.Ledger // nil without a PrivateClient
	priv    PrivateClient
	samples int
	// The client level's round by number of survivors (it depends on them
	// under distributed DP only).
	rounds map[int]ledger.Round
}

// Guarantee is an (ε, δ) guarantee and, from the Rényi DP accountant, the
// order that gave it (0 otherwise).
type Guarantee = ledger.Guarantee

// NewLedger returns the ledger of a run of cfg on models of dim
// coordinates whose smallest local dataset has minSamples samples.
func NewLedger(cfg *Config, dim, minSamples int) *Ledger {
	l := &Ledger{cfg: cfg, dim: dim, samples: minSamples, rounds: map[int]ledger.Round{}}
	if cfg.DP.Mode != NoDP {
		l.client = cfg.NewClientLedger()
	}
	if p, ok := cfg.client().(PrivateClient); ok {
		l.priv = p
		l.sample = ledger.New(p.SampleAccountant(), ledger.RunOptions)
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
// The rounds were checked with the configuration (Config.Validate), so
// the ledgers refuse none.
func (l *Ledger) Round(released bool, survivors int) (client, sample Guarantee) {
	if l.client != nil && released && (l.cfg.DP.Mode != DistributedDP || survivors > 0) {
		if l.cfg.DP.Mode != DistributedDP {
			survivors = 0 // the round's mechanism does not depend on them
		}
		r, ok := l.rounds[survivors]
		if !ok {
			r = l.cfg.Round(l.dim, survivors)
			l.rounds[survivors] = r
		}
		must(l.client.Compose(r))
	}
	if l.sample != nil {
		step := l.priv.Step(l.samples, l.cfg.Batch.Max)
		for range l.cfg.Epochs.Max {
			must(l.sample.Compose(step))
		}
	}
	var err error
	if l.client != nil {
		client, err = l.client.Guarantee(l.cfg.DP.Delta)
		must(err)
	}
	if l.sample != nil {
		sample, err = l.sample.Guarantee(l.priv.SampleDelta())
		must(err)
	}
	return client, sample
}

// must panics on an error the configuration's validation rules out.
func must(err error) {
	if err != nil {
		panic("fedavg: ledger: " + err.Error())
	}
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
