package inputs

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"maple/algorithms/data/idxtest"
	"maple/algorithms/loss"
	"maple/scenarios"
)

// Transformed IDX data have the transform's coefficients as features, in
// the problem and in the estimates (Features), and the transform's
// channels × grid as a sample's image shape (what a cnn on them reads); two jobs of the same data
// share one transformed copy; images the transform cannot take, a
// two-dimensional array and a data.dim that is not the coefficients' count
// are errors naming their field.
func TestTransformedIDX(t *testing.T) {
	dir := t.TempDir()
	const n = 24
	px := make([]byte, n*12*10)
	for i := range px {
		px[i] = byte(i * 31 % 256)
	}
	lb := make([]byte, n)
	for i := range lb {
		lb[i] = byte(i % 3)
	}
	idxtest.Write(t, filepath.Join(dir, "images.gz"), idxtest.UnsignedBytes, []int{n, 12, 10}, px)
	idxtest.Write(t, filepath.Join(dir, "flat.gz"), idxtest.UnsignedBytes, []int{n, 120}, px)
	idxtest.Write(t, filepath.Join(dir, "labels.gz"), idxtest.UnsignedBytes, []int{n}, lb)
	const src = `name: idx
data: {kind: idx, agents: 2, samples: 10, test_samples: 4, idx: {images: images.gz, labels: labels.gz}, transform: {kind: scatternet, angles: 4, groups: 5}}
loss: {kind: softmax, classes: 3, optimum: none}
algorithm: {kind: test-data}
`
	build := func(overrides ...string) (*Problem, error) {
		p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, overrides)
		if err != nil {
			t.Fatal(err)
		}
		return BuildProblem(context.Background(), p.Curves[0], dir, 1)
	}
	p, err := build()
	if err != nil {
		t.Fatal(err)
	}
	// 1 + 2·4 + 16·1 = 25 channels of ⌊12/4⌋×⌊10/4⌋ = 3×2.
	const features = 25 * 3 * 2
	if p.Sets[0].Dim != features || p.Test.Dim != features || p.Sets[0].Len()+p.Sets[1].Len()+p.Test.Len() != n {
		t.Fatalf("dims %d and %d, %d + %d + %d samples; want %d features and %d samples", p.Sets[0].Dim, p.Test.Dim, p.Sets[0].Len(), p.Sets[1].Len(), p.Test.Len(), features, n)
	}
	if !slices.Equal(p.image, []int{25, 3, 2}) {
		t.Errorf("a sample's image shape %v, want the transform's channels and grid [25 3 2] (a cnn's default loss.image)", p.image)
	}
	plan, _ := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if m := Features(plan.Curves[0].Scenario, dir); m != features {
		t.Errorf("Features = %d, want %d", m, features)
	}
	if got := ImageShape(plan.Curves[0].Scenario, dir); !slices.Equal(got, []int{25, 3, 2}) {
		t.Errorf("ImageShape = %v from the header, want [25 3 2]", got)
	}
	again, err := build()
	if err != nil || again.Sets[0] != p.Sets[0] {
		t.Errorf("a second job of the same data transformed them again (%v)", err)
	}
	// A cnn on the coefficients reads them as 25 channels of 3×2 without
	// loss.image: a 2×2 convolution fits that grid.
	cnn, err := build("loss.kind=cnn", "loss.layers=[{type: conv, channels: 2, kernel: 2}, {type: dense, units: 3}]")
	if err != nil {
		t.Fatalf("a cnn on the coefficients: %v", err)
	}
	if in := cnn.Loss.Net.Input(); in != (loss.Shape{C: 25, H: 3, W: 2}) {
		t.Errorf("the cnn reads images of %v, want 25×3×2", in)
	}
	for _, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"data.transform.scales=4", "data.transform.groups=0"}, "data.transform.scales: " + filepath.Join(dir, "images.gz") + " holds [12 10] images: scatter: an image side of 12 pixels needs 2^J < 12, got J = 4"},
		{[]string{"data.idx.images=flat.gz"}, "data.idx.images: " + filepath.Join(dir, "flat.gz") + ": the scattering transform needs images, an array of dimensions N×H×W; got dimensions [24 120]"},
		{[]string{"data.dim=120"}, "data.dim: " + filepath.Join(dir, "images.gz") + " has 150 transform coefficients per sample, not 120"},
	} {
		if _, err := build(c.set...); !scenarios.IsUserError(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want a scenario error with %q", c.set, err, c.want)
		}
	}
}
