package fedavg

import (
	"maple/algorithms/data"
	"maple/privacy/secagg"
)

// Observation keys of secure aggregation and DP, which the actor behaviours
// and the references report in the round concerned (outside the protocol):
const (
	// ObsSecAggCosts is a round's traffic (SecAggCosts); the server reports
	// it when the round ends, completed or failed.
	ObsSecAggCosts = "secagg/costs"
	// ObsSecAggEncoding is what putting one client's input on the grid did
	// (Encoding.Observation): [slot, ‖x̃ − x‖², ‖update‖², clipped
	// coordinates]. The client reports it once its input is encoded.
	ObsSecAggEncoding = "secagg/encoding"
	// ObsSecAggIncluded is the number of clients whose inputs a completed
	// round's sum holds: [|U₃|].
	ObsSecAggIncluded = "secagg/included"
	// ObsSecAggSkipped is a round of Poisson participation with fewer than
	// MinSecAggClients clients, which secure aggregation skips: [n].
	ObsSecAggSkipped = "secagg/skipped"
	// ObsSecAggFailed is a round whose secure aggregation failed:
	// [phase, client (−1 for the round's count), survivors, threshold].
	ObsSecAggFailed = "secagg/failed"
	// ObsPrivacy is the ledger's guarantees after a round:
	// [client-level ε, sample-level ε] (0 for a level the run lacks).
	ObsPrivacy = "privacy/epsilon"
)

// SecAggCostFields is the length of an ObsSecAggCosts vector: the models
// the server sent (messages, bytes), then for each of the four phases the
// messages and bytes all clients sent and those the server sent.
const SecAggCostFields = 2 + 4*int(secagg.PhaseCount)

// SecAggCosts returns the ObsSecAggCosts vector of a round whose server
// sent models GlobalModels of modelBytes bytes in all and whose protocol
// traffic is c (payload sizes, secagg.Message.Size).
func SecAggCosts(models, modelBytes int, c *secagg.Costs) []float64 {
	v := make([]float64, 0, SecAggCostFields)
	v = append(v, float64(models), float64(modelBytes))
	for _, p := range secagg.Phases() {
		var sent secagg.Count
		for u := range c.Clients() {
			sent = sent.Add(c.Client(p, u).Sent)
		}
		srv := c.Server(p).Sent
		v = append(v, float64(sent.Messages), float64(sent.Bytes), float64(srv.Messages), float64(srv.Bytes))
	}
	return v
}

// ModelBytes returns the bytes of the GlobalModels a synchronous server
// sends in a round to its draws draws, for models of dim coordinates: their
// protobuf sizes, as the actor engine counts them (with the round's number
// of clients when the server announces it, Announces).
func (c *Config) ModelBytes(draws, dim int) int {
	n := 0
	for slot := range draws {
		n += ModelWireSize(int32(slot), dim)
		if c.Announces() {
			n += ClientsWireSize(draws)
		}
	}
	return n
}

// ReplyBytes returns the bytes of the replies of a round in which every
// one of draws draws answers in the clear (LocalModel or LocalUpdate), for
// models of dim coordinates: the traffic secure aggregation replaces.
func (c *Config) ReplyBytes(draws, dim int) int {
	n := 0
	for slot := range draws {
		n += ReplyWireSize(int32(slot), dim)
	}
	return n
}

// MinSamples returns the size of the smallest dataset of src: the agent
// with the largest sampling rate of DP-SGD. A generated source is drawn
// agent by agent (one pass, data.Each).
func MinSamples(src data.Source) int {
	n := 0
	if err := data.Each(src, func(k int, s *data.Set) error {
		if k == 0 || s.Len() < n {
			n = s.Len()
		}
		return nil
	}); err != nil {
		panic(err) // f returns none
	}
	return n
}

// LedgerSamples returns what NewLedger takes of src: the smallest dataset
// (MinSamples) when cfg's client is differentially private at the level of
// the samples (PrivateClient), the only ledger that needs it, and 0
// otherwise, sparing a pass over lazily drawn agents.
func LedgerSamples(cfg *Config, src data.Source) int {
	if _, ok := cfg.client().(PrivateClient); !ok {
		return 0
	}
	return MinSamples(src)
}
