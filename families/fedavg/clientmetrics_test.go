package fedavg

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// spread by hand: 3, 1, 2, 6 have mean 3, variance (0 + 4 + 1 + 9)/4 = 3.5,
// and a worst tenth of ⌈4/10⌉ = 1 value: 6 when high is worse, 1 when low
// is.
func TestSpreadByHand(t *testing.T) {
	for _, high := range []bool{true, false} {
		mean, worst, variance := spread([]float64{3, 1, 2, 6}, high)
		want := 1.0
		if high {
			want = 6
		}
		if mean != 3 || worst != want || variance != 3.5 {
			t.Errorf("high is worse %v: mean %v, worst %v, variance %v; want 3, %v, 3.5", high, mean, worst, variance, want)
		}
	}
}

// clientTiny is a small softmax run on blobs over agents of skewed labels,
// whose models serve some agents better than others.
const clientTiny = `name: clients
seed: 2
runs: 1
iterations: 6
data:
  kind: blobs
  agents: 12
  samples: [3, 30]
  dim: 4
  test_samples: 100
  blobs: {separation: 2}
  partition: {kind: dirichlet, alpha: 0.3}
loss: {kind: softmax, classes: 3, rho: 0.001, optimum: none}
output: {plot: false, every: 3}
algorithm:
  kind: fedavg
  step_size: 0.1
  fedavg:
    participants: 4
    local_steps: 3
    batch: 2
    client_metrics: true
`

// algorithm.fedavg.client_metrics adds the spread of the agents' losses
// and accuracies, the same on both engines: at every recorded iteration the
// worst tenth's loss is at least the mean and its accuracy at most the
// mean, the variances are positive once the model has trained (the agents
// differ), and the accuracies lie in [0, 1].
func TestClientMetricsSpreadOverTheAgents(t *testing.T) {
	t.Parallel()
	var outputs [][]byte
	for _, e := range []run.Engine{run.Actors, run.Reference} {
		p, err := scenarios.Parse([]byte(clientTiny), "clients.yaml", t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := run.Execute(p, dir, run.Options{Engine: e, Workers: 1}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "metrics.csv")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, b)
		curves, err := rundir.ReadMetrics(path)
		if err != nil {
			t.Fatal(err)
		}
		c := curves[0]
		for _, name := range []string{"client_loss_mean", "client_loss_worst", "client_loss_var", "client_accuracy_mean", "client_accuracy_worst", "client_accuracy_var"} {
			if _, ok := c.Columns[name]; !ok {
				t.Fatalf("%s: no column %s among %v", e, name, c.Order)
			}
		}
		for row := range c.Iterations {
			v := func(name string) float64 { return c.Columns[name][row] }
			lm, lw, lv := v("client_loss_mean"), v("client_loss_worst"), v("client_loss_var")
			am, aw, av := v("client_accuracy_mean"), v("client_accuracy_worst"), v("client_accuracy_var")
			trained := c.Iterations[row] > 0 // the zero model gives every agent the loss ln 3
			if !(lw >= lm && lv >= 0 && aw <= am && av >= 0 && aw >= 0 && am <= 1) || trained && !(lv > 0 && av > 0) {
				t.Errorf("%s, iteration %v: loss mean %v, worst %v, variance %v; accuracy mean %v, worst %v, variance %v",
					e, c.Iterations[row], lm, lw, lv, am, aw, av)
			}
		}
	}
	if !bytes.Equal(outputs[0], outputs[1]) {
		t.Errorf("the engines' metrics differ:\n%s\n%s", outputs[0], outputs[1])
	}
}
