package secagg

import (
	"fmt"

	"maple/privacy/fixedpoint"
)

// Config is what every party of a round knows in advance.
type Config struct {
	// Clients is n; clients are numbered 0 … n−1.
	Clients int
	// Neighbours is the degree k of the communication graph: n − 1 for
	// SecAgg (the complete graph), fewer for SecAgg+.
	Neighbours int
	// Threshold is t: any t of a client's k + 1 share holders (its
	// neighbours and itself) reconstruct its secrets, fewer learn nothing.
	Threshold int
	// Encoder maps inputs to integers modulo 2^bits; it must have been built
	// for at least Clients summands.
	Encoder fixedpoint.Encoder
	// Dim is the input length m.
	Dim int
	// Round separates the keys and masks of successive rounds.
	Round uint64
}

// Validate reports the first impossible field, named as a scenario's
// secure_aggregation section would name it.
func (c Config) Validate() error {
	switch {
	case c.Clients < 2:
		return fmt.Errorf("clients: secure aggregation needs at least 2 clients, got %d", c.Clients)
	case c.Neighbours < 1 || c.Neighbours > c.Clients-1:
		return fmt.Errorf("neighbours: must lie in [1, %d] for %d clients, got %d", c.Clients-1, c.Clients, c.Neighbours)
	case c.Threshold < 2 || c.Threshold > c.Neighbours+1:
		return fmt.Errorf("threshold: must lie in [2, %d] (the neighbours plus the client itself), got %d", c.Neighbours+1, c.Threshold)
	case c.Encoder.Bits() == 0:
		return fmt.Errorf("bits: no fixed-point encoding")
	case uint64(c.Encoder.Levels())*uint64(c.Clients) > c.Encoder.Mask()>>1:
		return fmt.Errorf("bits: the encoding was built for fewer than %d summands", c.Clients)
	case c.Dim < 1:
		return fmt.Errorf("dim: must be at least 1, got %d", c.Dim)
	}
	return nil
}

// ThresholdError reports a round that cannot complete because fewer than t
// share holders survived a phase.
type ThresholdError struct {
	Phase Phase
	// Client is the client whose surviving share holders fell below the
	// threshold, or −1 when the count is the round's (the complete graph,
	// where every client's holders are all the survivors).
	Client int
	// Survivors is the number that survived: clients, or share holders of
	// Client.
	Survivors int
	Threshold int
}

// Error names the phase, the client when the graph is sparse, and the counts.
func (e *ThresholdError) Error() string {
	if e.Client < 0 {
		return fmt.Sprintf("secagg: %v: %d clients survived, threshold %d", e.Phase, e.Survivors, e.Threshold)
	}
	return fmt.Sprintf("secagg: %v: client %d has %d surviving share holders (itself included), threshold %d", e.Phase, e.Client, e.Survivors, e.Threshold)
}
