package fedavg

import (
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// tenMillion is the scale target of issue 21 (docs/design.md, "Ten million
// clients"): FedAvg, 10⁷ clients, 100 sampled per round, 50 rounds, a 2-D
// model; data.agents is set per case.
const tenMillion = `name: ten-million
runs: 1
iterations: 50
data: {kind: regression, agents: 10000000, samples: [5, 15], dim: 2}
loss: {kind: least-squares, rho: 0.001}
algorithm:
  kind: fedavg
  step_size: 0.01
  fedavg: {participants: 100, local_steps: [1, 5], batch: [1, 5]}
output: {plot: false}
`

func scalePlan(t testing.TB, overrides ...string) *scenarios.Plan {
	t.Helper()
	p, err := scenarios.Parse([]byte(tenMillion), "ten-million.yaml", t.TempDir(), overrides)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The checks before running admit what lazily held clients make fit and
// refuse what still does not: 10⁷ clients of which 100 train per round are
// estimated under 8 GB and pass with 8 GB available, with or without
// device classes and dropouts, 10⁶ under 1 GB (the targets, measured by
// BenchmarkTenMillionClients), while every one of 10⁷ clients training in
// every round — each built at once — is refused at 8 GB, naming
// data.agents, and so are more clients than 32-bit actor IDs can name.
func TestEstimateFollowsLazyClients(t *testing.T) {
	t.Parallel()
	opts := run.Options{Workers: 1, MemoryLimit: 8e9}
	for _, c := range []struct {
		overrides []string
		within    float64
	}{
		{nil, 8e9},
		{[]string{"data.agents=1000000"}, 1e9},
		{[]string{"network.classes=[{name: slow, fraction: 0.2, slowdown: 5}]", "network.dropout=0.1"}, 8e9},
	} {
		p := scalePlan(t, c.overrides...)
		e := run.EstimatePlan(p, opts)
		if e.Memory > c.within {
			t.Errorf("%v: estimated %.3g bytes, want under %.3g", c.overrides, e.Memory, c.within)
		}
		t.Logf("%v: estimated %.3g bytes, %.3g s", c.overrides, e.Memory, e.Seconds)
		if err := run.CheckWith(p, opts); err != nil {
			t.Errorf("%v: refused: %v", c.overrides, err)
		}
	}
	err := run.CheckWith(scalePlan(t, "algorithm.fedavg.participants=10000000"), opts)
	if !scenarios.IsUserError(err) || !containsField(err, "data.agents") {
		t.Errorf("every client training: %v, want a refusal naming data.agents", err)
	}
	_, err = scenarios.Parse([]byte(tenMillion), "ten-million.yaml", t.TempDir(), []string{"data.agents=3000000000"})
	if !scenarios.IsUserError(err) || !containsField(err, "data.agents") {
		t.Errorf("3·10⁹ clients: %v, want a refusal naming data.agents", err)
	}
}

func containsField(err error, field string) bool {
	e, ok := err.(*scenarios.Error)
	return ok && e.Field == field
}
