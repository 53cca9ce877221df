package randomwalk

import (
	"context"
	"fmt"
	"math/rand/v2"

	"maple/algorithms/rng"
)

// Reference runs the protocol of cfg on p for the given number of
// iterations (steps of every walk, or gossip iterations) without actors,
// drawing from the same streams as the actor engine, and reports to obs with
// the byte counts of size. Either may be nil; without a Sizer every message
// counts as one byte. Its reports equal an actor run's with the same seed,
// walk by walk.
func Reference(cfg Config, p Problem, runSeed uint64, iterations int, obs Observer, size Sizer) error {
	return ReferenceContext(context.Background(), cfg, p, runSeed, iterations, obs, size)
}

// ReferenceContext is Reference, stopping once ctx is done — checked before
// every move of a walk's token and every gossip iteration — with an error
// wrapping ctx.Err(); it changes nothing else, so that a run that is not
// interrupted has Reference's reports.
func ReferenceContext(ctx context.Context, cfg Config, p Problem, runSeed uint64, iterations int, obs Observer, size Sizer) error {
	if iterations < 1 {
		return fmt.Errorf("%d iterations; a run needs at least 1", iterations)
	}
	if obs == nil {
		obs = nopObserver{}
	}
	if size == nil {
		size = unitSizer{}
	}
	streams := func(owner, purpose string) *rand.Rand { return rng.New(runSeed, owner, purpose) }
	if cfg.Protocol == Gossip {
		return referenceGossip(ctx, &cfg, p, streams, iterations, obs, size)
	}
	nodes, _, err := NewNodes(&cfg, p, streams)
	if err != nil {
		return err
	}
	for i, n := range nodes {
		a := n.Announcement()
		for _, j := range n.Neighbours() {
			if _, err := nodes[j].Learn(i, a); err != nil {
				return err
			}
		}
		obs.Setup(i, len(n.Neighbours()), len(n.Neighbours())*size.Announcement(a))
	}
	model := make([]float64, p.Loss.Dim(p.Sets[0].Dim))
	for w := range cfg.Walks {
		at := StartNode(streams(SchedulerName, WalkPurpose(w)), len(nodes))
		nodes[at].InitialModel(model, WalkInitPurpose(w))
		obs.Start(w, at, model)
		report := func(k, next int, m []float64) {
			bytes := 0
			if next >= 0 {
				bytes = size.Token(w, k, m)
			}
			obs.Step(w, k, at, m, bytes)
		}
		for k := 0; k < iterations; {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("walk %d, step %d: interrupted: %w", w, k, err)
			}
			var next int
			if next, k = nodes[at].Walk(w, k, iterations, model, report); next < 0 {
				break
			}
			at = next
		}
	}
	return nil
}

// StartNode draws a walk's start node (or gossip's next active node)
// uniformly among n from the scheduler's stream r.
func StartNode(r *rand.Rand, n int) int { return r.IntN(n) }

func referenceGossip(ctx context.Context, cfg *Config, p Problem, streams Streams, iterations int, obs Observer, size Sizer) error {
	nodes, err := NewGossipNodes(cfg, p, streams)
	if err != nil {
		return err
	}
	for i, g := range nodes {
		obs.GossipStart(i, g.Model())
	}
	sched := streams(SchedulerName, GossipPurpose)
	for k := 1; k <= iterations; k++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("iteration %d: interrupted: %w", k, err)
		}
		i := StartNode(sched, len(nodes))
		j, send := nodes[i].Wake(k)
		sent := size.GossipModel(send, false)
		reply, err := nodes[j].Answer(k, i, send)
		if err != nil {
			return err
		}
		obs.Gossip(k, j, nodes[j].Model(), size.GossipModel(reply, true), false)
		if err := nodes[i].Finish(k, j, reply); err != nil {
			return err
		}
		obs.Gossip(k, i, nodes[i].Model(), sent, true)
	}
	return nil
}

type nopObserver struct{}

func (nopObserver) Setup(int, int, int)                   {}
func (nopObserver) Start(int, int, []float64)             {}
func (nopObserver) Step(int, int, int, []float64, int)    {}
func (nopObserver) GossipStart(int, []float64)            {}
func (nopObserver) Gossip(int, int, []float64, int, bool) {}

type unitSizer struct{}

func (unitSizer) Announcement(Announcement) int   { return 1 }
func (unitSizer) Token(int, int, []float64) int   { return 1 }
func (unitSizer) GossipModel([]float64, bool) int { return 1 }
