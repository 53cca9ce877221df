package fedplt

import (
	"context"
	"fmt"
)

// Reference runs method cfg.Method without actors for at most rounds
// rounds, from the initial models x0, reporting to mon after every round and
// stopping when mon says so. It is the oracle for the actor engine and the
// flat baseline of its benchmarks: each method's reference is written
// independently of its state machines, but opens the same random streams and
// draws from them in the same order, so it yields the same iterates. It
// returns the number of rounds run.
func Reference(cfg *Config, p *Problem, x0 [][]float64, runSeed uint64, rounds int, mon *Monitor) (int, error) {
	return ReferenceContext(context.Background(), cfg, p, x0, runSeed, rounds, mon)
}

// ReferenceContext is Reference, stopping before its next round once ctx is
// done, with an error wrapping ctx.Err() and the rounds run; it changes
// nothing else, so that a run that is not interrupted has Reference's
// iterates.
func ReferenceContext(ctx context.Context, cfg *Config, p *Problem, x0 [][]float64, runSeed uint64, rounds int, mon *Monitor) (int, error) {
	open := SeededStreams(runSeed)
	switch cfg.Method {
	case PLT:
		return referencePLT(ctx, cfg, p, x0, open, rounds, mon)
	case FedPD:
		return referenceFedPD(ctx, cfg, p, x0, open, rounds, mon)
	case FedLin:
		return referenceFedLin(ctx, cfg, p, x0, open, rounds, mon)
	case Tamuna:
		return referenceTamuna(ctx, cfg, p, x0, open, rounds, mon)
	case LED:
		return referenceLED(ctx, cfg, p, x0, open, rounds, mon)
	case FiveGCS:
		return referenceFiveGCS(ctx, cfg, p, x0, open, rounds, mon)
	}
	return 0, fmt.Errorf("unknown method %v", cfg.Method)
}

// interrupted returns an error wrapping ctx.Err(), naming round k, once ctx
// is done.
func interrupted(ctx context.Context, k int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("round %d: interrupted: %w", k, err)
	}
	return nil
}
