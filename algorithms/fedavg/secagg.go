package fedavg

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"

	"maple/privacy/clip"
	"maple/privacy/fixedpoint"
	"maple/privacy/secagg"
)

// This file holds secure aggregation of a synchronous round's replies
// (package privacy/secagg): the clients' replies are summed by SecAgg
// (Bonawitz et al., CCS 2017) or SecAgg+ (Bell et al., CCS 2020), so that
// the server learns only their sum. The actor engine runs the protocol as
// messages (actors/fedavg); reference.Reference runs the same state
// machines in a plain loop, without dropouts.

// SecureAggregation configures secure aggregation of every round of a
// synchronous server. The round's draws are its clients, numbered by slot;
// each client's input is its reply (model or update, after the clipping
// and noise of distributed DP), clipped per coordinate to [−Clip, Clip],
// rounded onto the grid of Bits-bit fixed point at random without bias
// and encoded (package fixedpoint; SecAggInput).
type SecureAggregation struct {
	// Neighbours is k, the clients each client shares its keys with and
	// masks against: Draws() − 1 for SecAgg, fewer for SecAgg+ (a Harary
	// graph under a random permutation). 0 derives it from each round's
	// number of clients n (RoundNeighbours), as Poisson participation
	// requires.
	Neighbours int
	// Threshold is t: any t of a client's k + 1 share holders reconstruct
	// its secrets; a round in which fewer survive fails. 0 derives it from
	// the round's k (RoundThreshold).
	Threshold int
	// Sparse says the protocol is SecAgg+: a derived k is 2⌈log₂ n⌉ rather
	// than n − 1.
	Sparse bool
	// Bits is the width of the fixed-point encoding and Clip the range of
	// each coordinate of an input.
	Bits int
	Clip float64
	// Timeout, if positive, closes each phase after the first this many
	// virtual seconds after the server opened it, with the clients that
	// answered; the first phase (training, then advertising keys) closes as
	// the collection policy says. 0 waits for every client.
	Timeout float64
}

// Purposes of the random streams of secure aggregation: each agent's
// protocol stream (its keys, seeds and shares) and the one that picks the
// phase in which a dropout vanishes; the server's stream (the SecAgg+ graph)
// and the one of its channel key.
const (
	StreamSecAgg        = "secagg"
	StreamDropoutPhase  = "dropout-phase"
	StreamSecAggChannel = "secagg-channel"
)

// SecAggRound returns the configuration of round's secure aggregation
// among clients clients (the round's draws: Draws(), or under Poisson
// participation the round's own number) over inputs of dim coordinates:
// the fixed-point grid holds a sum of clients inputs, and a derived
// neighbours and threshold are the round's.
func (c *Config) SecAggRound(round, clients, dim int) (secagg.Config, error) {
	sa := c.SecAgg
	enc, err := fixedpoint.New(sa.Bits, sa.Clip, clients)
	if err != nil {
		return secagg.Config{}, err
	}
	k, t := sa.Neighbours, sa.Threshold
	if k == 0 {
		k = RoundNeighbours(clients, sa.Sparse)
	}
	if t == 0 {
		t = RoundThreshold(k)
	}
	return secagg.Config{Clients: clients, Neighbours: k, Threshold: t,
		Encoder: enc, Dim: dim, Round: uint64(round)}, nil
}

// RoundNeighbours is the default k of a round of n ≥ 2 clients: n − 1 for
// SecAgg (the complete graph), and for SecAgg+ (sparse) 2⌈log₂ n⌉, the
// O(log n) degree of Bell et al. 2020, at most n − 1.
func RoundNeighbours(n int, sparse bool) int {
	if n < 2 {
		return 1
	}
	if !sparse {
		return n - 1
	}
	return min(n-1, 2*bits.Len(uint(n-1)))
}

// RoundThreshold is the default threshold for k neighbours: a majority
// ⌊(k + 1)/2⌋ + 1 of each client's k + 1 share holders.
func RoundThreshold(k int) int { return (k+1)/2 + 1 }

// MinSecAggClients is the fewest clients a round of secure aggregation
// can have; a Poisson round with fewer is skipped (SecAggSkipped).
const MinSecAggClients = 2

// SecAggSkipped reports whether a round of n clients is skipped under
// secure aggregation: fewer than MinSecAggClients can only occur under
// Poisson participation, and then the server sends no model, nobody
// trains, the model is unchanged and the round releases nothing.
func (c *Config) SecAggSkipped(n int) bool { return c.SecAgg != nil && n < MinSecAggClients }

// validateSecAgg checks secure aggregation against the rest of the
// configuration: the protocol's own limits (threshold, neighbours, bits for
// the round's clients), and a server that needs nothing but the sum of a
// round's replies from distinct clients.
func (c *Config) validateSecAgg() error {
	sa := c.SecAgg
	if sa == nil {
		return nil
	}
	n := c.Draws()
	switch {
	case c.Participation == WithReplacement:
		return errors.New("secure aggregation: participation with-replacement may draw an agent twice in a round, and a round's clients must be distinct")
	case c.Async.Mode != Sync:
		return fmt.Errorf("secure aggregation sums the replies of synchronous rounds: server %v is asynchronous", c.Async.Mode)
	case c.Importance.Agents != Uniform || c.Importance.Data != Uniform:
		return errors.New("secure aggregation is not combined with importance sampling")
	case !(sa.Timeout >= 0):
		return fmt.Errorf("timeout: must be a non-negative number of seconds, got %v", sa.Timeout)
	}
	if !c.meanRule() {
		return fmt.Errorf("secure aggregation reveals only the sum of a round's replies; the server's rule %T needs each reply", c.ServerBehaviour())
	}
	if n < MinSecAggClients {
		return fmt.Errorf("secure aggregation needs at least 2 clients per round, got %d", n)
	}
	if c.Participation == Poisson {
		// A round may hold any number of the K agents: the grid must hold
		// a sum of all of them, and the graph and threshold are each
		// round's own.
		switch {
		case sa.Neighbours != 0:
			return fmt.Errorf("neighbours: under poisson participation each round's k is derived from its own number of clients, got %d", sa.Neighbours)
		case sa.Threshold != 0:
			return fmt.Errorf("threshold: under poisson participation each round's t is derived from its own number of clients, got %d", sa.Threshold)
		}
		n = c.Agents
	}
	cfg, err := c.SecAggRound(1, n, 1)
	if err != nil {
		return err
	}
	return cfg.Validate()
}

// StreamSecAggRounding is the purpose of each agent's stream of the
// unbiased rounding of its inputs onto the grid (RoundUnbiased of package
// fixedpoint): one uniform draw per coordinate of every input, except
// under distributed DP, whose conditional randomized rounding draws from
// StreamDP.
const StreamSecAggRounding = "secagg-rounding"

// Encoding is what putting one client's input on the grid did, as the
// client measures it (it knows its input; the server sees only the sum) and
// reports it outside the protocol: the squared norms of the encoding's
// error and of the update the input carries, and the coordinates clipped.
type Encoding struct {
	// Error2 is ‖x̃ − x‖², x the input before the encoding (the reply,
	// clipped to C/μ under DP) and x̃ the grid point the encoder sums
	// (before distributed DP's noise): rounding and range clipping.
	Error2 float64
	// Update2 is ‖d‖², d the update x carries: x itself under update
	// sharing, x − w (w the round's global model) under model sharing.
	Update2 float64
	// Clipped is the number of coordinates beyond the encoder's range,
	// counted and reported, never wrapped around.
	Clipped int
}

// Observation returns the ObsSecAggEncoding vector of the input of the
// client in slot: [slot, Error2, Update2, Clipped].
func (e Encoding) Observation(slot int) []float64 {
	return []float64{float64(slot), e.Error2, e.Update2, float64(e.Clipped)}
}

// SecAggInput writes into dst a client's input to the round's secure
// aggregation, a point of the grid of enc, and returns what the encoding
// did: its reply, clipped and privatized as the configuration's DP says,
// rounded onto the grid at random without bias — by conditional randomized
// rounding and with the discrete Gaussian's noise under distributed DP
// (StreamDP), by fixedpoint's RoundUnbiased otherwise
// (StreamSecAggRounding). Rounding to the nearest level instead would
// erase every coordinate below half a step: a grid coarser than the
// updates would sum them to exactly zero, the model would not move, and
// nothing would overflow to say so. model is the round's global model the
// client trained from, and streams(purpose) the agent's stream for
// purpose.
func (c *Config) SecAggInput(dst, reply, model []float64, enc fixedpoint.Encoder, streams func(purpose string) *rand.Rand) (Encoding, error) {
	copy(dst, reply)
	if c.DP.Mode != NoDP {
		clip.L2(dst, c.DP.Clip/c.StepSize)
	}
	var e Encoding
	for i, v := range dst {
		if math.IsNaN(v) {
			return Encoding{}, fmt.Errorf("secure aggregation: coordinate %d of the client's input is NaN (its local training diverged)", i)
		}
		if c.Share == Models {
			v -= model[i]
		}
		e.Update2 += v * v
	}
	if c.DP.Mode == DistributedDP {
		return e, c.DP.distributedInput(dst, c.StepSize, enc, c.Draws(), streams(StreamDP), &e)
	}
	r := streams(StreamSecAggRounding)
	for i, v := range dst {
		g, clipped := enc.RoundUnbiased(v, r.Float64())
		e.Error2 += (g - v) * (g - v)
		if clipped {
			e.Clipped++
		}
		dst[i] = g
	}
	return e, nil
}

// CombineSum updates the model from the decoded sum of the inputs of the
// included clients of a round closed by secure aggregation (included > 0).
// Without DP the model becomes their mean (model sharing) or moves by −μ
// times it (update sharing) — the mean over the included clients, or, when
// the collection policy closes rounds early without re-weighting, over the
// round's draws with every missing reply counted as the current model (a
// zero update). Under DP the estimator divides by the draws whatever
// arrives (DP-FedAvg's fixed denominator), after the server's Gaussian
// noise under central DP. sum is modified.
func (s *Server) CombineSum(sum []float64, included int) {
	if s.cfg.DP.Mode != NoDP {
		s.privateSum(sum)
		return
	}
	n, pad := float64(included), 0.0
	if col := s.cfg.Collection(); col.Early() && !col.Reweight() {
		n, pad = float64(len(s.draws)), float64(len(s.draws)-included)
	}
	inv := 1 / n
	if s.cfg.Share == Models {
		for j := range s.model {
			s.model[j] = (sum[j] + pad*s.model[j]) * inv
		}
		return
	}
	for j := range s.model {
		s.model[j] -= s.cfg.StepSize * sum[j] * inv
	}
}

// SecAggStreams opens the random streams of one secure-aggregation round
// in the reference: a client's protocol stream and its other streams by
// purpose (the agent's named streams: StreamDP, StreamSecAggRounding), by
// slot, and the server's protocol stream.
type SecAggStreams struct {
	Client func(slot int) *rand.Rand
	Named  func(slot int, purpose string) *rand.Rand
	Server *rand.Rand
}

// SecAggRoundResult is what a reference round of secure aggregation
// yields: the decoded sum of the included clients' inputs, how many there
// are, each client's Encoding by slot and the traffic.
type SecAggRoundResult struct {
	Sum       []float64
	Included  int
	Encodings []Encoding
	Costs     *secagg.Costs
	Config    secagg.Config
}

// SecureRound aggregates the replies of a round, one per draw in slot
// order, trained from the global model, with the protocol's state machines
// and no dropout (secagg.Reference): the actor run's round when every
// client answers.
func (c *Config) SecureRound(round int, model []float64, replies [][]float64, st SecAggStreams) (*SecAggRoundResult, error) {
	dim := len(replies[0])
	scfg, err := c.SecAggRound(round, len(replies), dim)
	if err != nil {
		return nil, err
	}
	inputs := make([][]float64, len(replies))
	res := &SecAggRoundResult{Config: scfg, Encodings: make([]Encoding, len(replies))}
	for u, r := range replies {
		inputs[u] = make([]float64, dim)
		streams := func(purpose string) *rand.Rand { return st.Named(u, purpose) }
		if res.Encodings[u], err = c.SecAggInput(inputs[u], r, model, scfg.Encoder, streams); err != nil {
			return nil, fmt.Errorf("client %d: %w", u, err)
		}
	}
	stream := func(id int) *rand.Rand {
		if id == secagg.Server {
			return st.Server
		}
		return st.Client(id)
	}
	out, costs, _, err := secagg.Reference(scfg, inputs, nil, stream)
	if err != nil {
		return nil, err
	}
	res.Costs, res.Included = costs, len(out.Included)
	res.Sum = make([]float64, dim)
	scfg.Encoder.Decode(res.Sum, out.Sum)
	return res, nil
}
