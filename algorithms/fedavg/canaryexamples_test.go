package fedavg

import (
	"testing"

	"maple/algorithms/canary"
)

// Only agent 0's trainings hold the canary examples, and only a white-box
// audit's record their steps.
func TestOnlyAgentZeroHoldsTheCanaries(t *testing.T) {
	can := &canary.Examples{Included: []bool{true}, Observe: true}
	cfg := &Config{SampleCanaries: can}
	for k, want := range []*canary.Examples{can, nil} {
		tr := &Local{agent: &Agent{cfg: cfg, index: k}}
		if got := tr.Canaries(); got != want {
			t.Errorf("agent %d holds %v, want %v", k, got, want)
		}
		tr.RecordStep([]float64{1, 2}, []float64{3, 4})
		if got := len(tr.record); got != 4*(1-k) {
			t.Errorf("agent %d recorded %d numbers", k, got)
		}
	}
}
