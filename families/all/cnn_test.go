package all

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"maple/algorithms/data/idxtest"
	"maple/scenarios"
	"maple/scenarios/run"
)

// cnnImages writes n images of 4×5 pixels to dir (idxtest.ImagesOf: the
// class c ∈ {0, 1, 2} lights row c), a shape that is not square, so that
// the network can only take it from the IDX header.
func cnnImages(t *testing.T, dir, name string, n int) {
	t.Helper()
	px, lb := idxtest.ImagesOf(n, 4, 5)
	idxtest.Write(t, filepath.Join(dir, name+"-images.gz"), idxtest.UnsignedBytes, []int{n, 4, 5}, px)
	idxtest.Write(t, filepath.Join(dir, name+"-labels.gz"), idxtest.UnsignedBytes, []int{n}, lb)
}

// cnnPlan writes cnnImages' training and test files to a new directory
// and returns cnnScenario's plan on them, and the directory.
func cnnPlan(t *testing.T) (*scenarios.Plan, string) {
	t.Helper()
	dir := t.TempDir()
	cnnImages(t, dir, "train", 240)
	cnnImages(t, dir, "test", 60)
	p, err := scenarios.Parse([]byte(cnnScenario), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p, dir
}

// cnnScenario is FedAvg with a small CNN of every layer kind on cnnImages;
// its curves add secure aggregation with distributed DP, and DP-SGD
// clients under a one-run audit (whose canary gradients go through the
// CNN's clipped sums).
const cnnScenario = `name: cnn
seed: 4
iterations: 6
data:
  kind: idx
  agents: 6
  samples: 20
  idx: {images: train-images.gz, labels: train-labels.gz, test_images: test-images.gz, test_labels: test-labels.gz, package: dataset-test}
  partition: {kind: iid}
loss:
  kind: cnn
  classes: 3
  rho: 0.001
  layers:
    - {type: conv, channels: 3, kernel: 3, padding: 1}
    - {type: groupnorm, groups: 3}
    - {type: relu}
    - {type: maxpool, kernel: 2, stride: 1}
    - {type: conv, channels: 2, kernel: 2}
    - {type: tempered-sigmoid, scale: 2, temperature: 2, offset: 1}
    - {type: avgpool, kernel: 2, stride: 1}
    - {type: dense, units: 4}
    - {type: tanh}
    - {type: dense, units: 3}
algorithm: {kind: fedavg, step_size: 0.5, fedavg: {participation: full, local_steps: 6, batch: 5}}
output: {plot: false}
curves:
  - label: plain
  - label: secagg+ and distributed DP
    set: {privacy.secure_aggregation: {protocol: secagg+, bits: 24, clip: 40}, privacy.dp: {mode: distributed, clip: 5, noise_multiplier: 0.5}}
  - label: DP-SGD
    set: {algorithm.fedavg.client: {kind: dp-sgd, clip: 1, noise_multiplier: 0.5}, privacy.audit: {method: one-run, canaries: 10}}
`

// A CNN runs through FedAvg, secure aggregation with distributed DP, DP-SGD
// and its audit, on images whose shape comes from the IDX header; both
// engines write the same metrics, and a shape that does not fit the data is
// refused, naming loss.image.
func TestCNNScenario(t *testing.T) {
	t.Parallel()
	p, dir := cnnPlan(t)
	_, res := onBothEngines(t, p, "cnn")
	// Six rounds learn well above chance (1/3) and below the cross-entropy
	// of a uniform guess, ln 3.
	final := res.Summary.Curves[0].Final
	if acc, ce := float64(final["accuracy"]), float64(final["cross_entropy"]); acc < 0.6 || ce > 0.9*math.Log(3) {
		t.Errorf("plain FedAvg: final accuracy %v, cross-entropy %v", acc, ce)
	}
	for _, c := range res.Summary.Curves {
		if _, ok := c.Final["msd"]; ok {
			t.Errorf("%s: a CNN run reports an MSD", c.Label)
		}
	}
	bad, err := scenarios.Parse([]byte(cnnScenario), filepath.Join(dir, "s.yaml"), dir, []string{"loss.image=[1, 4, 4]"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = run.Execute(bad, t.TempDir(), run.Options{})
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "loss.image: images of 1×4×4 are 16 values, but the data have 20 features") {
		t.Errorf("a 4×4 image shape for 4×5 images: %v", err)
	}
}

// A cnn's impossible fields are refused before running, each naming its
// field: fields of another layer type, unknown types, a network named twice,
// layers on a loss without a network, data that are not images, an optimum,
// and layers that do not fit the image.
func TestCNNRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ old, new, set, want string }{
		{"padding: 1}", "padding: 1, units: 2}", "", "loss.layers[0].units: does not apply: only a dense layer has units"},
		{"kernel: 2, stride: 1}", "kernel: 2, stride: 1, padding: 1}", "", "loss.layers[3].padding: does not apply: only a conv layer is padded"},
		{"{type: relu}", "{type: softplus}", "", `loss.layers[2].type: unknown layer "softplus"`},
		{"{type: tanh}", "{type: tempered-sigmoid, scale: 2}", "", "loss.layers[8].temperature: must be a positive number"},
		{"", "", "loss.architecture=papernot-cnn", "loss.layers: does not apply: loss.architecture papernot-cnn names the network"},
		{"", "", "loss.kind=mlp", "loss.layers: does not apply: only loss cnn has layers"},
		{"", "", "loss.optimum=solve", "loss.optimum: the cnn loss is not convex"},
		{"", "", "loss.image=[1, 2, 2]", "loss.layers[4]: layers[4] (conv): a 2×2 window does not fit the 3×1×1 input"},
		{"", "", "loss.image=[1, 4]", "loss.image: must be [channels, height, width]"},
		{"{type: dense, units: 3}", "{type: dense, units: 4}", "", "loss.layers[9]: the last layer must be dense with one unit per class (3)"},
	} {
		src := strings.Replace(cnnScenario, c.old, c.new, 1)
		var set []string
		if c.set != "" {
			set = []string{c.set}
		}
		if _, err := scenarios.Parse([]byte(src), "t.yaml", t.TempDir(), set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s%s: %v, want %q", c.new, c.set, err, c.want)
		}
	}
	blobs := "name: x\ndata: {kind: blobs, agents: 4, samples: 10, dim: 4, blobs: {separation: 1}}\nloss: {kind: cnn, architecture: mcmahan-cnn}\nalgorithm: {kind: fedavg}\n"
	if _, err := scenarios.Parse([]byte(blobs), "t.yaml", t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "loss.kind: multi-class data (kind blobs) need loss softmax or mlp, got cnn") {
		t.Errorf("cnn on blobs: %v", err)
	}
}

// The time estimate of a CNN run counts its forward multiply-adds, not its
// parameters: cnnScenario's plain FedAvg curve (6 rounds of 6 agents, 6
// local steps of 5 samples, data read from files, so nothing drawn per
// agent) is exactly fedavgEstimate's tasks·(E·B·4·MACs + 4·d), with the
// network's MACs and d worked out on the 4×5 images.
func TestCNNEstimateCountsMultiplyAdds(t *testing.T) {
	t.Parallel()
	p, _ := cnnPlan(t)
	// The 4×5 images are what the estimate reads from the IDX header.
	nt, err := p.Curves[0].Scenario.Loss.Net(20, []int{1, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	macs, d := float64(nt.MultiplyAdds()), float64(nt.Dim())
	if macs <= 2*d {
		t.Fatalf("the test network does %v multiply-adds for %v parameters: it cannot tell them apart", macs, d)
	}
	tasks := 6.0 * 6
	want := tasks * (6*5*4*macs + 4*d)
	if got := run.EstimatePlan(p, run.Options{}).Curves[0].Ops; math.Abs(got/want-1) > 1e-12 {
		t.Errorf("estimated %v operations, want %v (4 per multiply-add)", got, want)
	}
}
