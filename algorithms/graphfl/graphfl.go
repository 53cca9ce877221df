// Package graphfl implements privatized graph federated learning (seed 002,
// Rizk, Vlaski and Sayed; thesis ch. 3): P servers on a graph with
// combination matrix A, each the server of its own federated unit of K
// clients. In round i every server p
//
//  1. samples L of its clients and sends them its model w_{p,i−1};
//  2. each sampled client runs E_{p,k} mini-batch steps of size μ/E_{p,k} and
//     returns its model or its normalized update, possibly with client-level
//     noise (thesis eqs. 2.56, 2.59–2.60);
//  3. the server aggregates them into ψ_{p,i} (eq. 7, or its update-sharing
//     form ψ_{p,i} = w_{p,i−1} − μ·mean(ψ_k + g_k));
//  4. the servers exchange their aggregates with their neighbours, with
//     server-level noise, and combine them with A (eq. 8):
//     w_{p,i} = Σ_m a_mp (ψ_{m,i} + g_{mp,i}).
//
// Steps 1–3 are federated averaging, and this package reuses its state
// machines (package fedavg): a client is a fedavg.Agent and the sampling and
// aggregation of a server a fedavg.Server. What graph federated learning adds
// is step 4, the Exchange state machine of a server, with the server-level
// schemes of the paper: none, independent noise per directed edge (the
// paper's "random perturbations"), one broadcast draw per server without
// compensation, graph-homomorphic noise (one g_p per server and round sent to
// every neighbour, self term −((1 − a_pp)/a_pp)·g_p, thesis eq. 3.51), and
// local graph-homomorphic masks agreed pairwise over X25519 between the
// senders of each receiver (package pairmask). With P = 1 there is no step 4
// and the recursion is FedAvg's, with FedAvg's actor and stream names.
//
// A.At(m, p) = a_mp is the weight receiver p gives sender m, as everywhere in
// maple (columns sum to 1); the paper's A is symmetric, so the convention does
// not change its recursion.
//
// Reference runs the whole recursion without actors, drawing from the same
// named streams in the same order, so that it yields the actor engine's
// iterates.
package graphfl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"maple/algorithms/fedavg"
	"maple/internal/enum"
	"maple/privacy/homomorphic"
	"maple/privacy/noise"
	"maple/privacy/pairmask"
)

// Names of the random streams a server draws from (package rng), besides the
// client-sampling stream it shares with FedAvg's server (StreamParticipation).
// Clients draw from FedAvg's agent streams: "schedule", "batch" and "noise".
const (
	// StreamParticipation samples the clients of a round; it is the stream
	// of fedavg's server, so that a single server samples as FedAvg does.
	StreamParticipation = "participation"
	// StreamNoise draws the server-level privacy noise.
	StreamNoise = "noise"
	// StreamKey draws the 32 bytes of the server's X25519 private key (local
	// graph-homomorphic masks, secure mode).
	StreamKey = "lgh-key"
)

// ClientStreams returns the streams of the client named name (ClientName):
// FedAvg's agent streams "schedule", "batch" and, when the clients add noise,
// "noise", and any other purpose its client behaviour opens.
func ClientStreams(cfg *fedavg.Config, name string, streams Streams) fedavg.Streams {
	return fedavg.AgentStreams(cfg, func(purpose string) *rand.Rand { return streams(name, purpose) })
}

// ServerName returns the actor name and random-stream owner of server p of
// P: "server/p", or FedAvg's "server" when there is a single server.
func ServerName(p, P int) string {
	if P == 1 {
		return fedavg.ServerName
	}
	return "server/" + strconv.Itoa(p)
}

// ClientName returns the actor name and random-stream owner of client k of
// server p when every server has K clients: FedAvg's name for the global
// client index p·K + k, "agent/(pK+k)", which is also the index of the
// client's dataset.
func ClientName(p, k, K int) string { return fedavg.AgentName(p*K + k) }

// OracleStream names the stream from which servers a and b draw their
// oracle-mode pair secret: owner "server-pair/lo/hi", purpose "oracle".
func OracleStream(a, b int) (owner, purpose string) {
	return fmt.Sprintf("server-pair/%d/%d", min(a, b), max(a, b)), "oracle"
}

// Scheme is the server-level privacy scheme.
type Scheme int

const (
	// None sends the plain aggregates.
	None Scheme = iota
	// Random adds independent noise per directed edge and round (the
	// paper's random perturbations); the self term is plain unless
	// Privacy.SelfNoise.
	Random
	// RandomBroadcast adds one draw per server and round to every message
	// it sends, without compensation in its own term.
	RandomBroadcast
	// GraphHomomorphic adds one draw g_p per server and round to every
	// message and offsets it in the server's own term, so that it cancels in
	// the (Perron-weighted) network sum (thesis eq. 3.51).
	GraphHomomorphic
	// LocalGraphHomomorphic adds pairwise masks that cancel in every
	// receiver's combination (package pairmask).
	LocalGraphHomomorphic
)

var schemeNames = enum.Of[Scheme]("server privacy scheme", "none", "random", "random-broadcast", "graph-homomorphic", "local-graph-homomorphic")

// String returns the scenario-file name of the value.
func (v Scheme) String() string { return schemeNames.String(v) }

// ParseScheme returns the value named s.
func ParseScheme(s string) (Scheme, error) { return schemeNames.Parse(s) }

// SchemeNames lists the scenario-file names of the schemes, none first.
func SchemeNames() []string { return schemeNames.Names() }

// Privacy is the server-level privacy scheme. Its zero value is no privacy.
type Privacy struct {
	// Scheme is the scheme; None ignores the other fields.
	Scheme Scheme
	// Mechanism is the distribution of Random, RandomBroadcast and
	// GraphHomomorphic noise; local graph-homomorphic masks are Laplace.
	Mechanism noise.Mechanism
	// Std is σ_g, the standard deviation of every noise or mask coordinate.
	Std float64
	// SelfNoise also perturbs the self term under Random.
	SelfNoise bool
	// Form is the graph-homomorphic construction (homomorphic.Form).
	Form homomorphic.Form
	// Keys is how local graph-homomorphic pairs obtain their masks: Secure
	// (X25519 relayed by the receiver) or Oracle.
	Keys pairmask.Mode
	// Roles is how a receiver splits its senders into N₊ and N₋.
	Roles pairmask.Rule
	// OSKeys draws the servers' X25519 key pairs (Keys Secure) from the
	// operating system's randomness instead of their key streams: the keys
	// cannot be recomputed from the run seed, and the masks, hence the last
	// bits of the iterates, differ between executions and engines.
	OSKeys bool
}

// Config is one graph federated learning set-up.
type Config struct {
	// Servers is P.
	Servers int
	// Clients configures every server's federated unit: Agents is K, the
	// clients per server, Participants L, and the rest the local learner and
	// the client-level privacy (Share, Noise, NoiseStd), as for FedAvg.
	Clients fedavg.Config
	// Privacy is the server-level privacy scheme.
	Privacy Privacy
}

// Validate reports the first problem with c that does not depend on the
// combination matrix or the data.
func (c *Config) Validate() error {
	f := &c.Clients
	switch {
	case c.Servers < 1:
		return fmt.Errorf("%d servers; need at least 1", c.Servers)
	case f.Agents < 1:
		return fmt.Errorf("%d clients per server; need at least 1", f.Agents)
	case f.Participation < fedavg.WithoutReplacement || f.Participation > fedavg.Full:
		return fmt.Errorf("invalid participation %v", f.Participation)
	case f.Participation != fedavg.Full && f.Participants < 1:
		return fmt.Errorf("%d participants per round; need at least 1", f.Participants)
	case f.Participation == fedavg.WithoutReplacement && f.Participants > f.Agents:
		return fmt.Errorf("%d participants cannot be sampled without replacement from %d clients per server", f.Participants, f.Agents)
	case !(f.StepSize > 0) || math.IsInf(f.StepSize, 1):
		return fmt.Errorf("step size μ = %g must be positive and finite", f.StepSize)
	case f.Epochs.Min < 1 || f.Epochs.Max < f.Epochs.Min:
		return fmt.Errorf("local steps [%d, %d]: need 1 ≤ min ≤ max", f.Epochs.Min, f.Epochs.Max)
	case f.Batch.Min < 1 || f.Batch.Max < f.Batch.Min:
		return fmt.Errorf("batch sizes [%d, %d]: need 1 ≤ min ≤ max", f.Batch.Min, f.Batch.Max)
	case !(f.NoiseStd >= 0) || math.IsInf(f.NoiseStd, 1):
		return fmt.Errorf("client noise standard deviation %g must be non-negative and finite", f.NoiseStd)
	case f.Noise != noise.Laplace && f.Noise != noise.Gaussian:
		return fmt.Errorf("invalid client noise mechanism %v", f.Noise)
	}
	return c.Privacy.validate(c.Servers)
}

func (p *Privacy) validate(servers int) error {
	switch {
	case p.Scheme < None || p.Scheme > LocalGraphHomomorphic:
		return fmt.Errorf("invalid server privacy scheme %v", p.Scheme)
	case p.Mechanism != noise.Laplace && p.Mechanism != noise.Gaussian:
		return fmt.Errorf("invalid noise mechanism %v", p.Mechanism)
	case p.Scheme == None && p.Std != 0:
		return fmt.Errorf("server noise standard deviation %g given without a server privacy scheme", p.Std)
	case p.Scheme != None && (!(p.Std > 0) || math.IsInf(p.Std, 1)):
		return fmt.Errorf("noise standard deviation σ_g = %g must be positive and finite for scheme %v", p.Std, p.Scheme)
	case p.Scheme != None && servers < 2:
		return fmt.Errorf("server privacy scheme %v needs at least two servers: a single server exchanges nothing", p.Scheme)
	case p.SelfNoise && p.Scheme != Random:
		return fmt.Errorf("self noise only applies to scheme random, not %v", p.Scheme)
	case p.Form != homomorphic.RatioFree && p.Form != homomorphic.Ratio:
		return fmt.Errorf("invalid graph-homomorphic form %v", p.Form)
	case p.Form != homomorphic.RatioFree && p.Scheme != GraphHomomorphic:
		return fmt.Errorf("form %v only applies to scheme graph-homomorphic", p.Form)
	case p.Roles != pairmask.Alternating && p.Roles != pairmask.Parity:
		return fmt.Errorf("invalid role rule %v", p.Roles)
	case p.Scheme != LocalGraphHomomorphic && (p.Keys != pairmask.Secure || p.Roles != pairmask.Alternating):
		return errors.New("keys and roles only apply to scheme local-graph-homomorphic")
	case p.Scheme == LocalGraphHomomorphic && p.Keys != pairmask.Secure && p.Keys != pairmask.Oracle:
		return fmt.Errorf("local graph-homomorphic masks between servers use keys secure or oracle, not %v", p.Keys)
	case p.OSKeys && (p.Scheme != LocalGraphHomomorphic || p.Keys != pairmask.Secure):
		return errors.New("key pairs from the operating system only apply to scheme local-graph-homomorphic with keys secure")
	case p.Scheme == LocalGraphHomomorphic && p.Mechanism != noise.Laplace:
		return fmt.Errorf("local graph-homomorphic masks are Laplace by construction; mechanism %v does not apply", p.Mechanism)
	}
	return nil
}
