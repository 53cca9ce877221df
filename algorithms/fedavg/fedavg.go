// Package fedavg implements federated averaging as the thesis defines it
// (seed 000, eqs. 1.30–1.31): in every round the server samples L of the K
// agents and sends them its model w_{i−1}; agent k runs E_k local steps
//
//	w_{k,e} = w_{k,e−1} − (μ/E_k)·∇̂J_k(w_{k,e−1}),  e = 1, …, E_k,
//
// on fresh mini-batches of B_k samples, and the server averages what the L
// agents return, w_i = (1/L) Σ_k w_{k,E_k}. The 1/E_k normalization removes the
// bias toward agents with many local steps; the original FedAvg step (without
// it, thesis eqs. 1.26–1.28) is an option.
//
// The privatized variants of thesis §2.5 add Laplace (or Gaussian) noise either
// to the returned models (eq. 2.56) or to the normalized updates
// ψ_k = (w_{i−1} − w_{k,E_k})/μ, applied as w_i = w_{i−1} − μ·(1/L) Σ(ψ_k + g_k)
// (eqs. 2.59–2.60); without noise both equal plain FedAvg.
//
// Server and Agent are the state machines the actor behaviours wrap;
// package algorithms/fedavg/reference runs the same state machines without
// actors — Reference in a plain loop, Simulate as a discrete-event
// simulation of the actor run's messages — both from the same random streams, so that the engines produce the same
// iterates. What a user may replace — the server's combination rule, the
// agents' local solver, the collection policy, the adversaries — are values
// of the Config (Rule, Client, Collector, Adversary) that every engine
// applies through these state machines; actors/fedavg registers them.
package fedavg

import (
	"fmt"
	"math"
	"strconv"

	"maple/algorithms/canary"
	"maple/algorithms/compress"
	"maple/internal/enum"
	"maple/internal/params"
	"maple/privacy/noise"
)

// ServerName is the actor name (and random-stream owner) of the server.
const ServerName = "server"

// AgentName returns the actor name (and random-stream owner) of agent k.
func AgentName(k int) string { return agentNamePrefix + strconv.Itoa(k) }

// agentNamePrefix starts an agent's name.
const agentNamePrefix = "agent/"

// Participation is how the server picks the agents of a round.
type Participation int

const (
	// WithoutReplacement samples L distinct agents uniformly (the thesis).
	WithoutReplacement Participation = iota
	// WithReplacement makes L independent uniform draws; an agent drawn twice
	// trains twice, on independent mini-batches.
	WithReplacement
	// Full lets every agent take part in every round (L = K).
	Full
	// Poisson lets each agent take part in each round independently with
	// probability q = L/K (Participants is the expected number L), so that
	// a round has a Binomial(K, q) number of agents — how DP-FedAvg is
	// deployed and accounted (McMahan et al. 2018). Under DP the server
	// still divides by L = qK (their fixed-denominator estimator).
	Poisson
)

var participationNames = enum.Of[Participation]("participation", "without-replacement", "with-replacement", "full", "poisson")

// String returns the scenario-file name of the value.
func (v Participation) String() string { return participationNames.String(v) }

// ParseParticipation returns the value named s.
func ParseParticipation(s string) (Participation, error) { return participationNames.Parse(s) }

// Schedule says when an agent draws its number of local steps E_k and its
// mini-batch size B_k from their ranges.
type Schedule int

const (
	// PerAgent draws E_k and B_k once, when the agent is created.
	PerAgent Schedule = iota
	// PerRound redraws them every time the agent trains.
	PerRound
)

var scheduleNames = enum.Of[Schedule]("schedule", "per-agent", "per-round")

// String returns the scenario-file name of the value.
func (v Schedule) String() string { return scheduleNames.String(v) }

// ParseSchedule returns the value named s.
func ParseSchedule(s string) (Schedule, error) { return scheduleNames.Parse(s) }

// Share is what agents send back to the server.
type Share int

const (
	// Models sends w_{k,E_k} (+ noise, thesis eq. 2.56).
	Models Share = iota
	// Updates sends ψ_k = (w_{i−1} − w_{k,E_k})/μ (+ noise, eqs. 2.59–2.60).
	Updates
)

var shareNames = enum.Of[Share]("share", "models", "updates")

// String returns the scenario-file name of the value.
func (v Share) String() string { return shareNames.String(v) }

// ParseShare returns the value named s.
func ParseShare(s string) (Share, error) { return shareNames.Parse(s) }

// Range is a closed integer range [Min, Max].
type Range struct{ Min, Max int }

// Config is one FedAvg set-up.
type Config struct {
	// Agents is K and Participants is L (ignored for Full participation;
	// the expected number of agents per round under Poisson participation,
	// whose rate is q = L/K, Rate).
	Agents, Participants int
	Participation        Participation
	// StepSize is μ.
	StepSize float64
	// Normalized divides the local step by E_k (thesis eq. 1.30); false gives
	// the original FedAvg step.
	Normalized bool
	// Epochs and Batch are the ranges of E_k and B_k.
	Epochs, Batch Range
	Schedule      Schedule
	// BatchWithReplacement draws mini-batch samples independently instead of
	// B_k distinct ones.
	BatchWithReplacement bool
	// Share, Noise and NoiseStd privatize what agents send: noise of standard
	// deviation NoiseStd per coordinate (0 disables it).
	Share    Share
	Noise    noise.Mechanism
	NoiseStd float64
	// Rule is how a synchronous server combines the replies of a round and
	// Client how an agent trains (nil: the mean of eq. 1.31 and the local
	// SGD of eq. 1.30): the pure rules of the registered server and client
	// behaviours, which both engines apply. A behaviour that keeps state
	// between rounds is set as StatefulRule or StatefulClient instead,
	// whose constructor gives every server and every agent its own
	// instance (state.go); at most one of each pair is set.
	Rule           Rule
	Client         Client
	StatefulRule   StatefulRule
	StatefulClient StatefulClient
	// Importance selects importance sampling of agents and data
	// (Algorithm 2.1); the zero value is plain FedAvg.
	Importance Importance
	// Collect is how a synchronous server ends a round, Async the
	// asynchronous servers and Adversary what the adversaries do
	// (systems.go); the zero values are the synchronous, wait-for-all,
	// honest FedAvg.
	Collect   Collector
	Async     Async
	Adversary Adversary
	// SecAgg, if set, sums each round's replies with secure aggregation
	// (secagg.go), and DP makes the training differentially private at the
	// client level (dp.go); their zero values are plain FedAvg.
	SecAgg *SecureAggregation
	DP     DP
	// SampleCanaries, if set, are the canary examples agent 0's dataset
	// holds for an audit of the sample-level guarantee of a PrivateClient
	// (canaryexamples.go).
	SampleCanaries *canary.Examples
	// Hold is how the engines hold the agents between their tasks (Pool):
	// whole in memory, or parked compactly. It changes no number.
	Hold Holding
	// Compress is how the agents compress their replies (compress.go);
	// nil, or compress.Dense, sends them whole.
	Compress compress.Compressor
}

// Validate reports the first impossible setting of the configuration.
func (c *Config) Validate() error {
	switch {
	case c.Agents < 1:
		return fmt.Errorf("agents: need at least 1, got %d", c.Agents)
	case c.Participation != Full && c.Participants < 1:
		return fmt.Errorf("participants: need at least 1, got %d", c.Participants)
	case c.Participation == WithoutReplacement && c.Participants > c.Agents:
		return fmt.Errorf("participants: %d cannot be sampled without replacement from %d agents", c.Participants, c.Agents)
	case c.Participation == Poisson && c.Participants > c.Agents:
		return fmt.Errorf("participants: an expected %d agents per round under poisson participation needs a rate q = L/K ≤ 1, but there are %d agents", c.Participants, c.Agents)
	case c.Participation < WithoutReplacement || c.Participation > Poisson:
		return fmt.Errorf("participation: invalid value %d", int(c.Participation))
	case !(c.StepSize > 0) || math.IsInf(c.StepSize, 0):
		return fmt.Errorf("step size: must be a positive number, got %v", c.StepSize)
	case c.Epochs.Min < 1 || c.Epochs.Max < c.Epochs.Min:
		return fmt.Errorf("epochs: need 1 ≤ min ≤ max, got [%d, %d]", c.Epochs.Min, c.Epochs.Max)
	case c.Batch.Min < 1 || c.Batch.Max < c.Batch.Min:
		return fmt.Errorf("batch: need 1 ≤ min ≤ max, got [%d, %d]", c.Batch.Min, c.Batch.Max)
	case !(c.NoiseStd >= 0):
		return fmt.Errorf("noise: standard deviation must be non-negative, got %v", c.NoiseStd)
	}
	if err := c.validateState(); err != nil {
		return err
	}
	for _, b := range []any{c.ServerBehaviour(), c.ClientBehaviour(), c.Collect, c.Adversary, c.Compress} {
		if err := params.Check(b); err != nil {
			return err
		}
		if v, ok := b.(Checker); ok {
			if err := v.Validate(c); err != nil {
				return err
			}
		}
	}
	if err := c.validateSystems(); err != nil {
		return err
	}
	if err := c.validateSecAgg(); err != nil {
		return err
	}
	if err := c.validateDP(); err != nil {
		return err
	}
	if err := c.validateCompress(); err != nil {
		return err
	}
	return c.Importance.validate(c)
}

// Checker is implemented by the behaviours of a configuration (its Rule,
// Client, Collect, Adversary and Compress) whose parameters must agree with the rest
// of it: a trim that drops no reply of a round, a first-k policy that keeps
// more replies than a round has. Validate reports the first disagreement,
// as a *params.Error naming the parameter.
type Checker interface {
	Validate(cfg *Config) error
}

// rule returns the combination rule, the mean when none is set.
func (c *Config) rule() Rule {
	if c.Rule == nil {
		return MeanRule{}
	}
	return c.Rule
}

// client returns the local solver, local SGD when none is set.
func (c *Config) client() Client {
	if c.Client == nil {
		return SGD{}
	}
	return c.Client
}

// Draws returns the number of agent draws per round: L, or K under Full
// participation. Under Poisson participation it is the expected number L =
// qK: a round's own number is that of the draws Server.Draw returns, and
// DP-FedAvg's fixed denominator is L.
func (c *Config) Draws() int {
	if c.Participation == Full {
		return c.Agents
	}
	return c.Participants
}

// Rate returns the probability q that a given agent takes part in a given
// round: L/K (1 under Full participation). Under Poisson participation the
// agents take part independently; under sampling without replacement q is
// the marginal inclusion probability of the fixed-size sample. With
// replacement it is the expected draws per agent, L/K.
func (c *Config) Rate() float64 {
	return float64(c.Draws()) / float64(c.Agents)
}

// Variable reports whether a round's number of agents is random (Poisson
// participation): what depends on it — secure aggregation's parties, the
// bytes of a round — is then the round's own, known to the server once it
// has drawn the round.
func (c *Config) Variable() bool { return c.Participation == Poisson }
