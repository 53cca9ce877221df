package fedavg

import (
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// An agent the pool parks keeps about two hundred bytes: the parked record
// of an agent that trained, without noise or systems model, holds one
// stream position (its mini-batches).
func TestParkedAgentIsSmall(t *testing.T) {
	src, _ := data.RegressionSource(data.RegressionConfig{Agents: 1000, SamplesMin: 10, SamplesMax: 10, Dim: 2, CovScale: 1, NoiseVarMax: 1}, 1)
	cfg := Config{Agents: 1000, Participants: 10, StepSize: 0.1, Epochs: Range{1, 2}, Batch: Range{1, 3}, Hold: HoldPark}
	p := NewPool(&cfg, src, loss.Loss{Kind: loss.LeastSquares}, 1, nil)
	reply := make([]float64, 2)
	for k := range 100 {
		m := p.Wake(k)
		if _, err := m.Core.Train(reply, []float64{0, 0}, nil, 0); err != nil {
			t.Fatal(err)
		}
		p.Park(m)
	}
	if p.Parked() != 100 || len(p.kept) != 0 {
		t.Fatalf("%d parked, %d kept; want 100 and 0", p.Parked(), len(p.kept))
	}
	if pk := p.parked[7]; len(pk.pos) != 1 || pk.named != nil || pk.probs != nil {
		t.Errorf("parked record %+v: want one stream position", pk)
	}
}

// A pool holding its agents automatically keeps them when they all fit in
// KeepBytes and parks them otherwise.
func TestAutoHolding(t *testing.T) {
	for _, c := range []struct {
		agents int
		keep   bool
	}{{1000, true}, {1_000_000, false}} {
		src, _ := data.MixtureSource(data.MixtureConfig{Agents: c.agents, SamplesMin: 10, SamplesMax: 10, Dim: 2, Mean: 1, Variance: 1, Positive: 0.5}, 1)
		cfg := Config{Agents: c.agents, Participants: 1}
		if p := NewPool(&cfg, src, loss.Loss{Kind: loss.Logistic}, 1, nil); p.keep != c.keep {
			t.Errorf("%d agents: keep = %v, want %v (%.0f bytes each)", c.agents, p.keep, c.keep, AgentBytes(src.Set(0)))
		}
	}
	if b := AgentBytes(&data.Set{X: make([]float64, 20), Y: make([]float64, 10)}); b != memberBytes+240 {
		t.Errorf("AgentBytes = %v", b)
	}
}
