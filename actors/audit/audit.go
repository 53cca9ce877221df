// Package audit is the actor of an honest-but-curious eavesdropper. Placed on
// chosen links with actors.Run.Wiretap, it receives a copy of every message a
// victim sends on them — exactly what the trace shows on those links — and in
// every round reconstructs the value the victim shared with the best linear
// unbiased estimator of package privacy/audit. It reports each estimate to the
// run's observer under KeyEstimate, where it is compared with the true value;
// it sends nothing, so the protocol runs as if it were not there. With
// Unmask it is the stronger adversary who also holds the pair secrets (the
// published run seed, under seeded key randomness) and strips the local
// graph-homomorphic masks before combining.
package audit

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/privacy/audit"
)

// KeyEstimate is the observation key of the eavesdropper's estimate.
const KeyEstimate = "audit/estimate"

// Name is the eavesdropper's actor name.
const Name = "eavesdropper"

// Eavesdropper is the behaviour of the eavesdropper.
type Eavesdropper struct {
	// Victim is the agent whose messages it reconstructs.
	Victim actors.ID
	// Links are the receivers of the tapped links from the victim, in the
	// order of the estimator's covariance.
	Links []actors.ID
	// Estimator combines one observation per link.
	Estimator *audit.Estimator
	// Extract returns the vector a message reveals about the shared value,
	// and false for messages that carry none (key exchange, control).
	Extract func(m proto.Message) ([]float64, bool)
	// Unmask, if set, removes what it can from every observation before
	// the observations are combined: the adversary who holds the pair
	// secrets too, such as anyone with the published run seed under seeded
	// key randomness (privacy/audit.Unmasker). It rewrites x, the
	// eavesdropper's copy of the vector m carries on link (an index into
	// Links) in round.
	Unmask func(x []float64, link, round int, m proto.Message)

	round int
	obs   [][]float64
	got   []bool
	have  int
	est   []float64
}

// Tap returns the link filter to pass to actors.Run.Wiretap: the links from
// the victim to the listed receivers.
func (e *Eavesdropper) Tap() func(from, to actors.ID) bool {
	return func(from, to actors.ID) bool { return from == e.Victim && slices.Contains(e.Links, to) }
}

// Receive implements actors.Behaviour.
func (e *Eavesdropper) Receive(ctx *actors.Context, m proto.Message) error {
	if ctx.Sender() != e.Victim {
		return nil
	}
	x, ok := e.Extract(m)
	if !ok {
		return nil
	}
	k := slices.Index(e.Links, ctx.Addressee())
	if k < 0 {
		return fmt.Errorf("copy of a message to %s, a link it does not tap", ctx.Name(ctx.Addressee()))
	}
	if e.obs == nil {
		e.obs, e.got = make([][]float64, len(e.Links)), make([]bool, len(e.Links))
		e.est = make([]float64, len(x))
	}
	if ctx.Round() != e.round {
		e.round, e.have = ctx.Round(), 0
		clear(e.got)
	}
	if e.got[k] {
		return fmt.Errorf("second message of round %d on the link to %s", e.round, ctx.Name(ctx.Addressee()))
	}
	if len(x) != len(e.est) {
		return fmt.Errorf("message of dimension %d, earlier ones had %d", len(x), len(e.est))
	}
	e.obs[k] = append(e.obs[k][:0], x...)
	if e.Unmask != nil {
		e.Unmask(e.obs[k], k, e.round, m)
	}
	e.got[k] = true
	if e.have++; e.have == len(e.Links) {
		e.Estimator.Estimate(e.est, e.obs)
		ctx.Observe(KeyEstimate, e.est)
	}
	return nil
}
