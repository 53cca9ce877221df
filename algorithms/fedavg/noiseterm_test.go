package fedavg

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/algorithms/rng"
	"maple/algorithms/sampling"
)

// freshNoiseTerm is NoiseTerm as it was before NoiseTermWith: a stream made
// by name with rng.New and every vector allocated for the agent.
func freshNoiseTerm(cfg *Config, k int, set *data.Set, l loss.Loss, wOpt []float64, runSeed uint64) NoiseTerm {
	schedule := rng.New(runSeed, AgentName(k), "schedule")
	epochs := sampling.IntInRange(cfg.Epochs.Min, cfg.Epochs.Max, schedule)
	batch := sampling.IntInRange(cfg.Batch.Min, cfg.Batch.Max, schedule)
	g, scratch := make([]float64, len(wOpt)), make([]float64, len(wOpt))
	norms := make([]float64, set.Len())
	l.NormsAndFullGrad(norms, g, wOpt, set, scratch)
	model := alpha(epochs, batch) * floats.Dot(g, g)
	p := make([]float64, set.Len())
	sampling.Proportional(p, norms)
	return NoiseTerm{c: dataVariance(norms, nil, epochs, batch) + model, sqrtC: math.Sqrt(dataVariance(norms, p, epochs, batch) + model)}
}

// NoiseTermWith, one work space serving agents of every size in turn, gives
// each agent's term bit for bit as a fresh stream and fresh vectors do, and
// allocates nothing once its vectors are long enough.
func TestNoiseTermWithReusesItsWorkSpace(t *testing.T) {
	const agents = 60
	src, _ := data.RegressionSource(data.RegressionConfig{Agents: agents, SamplesMin: 1, SamplesMax: 15, Dim: 3, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1}, 9)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	cfg := &Config{Agents: agents, Participants: 3, StepSize: 0.02, Epochs: Range{1, 5}, Batch: Range{1, 4}}
	wOpt, _, err := optimum.SolveSource(t.Context(), l, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s NoiseScratch
	for _, k := range []int{3, 0, 59, 12, 12, 40, 1000003} {
		set := src.Set(k % agents)
		want := freshNoiseTerm(cfg, k, set, l, wOpt, 77)
		if got := cfg.NoiseTermWith(k, set, l, wOpt, 77, &s); math.Float64bits(got.c) != math.Float64bits(want.c) || math.Float64bits(got.sqrtC) != math.Float64bits(want.sqrtC) {
			t.Errorf("agent %d: %+v, with a fresh stream and vectors %+v", k, got, want)
		}
	}
	big := src.Set(0)
	for k := range agents {
		if s := src.Set(k); s.Len() > big.Len() {
			big = s
		}
	}
	cfg.NoiseTermWith(0, big, l, wOpt, 77, &s)
	if n := testing.AllocsPerRun(20, func() { cfg.NoiseTermWith(5, big, l, wOpt, 77, &s) }); n != 0 {
		t.Errorf("NoiseTermWith allocates %v times with its vectors long enough", n)
	}
}
