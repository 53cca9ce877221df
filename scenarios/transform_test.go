package scenarios_test

import (
	"fmt"
	"strings"
	"testing"

	"maple/scenarios"
)

// idxMinimal is a scenario of idx data with a transform; the files are not
// read by the loader.
const idxMinimal = `name: t
data:
  kind: idx
  agents: 2
  samples: 30
  idx: {images: train.gz, labels: labels.gz}
  test_samples: 10
  transform: {kind: scatternet}
loss: {kind: softmax, optimum: none}
algorithm:
  kind: fedavg
  step_size: 0.1
`

// The transform's fields take their defaults (J = 2, L = 8, order 2, no
// groups), and every field out of its range, or the transform where it does
// not apply, is one line naming the field.
func TestTransformFields(t *testing.T) {
	p := parse(t, idxMinimal)
	tr := p.Curves[0].Scenario.Data.Transform
	if tr == nil || *tr != (scenarios.Transform{Kind: "scatternet", Scales: 2, Angles: 8, Order: 2}) {
		t.Fatalf("defaults: %+v", tr)
	}
	p = parse(t, idxMinimal, "data.transform={kind: scatternet, scales: 1, angles: 4, order: 1, groups: 5}")
	if tr := p.Curves[0].Scenario.Data.Transform; *tr != (scenarios.Transform{Kind: "scatternet", Scales: 1, Angles: 4, Order: 1, Groups: 5}) {
		t.Fatalf("explicit fields: %+v", tr)
	}
	for _, c := range []struct {
		src  string
		set  []string
		want string
	}{
		{idxMinimal, []string{"data.transform.kind=wavelets"}, `data.transform.kind: unknown value "wavelets"`},
		{idxMinimal, []string{"data.transform.scales=0"}, "data.transform.scales: must lie in 1 … 6, got 0"},
		{idxMinimal, []string{"data.transform.scales=7"}, "data.transform.scales: must lie in 1 … 6, got 7"},
		{idxMinimal, []string{"data.transform.angles=0"}, "data.transform.angles: must lie in 1 … 16, got 0"},
		{idxMinimal, []string{"data.transform.angles=17"}, "data.transform.angles: must lie in 1 … 16, got 17"},
		{idxMinimal, []string{"data.transform.order=3"}, "data.transform.order: must lie in 1 … 2, got 3"},
		{idxMinimal, []string{"data.transform.groups=2"}, "data.transform.groups: must be 0 or divide the 81 channels of scales 2, angles 8, order 2; got 2"},
		{idxMinimal, []string{"data.transform.groups=-3"}, "data.transform.groups: must be 0 or divide the 81 channels"},
		{idxMinimal, []string{"data.transform.colour=red"}, "data.transform.colour: unknown field"},
		{idxMinimal, []string{"data.idx.scale=standardize"}, "data.idx.scale: standardize uses every training image's pixels"},
		{strings.Replace(minimal, "samples: 30", "samples: 30\n  transform: {kind: scatternet}", 1), nil, "data.transform: only the images of idx data have a transform, but data.kind is regression"},
		{strings.Replace(minimal, "samples: 30", "samples: 30\n  kind: blobs\n  transform: {kind: scatternet}", 1), nil, "data.transform: only the images of idx data have a transform, but data.kind is blobs"},
	} {
		_, err := scenarios.Parse([]byte(c.src), "t.yaml", ".", c.set)
		if err == nil {
			t.Errorf("%v: accepted; want %q", c.set, c.want)
			continue
		}
		if msg := err.Error(); !scenarios.IsUserError(err) || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: error\n  %s\nwant one line containing\n  %s", c.set, msg, c.want)
		}
	}
}

// FuzzTransformFields checks that no value of the transform's fields makes
// the loader panic, and that an accepted transform is in range.
func FuzzTransformFields(f *testing.F) {
	f.Add("scatternet", 2, 8, 2, 27)
	f.Add("scatternet", 0, 8, 2, 0)
	f.Add("scatternet", 6, 16, 1, 97)
	f.Add("", -1, -1, -1, -1)
	f.Fuzz(func(t *testing.T, kind string, scales, angles, order, groups int) {
		src := strings.Replace(idxMinimal, "transform: {kind: scatternet}", fmt.Sprintf("transform: {kind: %q, scales: %d, angles: %d, order: %d, groups: %d}", kind, scales, angles, order, groups), 1)
		p, err := scenarios.Parse([]byte(src), "fuzz.yaml", ".", nil)
		if err != nil {
			if !scenarios.IsUserError(err) {
				t.Fatalf("error %v is not a scenario *Error", err)
			}
			return
		}
		tr := p.Curves[0].Scenario.Data.Transform
		if err := tr.ScatterConfig().Validate(); err != nil || tr.Kind != "scatternet" {
			t.Fatalf("accepted %+v: %v", tr, err)
		}
	})
}

// cnnMinimal is a cnn on 1×8×8 idx images; its first layer is what
// FuzzCNNLayers varies.
const cnnMinimal = `name: t
data: {kind: idx, agents: 2, samples: 30, test_samples: 10, idx: {images: train.gz, labels: labels.gz}}
loss:
  kind: cnn
  classes: 3
  image: [1, 8, 8]
  layers:
    - LAYER
    - {type: dense, units: 3}
algorithm: {kind: fedavg, step_size: 0.1}
`

// FuzzCNNLayers checks that no values of a layer's fields make the loader
// panic, that every refusal is a one-line scenario error, and that the
// network of an accepted scenario builds on its image.
func FuzzCNNLayers(f *testing.F) {
	f.Add("conv", 4, 3, 1, 1, 0, 0)
	f.Add("maxpool", 0, 2, 2, 0, 0, 0)
	f.Add("avgpool", 0, 9, 1, 0, 0, 0)
	f.Add("groupnorm", 0, 0, 0, 0, 0, 3)
	f.Add("conv", 2, 1, 100, -1, 0, 0)
	f.Add("dense", 0, 0, 0, 0, 7, 0)
	f.Add("tanh", 0, 0, 0, 0, 0, 0)
	f.Fuzz(func(t *testing.T, kind string, channels, kernel, stride, padding, units, groups int) {
		if channels > 64 || units > 64 || kernel > 64 || padding > 64 {
			return // keeps each case's network small
		}
		layer := fmt.Sprintf("{type: %q, channels: %d, kernel: %d, stride: %d, padding: %d, units: %d, groups: %d}", kind, channels, kernel, stride, padding, units, groups)
		p, err := scenarios.Parse([]byte(strings.Replace(cnnMinimal, "LAYER", layer, 1)), "fuzz.yaml", ".", nil)
		if err != nil {
			if !scenarios.IsUserError(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%s: error %v is not a one-line scenario *Error", layer, err)
			}
			return
		}
		l := p.Curves[0].Scenario.Loss
		if _, err := l.Net(64, nil); err != nil {
			t.Fatalf("%s: accepted, but its network does not build: %v", layer, err)
		}
	})
}
