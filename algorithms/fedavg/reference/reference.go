// Package reference runs FedAvg without actors, driving the state machines
// of package algorithms/fedavg (Server, AsyncServer, Agent, held by a Pool)
// from the same named streams as the actor engine, so that the two engines
// give the same iterates: Reference is the flat reference, a plain loop of
// rounds on the ideal network, and Simulate the event-driven one, a
// discrete-event simulation of the actor run's messages under the systems
// model.
package reference

import (
	"context"
	"fmt"
	"math/rand/v2"

	"maple/algorithms/compress"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
)

// Reference runs rounds rounds of the whole recursion without actors and calls
// observe with the global model after each round (observe must copy it to keep
// it). It is the flat reference engine and the baseline of the actor engine's
// benchmarks: it drives the same state machines as the actor behaviours — a
// Server that samples, collects and combines with cfg.Rule, an Agent per
// dataset of src that trains with cfg.Client, held by a Pool — from the same
// named streams, in a plain loop instead of messages, so it yields the same
// iterates and the two engines cannot run different code for a behaviour.
// Under the importance sampling of agents that probes, every agent answers
// the probe before the round's draw, as in the actor run.
//
// It fails on an invalid configuration, and when importance sampling without
// replacement becomes impossible (fewer positive probabilities than the
// sample needs), as the actor run does.
func Reference(cfg fedavg.Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, observe func(round int, w []float64)) error {
	return ReferenceContext(context.Background(), cfg, src, l, w0, runSeed, rounds, observe)
}

// ReferenceContext is Reference, stopping with an error wrapping ctx.Err()
// once ctx is done: it checks ctx before every round and before every
// agent's probe of the adaptive policies (K·N sample gradients a round),
// and changes nothing else, so that a run that is not interrupted has
// Reference's iterates.
func ReferenceContext(ctx context.Context, cfg fedavg.Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, observe func(round int, w []float64)) error {
	return ReferenceEvents(ctx, cfg, src, l, w0, runSeed, rounds, func(round int, key string, v []float64) {
		if key == fedavg.ObsModel {
			observe(round, v)
		}
	})
}

// ReferenceEvents is ReferenceContext reporting what the actor run's
// observer receives besides the model (fedavg.ObsModel): under secure
// aggregation and DP, the observations of fedavg's privacy.go
// (ObsSecAggCosts, ObsSecAggEncoding, ObsSecAggIncluded, ObsPrivacy). v must
// be copied to be kept.
func ReferenceEvents(ctx context.Context, cfg fedavg.Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, observe func(round int, key string, v []float64)) error {
	return ReferenceTapped(ctx, cfg, src, l, w0, runSeed, rounds, observe, nil)
}

// ReferenceTapped is ReferenceEvents with tap, if not nil, on the link of
// agent tap.Agent() to the server: it is handed every task the server sends
// that agent and the agent's reply, as a wiretap on the actor engine sees
// them (actors/fedavg.WireTap). Under secure aggregation the link
// carries no reply, and a tap is refused.
func ReferenceTapped(ctx context.Context, cfg fedavg.Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, observe func(round int, key string, v []float64), tap fedavg.WireObserver) error {
	if tap != nil && cfg.SecAgg != nil {
		return fmt.Errorf("a wiretap on agent %d's link: under secure aggregation the link carries masked shares, not replies", tap.Agent())
	}
	interrupted := func(round int) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("round %d: interrupted: %w", round, err)
		}
		return nil
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	server := fedavg.NewServer(&cfg, w0, rng.New(runSeed, fedavg.ServerName, "participation"))
	serverStream := func(purpose string) *rand.Rand { return rng.New(runSeed, fedavg.ServerName, purpose) }
	server.UseStreams(serverStream)
	pool := fedavg.NewPool(&cfg, src, l, runSeed, nil)
	replies := make([][]float64, cfg.Draws())
	for slot := range replies {
		replies[slot] = make([]float64, len(w0))
	}
	private := newReferencePrivacy(&cfg, src, len(w0), serverStream, observe)
	// Under secure aggregation the drawn agents stay awake until the
	// round's protocol has drawn from their streams (an agent drawn twice
	// is woken once).
	secure := private.members(cfg.SecAgg != nil)
	for round := 1; round <= rounds; round++ {
		if err := interrupted(round); err != nil {
			return err
		}
		if v, ok := server.Probe(); ok {
			for k := range cfg.Agents {
				if err := interrupted(round); err != nil {
					return err
				}
				a := pool.Wake(k)
				r, _ := a.Core.Probe(v)
				pool.Park(a)
				if _, err := server.AcceptReport(k, r); err != nil {
					return fmt.Errorf("round %d: %w", round, err)
				}
			}
		}
		draws, err := server.Draw()
		if err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if cfg.Variable() {
			observe(round, fedavg.ObsDraws, []float64{float64(len(draws))})
		}
		if cfg.SecAggSkipped(len(draws)) {
			// Too few clients for secure aggregation: nobody is sent the
			// model, the model is unchanged and nothing is released.
			observe(round, fedavg.ObsSecAggSkipped, []float64{float64(len(draws))})
			private.account(round, false, 0)
			observe(round, fedavg.ObsModel, server.Model())
			continue
		}
		for len(replies) < len(draws) {
			replies = append(replies, make([]float64, len(w0)))
		}
		for slot, k := range draws {
			tapped := tap != nil && k == tap.Agent()
			if tapped {
				if err := tap.Sent(round, slot, server.Model(), server.Probability(slot)); err != nil {
					return fmt.Errorf("round %d: %w", round, err)
				}
			}
			a := secure.wake(pool, k)
			out, err := a.Core.Train(replies[slot], server.Model(), server.Side(), server.Probability(slot))
			var c *compress.Compressed // nil for a dense reply
			if err == nil {
				c = a.Core.Compress(replies[slot], server.Model())
			}
			secure.park(pool, a)
			if err != nil {
				return fmt.Errorf("round %d, agent %d: %w", round, k, err)
			}
			if out.AuditSteps != nil {
				observe(round, fedavg.ObsAuditSteps, out.AuditSteps)
			}
			if tapped {
				if err := tap.Replied(round, slot, replies[slot]); err != nil {
					return fmt.Errorf("round %d: %w", round, err)
				}
			}
			// The reply message's size, as the actor agent reports it
			// (none under secure aggregation, whose clients send shares).
			if cfg.SecAgg == nil {
				observe(round, fedavg.ObsUplink, []float64{float64(fedavg.UplinkWireSize(int32(slot), len(replies[slot]), c, len(out.ToServer), out.Report))})
			}
			if c != nil {
				_, err = server.AcceptCompressed(slot, k, c, out.ToServer, out.Report)
			} else {
				_, err = server.AcceptReply(slot, k, replies[slot], out.ToServer, out.Report)
			}
			if err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
		}
		if cfg.SecAgg != nil {
			err := private.secureRound(round, server, draws, secure, replies[:len(draws)])
			secure.parkAll(pool)
			if err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
		} else {
			server.Combine()
		}
		server.Adapt()
		private.account(round, true, len(draws))
		observe(round, fedavg.ObsModel, server.Model())
	}
	return nil
}

// referencePrivacy is what Reference does about secure aggregation and DP:
// the protocol's machines on each round's replies, and the ledger.
type referencePrivacy struct {
	cfg     *fedavg.Config
	dim     int
	ledger  *fedavg.Ledger
	secagg  *rand.Rand // the server's protocol stream
	observe func(round int, key string, v []float64)
}

func newReferencePrivacy(cfg *fedavg.Config, src data.Source, dim int, server func(string) *rand.Rand, observe func(int, string, []float64)) *referencePrivacy {
	p := &referencePrivacy{cfg: cfg, dim: dim, observe: observe}
	if cfg.SecAgg != nil {
		p.secagg = server(fedavg.StreamSecAgg)
	}
	if l := fedavg.NewLedger(cfg, dim, fedavg.LedgerSamples(cfg, src)); l.Active() {
		p.ledger = l
	}
	return p
}

// secureRound sums the round's replies with the protocol and combines the
// decoded sum, reporting what the actor server reports.
func (p *referencePrivacy) secureRound(round int, server *fedavg.Server, draws []int, agents *roundMembers, replies [][]float64) error {
	res, err := p.cfg.SecureRound(round, server.Model(), replies, fedavg.SecAggStreams{
		Client: func(slot int) *rand.Rand { return agents.awake[draws[slot]].Core.Rand(fedavg.StreamSecAgg) },
		Named:  func(slot int, purpose string) *rand.Rand { return agents.awake[draws[slot]].Core.Rand(purpose) },
		Server: p.secagg,
	})
	if err != nil {
		return err
	}
	for slot, e := range res.Encodings {
		p.observe(round, fedavg.ObsSecAggEncoding, e.Observation(slot))
	}
	p.observe(round, fedavg.ObsSecAggIncluded, []float64{float64(res.Included)})
	p.observe(round, fedavg.ObsSecAggCosts, fedavg.SecAggCosts(len(draws), p.cfg.ModelBytes(len(draws), p.dim), res.Costs))
	server.CombineSum(res.Sum, res.Included)
	return nil
}

// roundMembers are the agents Reference keeps awake through a round: under
// secure aggregation, the protocol draws from the streams of the round's
// clients after they trained, so they are parked when it is over; without
// it each agent is parked as soon as it trained (hold false).
type roundMembers struct {
	hold  bool
	awake map[int]*fedavg.Member
}

// members returns the round's record of awake agents.
func (p *referencePrivacy) members(hold bool) *roundMembers {
	return &roundMembers{hold: hold, awake: map[int]*fedavg.Member{}}
}

// wake returns agent k: the member already awake in the round, or woken.
func (r *roundMembers) wake(pool *fedavg.Pool, k int) *fedavg.Member {
	if m := r.awake[k]; m != nil {
		return m
	}
	m := pool.Wake(k)
	if r.hold {
		r.awake[k] = m
	}
	return m
}

// park ends m's task unless the round holds its agents.
func (r *roundMembers) park(pool *fedavg.Pool, m *fedavg.Member) {
	if !r.hold {
		pool.Park(m)
	}
}

// parkAll parks the agents the round held.
func (r *roundMembers) parkAll(pool *fedavg.Pool) {
	for k, m := range r.awake {
		pool.Park(m)
		delete(r.awake, k)
	}
}

// account reports the ledger's guarantees after a round.
func (p *referencePrivacy) account(round int, released bool, survivors int) {
	if p.ledger == nil {
		return
	}
	c, s := p.ledger.Round(released, survivors)
	p.observe(round, fedavg.ObsPrivacy, []float64{c.Epsilon, s.Epsilon})
}
