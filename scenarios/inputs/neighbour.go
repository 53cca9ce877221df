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
	n, err := NeighbourProblem(ctx, c, dir, runSeed, p)
	if err != nil {
		return nil, 0, err
	}
	return n.Sets, n.Distance, nil
}

// Neighbour is the neighbouring problem of the privacy definitions: p's with
// agent 0's dataset D replaced by D′ (Set).
type Neighbour struct {
	// Set is D′; Data gives every agent's dataset with it, and Sets holds
	// them (nil when the problem holds its data lazily).
	Set  *data.Set
	Data data.Source
	Sets []*data.Set
	// Optimum is w′^o, the neighbouring problem's minimizer, and Distance
	// ‖w^o − w′^o‖.
	Optimum  []float64
	Distance float64
}

// NeighbourProblem is NeighbourOptimum with all it builds: D′ itself (even
// when p holds its data lazily) and w′^o.
func NeighbourProblem(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64, p *Problem) (*Neighbour, error) {
	// Only agent 0's neighbouring dataset is needed; the others' labels
	// were checked in p's.
	neighbour, err := buildSource(ctx, c, dir, neighbourSeed(runSeed))
	if err != nil {
		return nil, err
	}
	n := &Neighbour{Set: neighbour.Data.Set(0)}
	n.Data = data.Replace(p.Data, 0, n.Set)
	if p.Sets != nil {
		n.Sets = slices.Clone(p.Sets)
		n.Sets[0] = n.Set
		n.Data = data.Sets(n.Sets)
	}
	n.Optimum, err = optimum.Minimize(ctx, p.Loss, n.Data, nil)
	if err != nil {
		return nil, c.Errorf("privacy.accountant", "cannot solve the neighbouring problem: %v", err)
	}
	n.Distance = floats.Distance(p.WOpt, n.Optimum, 2)
	return n, nil
}
