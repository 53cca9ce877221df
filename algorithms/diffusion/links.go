package diffusion

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"maple/algorithms/systems"
	"maple/internal/enum"
	"maple/topology"
)

// LinkOwner and LinkPurpose name the public stream the time-varying graph is
// drawn from: one draw per edge of the base graph and round.
const (
	LinkOwner   = "topology"
	LinkPurpose = "links"
)

// PartnerPolicy is what the local graph-homomorphic protocol does when a
// sender's partner at a receiver is down in a round, so that their pair
// masks cannot cancel.
type PartnerPolicy int

const (
	// IgnorePartner keeps the masks: the receiver detects the uncancelled
	// pairs, and their residual stays in its aggregate (and is reported).
	IgnorePartner PartnerPolicy = iota
	// DropMask has the receiver ask each live sender whose partner is down
	// for the masks it shares with it (DiffusionMaskRequest), which it then
	// removes from its aggregate: the aggregate is exact, and the receiver
	// learns those pair masks (a sender left without a live partner is then
	// unmasked to it).
	DropMask
	// Rekeying has the receiver split its live senders into new roles for the
	// stage and relay the public keys the new pairs need
	// (DiffusionRekey); the live senders resend their share masked with
	// fresh pair masks (DiffusionRekeyedShare), which cancel.
	Rekeying
)

var partnerNames = enum.Of[PartnerPolicy]("dropped-partner policy", "ignore", "drop-mask", "re-key")

// String returns the scenario-file name of the policy.
func (p PartnerPolicy) String() string { return partnerNames.String(p) }

// ParsePartnerPolicy returns the policy named s.
func ParsePartnerPolicy(s string) (PartnerPolicy, error) { return partnerNames.Parse(s) }

// PartnerPolicyNames lists the policies' names.
func PartnerPolicyNames() []string { return partnerNames.Names() }

// Dynamics is a time-varying graph: every round, each edge of the base graph
// is down with probability Failure and each agent may be down (its device's
// dropout or crash), and the combination matrix is recomputed over the live
// graph by Rule.
type Dynamics struct {
	// Failure is the probability that an edge is down in a round.
	Failure float64
	// Rule is the combination rule applied to the live graph (Metropolis,
	// lazy Metropolis, averaging).
	Rule func(*topology.Graph) *mat.Dense
	// Devices, if set, decide which agents are down in a round; a down agent
	// skips the round and all its links are down.
	Devices []*systems.Device
}

// LiveRound is one round of a time-varying graph.
type LiveRound struct {
	// A is the combination matrix of the live graph; a down agent's column
	// is its own (a_pp = 1).
	A *mat.Dense
	// Down marks the agents that skip the round.
	Down []bool
	// Connected reports whether the live graph is connected (a down agent
	// disconnects it).
	Connected bool
	// Up counts the live edges of the Edges of the base graph.
	Up, Edges int
}

// Facts returns what a run reports of the round: [connected (1 or 0), live
// edges, edges, agents down].
func (lr *LiveRound) Facts() []float64 {
	down := 0
	for _, d := range lr.Down {
		if d {
			down++
		}
	}
	connected := 0.0
	if lr.Connected {
		connected = 1
	}
	return []float64{connected, float64(lr.Up), float64(lr.Edges), float64(down)}
}

// LinkProcess draws the rounds of a time-varying graph.
type LinkProcess struct {
	d     Dynamics
	p     int
	edges [][2]int
	r     *rand.Rand
	up    [][2]int
}

// NewLinkProcess returns the process of base graph A's support (its
// undirected edges) under d, drawing from the public stream (LinkOwner,
// LinkPurpose).
func NewLinkProcess(A mat.Matrix, d Dynamics, streams Streams) (*LinkProcess, error) {
	if !(d.Failure >= 0 && d.Failure < 1) {
		return nil, fmt.Errorf("link failure probability must lie in [0, 1), got %v", d.Failure)
	}
	if d.Rule == nil {
		return nil, fmt.Errorf("a time-varying graph needs a combination rule")
	}
	p, _ := A.Dims()
	if d.Devices != nil && len(d.Devices) != p {
		return nil, fmt.Errorf("%d devices for %d agents", len(d.Devices), p)
	}
	lp := &LinkProcess{d: d, p: p}
	for m := range p {
		for q := m + 1; q < p; q++ {
			if A.At(m, q) > 0 || A.At(q, m) > 0 {
				lp.edges = append(lp.edges, [2]int{m, q})
			}
		}
	}
	if d.Failure > 0 {
		lp.r = streams(LinkOwner, LinkPurpose)
	}
	return lp, nil
}

// Next draws round i: one uniform draw per base edge, in ascending edge
// order (when Failure > 0), then each agent's device decides whether it is
// down (crashed, or a dropout draw from its own stream).
func (lp *LinkProcess) Next(i int) LiveRound {
	down := make([]bool, lp.p)
	if lp.d.Devices != nil {
		for k, dev := range lp.d.Devices {
			down[k] = dev.Crashed(i) || dev.DropsOut()
		}
	}
	lp.up = lp.up[:0]
	for _, e := range lp.edges {
		failed := lp.r != nil && lp.r.Float64() < lp.d.Failure
		if !failed && !down[e[0]] && !down[e[1]] {
			lp.up = append(lp.up, e)
		}
	}
	g, err := topology.NewGraph(lp.p, lp.up)
	if err != nil {
		panic("diffusion: live graph: " + err.Error()) // a subgraph of a valid graph
	}
	return LiveRound{A: lp.d.Rule(g), Down: down, Connected: g.Connected(), Up: len(lp.up), Edges: len(lp.edges)}
}

// Live is one agent's view of a round of a time-varying graph: which of its
// links are up, and its weights in the live combination matrix.
type Live struct {
	// Down is set when the agent itself skips the round.
	Down bool
	// Self is a_pp of the live matrix.
	Self float64
	// Senders[s] is whether the agent's s-th sender (Network.Senders order)
	// is live and Weights[s] the weight a_mp the agent gives it.
	Senders []bool
	Weights []float64
	// Receivers[r] is whether the agent's r-th receiver (Network.Receivers
	// order) is live and Given[r] the weight a_pk that receiver gives it.
	Receivers []bool
	Given     []float64
}

// View fills dst with agent p's view of round lr on network net.
func (lr *LiveRound) View(net *Network, p int, dst *Live) {
	dst.Down, dst.Self = lr.Down[p], lr.A.At(p, p)
	senders, receivers := net.senders[p], net.receivers[p]
	dst.Senders = resizeBools(dst.Senders, len(senders))
	dst.Weights = resizeFloats(dst.Weights, len(senders))
	for s, m := range senders {
		a := lr.A.At(m, p)
		dst.Senders[s], dst.Weights[s] = a > 0, a
	}
	dst.Receivers = resizeBools(dst.Receivers, len(receivers))
	dst.Given = resizeFloats(dst.Given, len(receivers))
	for r, k := range receivers {
		a := lr.A.At(p, k)
		dst.Receivers[r], dst.Given[r] = a > 0, a
	}
}

func resizeBools(s []bool, n int) []bool {
	if cap(s) < n {
		return make([]bool, n)
	}
	return s[:n]
}

func resizeFloats(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}
