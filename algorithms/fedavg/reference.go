package fedavg

import (
	"context"
	"fmt"
	"math/rand/v2"

	"maple/algorithms/data"
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
func Reference(cfg Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, observe func(round int, w []float64)) error {
	return ReferenceContext(context.Background(), cfg, src, l, w0, runSeed, rounds, observe)
}

// ReferenceContext is Reference, stopping with an error wrapping ctx.Err()
// once ctx is done: it checks ctx before every round and before every
// agent's probe of the adaptive policies (K·N sample gradients a round),
// and changes nothing else, so that a run that is not interrupted has
// Reference's iterates.
func ReferenceContext(ctx context.Context, cfg Config, src data.Source, l loss.Loss, w0 []float64, runSeed uint64, rounds int, observe func(round int, w []float64)) error {
	interrupted := func(round int) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("round %d: interrupted: %w", round, err)
		}
		return nil
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	server := NewServer(&cfg, w0, rng.New(runSeed, ServerName, "participation"))
	pool := NewPool(&cfg, src, l, runSeed, nil)
	replies := make([][]float64, cfg.Draws())
	for slot := range replies {
		replies[slot] = make([]float64, len(w0))
	}
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
		for slot, k := range draws {
			a := pool.Wake(k)
			out, err := a.Core.Train(replies[slot], server.Model(), server.Probability(slot))
			pool.Park(a)
			if err != nil {
				return fmt.Errorf("round %d, agent %d: %w", round, k, err)
			}
			if _, err := server.AcceptReported(slot, k, replies[slot], out.Report); err != nil {
				return fmt.Errorf("round %d: %w", round, err)
			}
		}
		server.Combine()
		server.Adapt()
		observe(round, server.Model())
	}
	return nil
}

// AgentStreams returns the streams of an agent whose stream for a purpose
// is stream(purpose): its schedule and batch streams, its noise stream when
// cfg adds noise, and stream itself for the others (Streams.Named). Both
// engines open an agent's streams through it.
func AgentStreams(cfg *Config, stream func(purpose string) *rand.Rand) Streams {
	s := Streams{Schedule: stream("schedule"), Batch: stream("batch"), Named: stream}
	if cfg.NoiseStd > 0 {
		s.Noise = stream("noise")
	}
	return s
}
