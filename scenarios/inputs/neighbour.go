package inputs

import (
	"context"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/optimum"
	"maple/algorithms/rng"
	"maple/scenarios"
)

// neighbourSeed derives the seed of the data that replace agent 0's in the
// neighbouring dataset of the privacy definitions.
func neighbourSeed(runSeed uint64) uint64 { return rng.RunSeed(runSeed, -1) }

// NeighbourOptimum returns the neighbouring datasets of run runSeed of
// curve c, p's with agent 0's replaced by one drawn afresh (from
// neighbourSeed), and ‖w^o − w′^o‖, the distance between p's minimizer and
// theirs: what the privacy accountant states its bounds with. The datasets
// are nil when p holds its data lazily (Problem.Sets nil): the neighbouring
// problem is then solved over p.Data with agent 0's replaced, without
// holding it. Once ctx is done the solve stops with an error.
func NeighbourOptimum(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64, p *Problem) ([]*data.Set, float64, error) {
	// Only agent 0's neighbouring dataset is needed; the others' labels
	// were checked in p's.
	neighbour, err := buildSource(ctx, c, dir, neighbourSeed(runSeed))
	if err != nil {
		return nil, 0, err
	}
	var sets []*data.Set
	src := data.Replace(p.Data, 0, neighbour.Data.Set(0))
	if p.Sets != nil {
		sets = slices.Clone(p.Sets)
		sets[0] = neighbour.Data.Set(0)
		src = data.Sets(sets)
	}
	wPrime, _, err := optimum.SolveSource(ctx, p.Loss, src, nil)
	if err != nil {
		return nil, 0, c.Errorf("privacy.accountant", "cannot solve the neighbouring problem: %v", err)
	}
	return sets, floats.Distance(p.WOpt, wPrime, 2), nil
}
