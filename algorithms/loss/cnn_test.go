package loss

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

// testNets are small networks that between them exercise every layer kind
// and both window geometries (padding and stride, overlapping pools), on
// 2×7×7 images and 3 classes.
func testNets(t *testing.T) map[string]*Net {
	t.Helper()
	in := Shape{C: 2, H: 7, W: 7}
	specs := map[string][]Layer{
		"conv-relu-maxpool": {
			{Kind: LayerConv, Channels: 3, Kernel: 3, Stride: 2, Padding: 1},
			{Kind: LayerReLU},
			{Kind: LayerMaxPool, Kernel: 2, Stride: 1},
			{Kind: LayerDense, Units: 3},
		},
		"conv-tanh-avgpool-groupnorm-tempered": {
			{Kind: LayerConv, Channels: 4, Kernel: 2, Stride: 1},
			{Kind: LayerTanh},
			{Kind: LayerAvgPool, Kernel: 2, Stride: 2},
			{Kind: LayerGroupNorm, Groups: 2},
			{Kind: LayerTemperedSigmoid, Scale: 2, Temperature: 1.5, Offset: 1},
			{Kind: LayerConv, Channels: 2, Kernel: 3, Stride: 1, Padding: 1},
			{Kind: LayerDense, Units: 5},
			{Kind: LayerTanh},
			{Kind: LayerDense, Units: 3},
		},
	}
	nets := map[string]*Net{}
	for name, layers := range specs {
		nt, err := NewNet(in, layers, 3)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		nets[name] = nt
	}
	return nets
}

// cnnLoss returns the CNN loss of nt with a random origin drawn from r.
func cnnLoss(nt *Net, rho float64, r *rand.Rand) Loss {
	l := Loss{Kind: CNN, Classes: nt.Classes(), Net: nt, Rho: rho}
	l.Origin = l.Init(nt.Input().Size(), r)
	// The group normalization's scales start at 1 and shifts at 0; move
	// them so that their gradients are checked away from that point too.
	for j := range l.Origin {
		if l.Origin[j] == 1 || l.Origin[j] == 0 {
			l.Origin[j] += 0.3 * r.NormFloat64()
		}
	}
	return l
}

// TestCNNGradientIsFiniteDifferences checks Grad of every layer kind against
// central differences of the mean of Value over the batch. With h = 10⁻⁵
// the truncation error is O(h²·f‴) ≈ 10⁻¹⁰ and the rounding error
// O(ε·f/h) ≈ 10⁻¹¹, so 10⁻⁶ relative to the gradient's largest entry
// leaves ample margin while catching any wrong term.
func TestCNNGradientIsFiniteDifferences(t *testing.T) {
	for name, nt := range testNets(t) {
		r := rand.New(rand.NewPCG(1, 2))
		l := cnnLoss(nt, 0.01, r)
		s := classSet(r, 5, nt.Input().Size(), 3)
		idx := []int{4, 0, 2}
		w := make([]float64, l.Dim(s.Dim))
		for j := range w {
			w[j] = 0.05 * r.NormFloat64()
		}
		g := make([]float64, len(w))
		l.Grad(g, w, s, idx, nil)
		f := func(w []float64) float64 {
			var sum float64
			for _, n := range idx {
				sum += l.Value(w, s, n)
			}
			return sum / float64(len(idx))
		}
		scale := floats.Norm(g, math.Inf(1))
		const h = 1e-5
		for j := range w {
			wj := w[j]
			w[j] = wj + h
			up := f(w)
			w[j] = wj - h
			down := f(w)
			w[j] = wj
			if fd := (up - down) / (2 * h); math.Abs(fd-g[j]) > 1e-6*scale {
				t.Errorf("%s: ∂/∂θ_%d = %v, finite difference %v", name, j, g[j], fd)
			}
		}
	}
}

// TestCNNBatchIsSumOfExamples checks that a batch's gradient, over more
// than one block and with importance weights, is the weighted sum of the
// one-example gradients (to rounding: the sums are taken in another order),
// and FullGrad the mean of them all.
func TestCNNBatchIsSumOfExamples(t *testing.T) {
	for name, nt := range testNets(t) {
		r := rand.New(rand.NewPCG(3, 4))
		l := cnnLoss(nt, 0.02, r)
		s := classSet(r, cnnBlock+7, nt.Input().Size(), 3)
		idx := make([]int, s.Len())
		a := make([]float64, s.Len())
		for i := range idx {
			idx[i], a[i] = s.Len()-1-i, r.Float64()
		}
		w := make([]float64, l.Dim(s.Dim))
		g, one, want, full := make([]float64, len(w)), make([]float64, len(w)), make([]float64, len(w)), make([]float64, len(w))
		l.Grad(g, w, s, idx, a)
		for i, n := range idx {
			l.Grad(one, w, s, []int{n}, nil)
			floats.AddScaled(want, a[i], one)
		}
		if d := floats.Distance(g, want, math.Inf(1)); d > 1e-12*floats.Norm(want, math.Inf(1)) {
			t.Errorf("%s: weighted batch gradient is %g from the sum of one-example gradients", name, d)
		}
		l.FullGrad(full, w, s)
		l.Grad(g, w, s, idx, nil)
		if d := floats.Distance(g, full, math.Inf(1)); d > 1e-12*floats.Norm(full, math.Inf(1)) {
			t.Errorf("%s: FullGrad is %g from Grad over every sample", name, d)
		}
	}
}

// TestCNNClippedIsPerExample checks the batched clipped sum (ghost norms for
// the dense layers, direct per-example products for the convolutions and
// group normalizations) against clipping one-example backward passes, over
// more than one block, with none, some and all of the examples clipped.
func TestCNNClippedIsPerExample(t *testing.T) {
	for name, nt := range testNets(t) {
		r := rand.New(rand.NewPCG(5, 6))
		l := cnnLoss(nt, 0.5, r) // ρ is left out of the clipped sum
		s := classSet(r, cnnBlock+9, nt.Input().Size(), 3)
		idx := make([]int, s.Len())
		for i := range idx {
			idx[i] = (7 * i) % s.Len()
		}
		w := make([]float64, l.Dim(s.Dim))
		for j := range w {
			w[j] = 0.1 * r.NormFloat64()
		}
		dataTerm := l
		dataTerm.Rho = 0
		one := make([]float64, len(w))
		norms := make([]float64, len(idx))
		for i, n := range idx {
			dataTerm.Grad(one, w, s, []int{n}, nil)
			norms[i] = floats.Norm(one, 2)
		}
		med := floats.Max(norms) / 2
		for _, c := range []float64{floats.Max(norms) * 2, med, floats.Min(norms) / 2} {
			want := make([]float64, len(w))
			wantClipped := 0
			for i, n := range idx {
				dataTerm.Grad(one, w, s, []int{n}, nil)
				sc := 1.0
				if norms[i] > c {
					sc = c / norms[i]
					wantClipped++
				}
				floats.AddScaled(want, sc, one)
			}
			got := make([]float64, len(w))
			clipped := l.ClippedGradSum(got, w, s, idx, c, make([]float64, len(w)))
			if clipped != wantClipped {
				t.Errorf("%s, c = %g: %d clipped, want %d", name, c, clipped, wantClipped)
			}
			if d := floats.Distance(got, want, math.Inf(1)); d > 1e-10*floats.Norm(want, math.Inf(1)) {
				t.Errorf("%s, c = %g: clipped sum is %g from the per-example one", name, c, d)
			}
		}
	}
}

// TestCNNEvaluationIsPerExample checks that an example's logits do not
// depend on the block it is computed in: Evaluate of a set equals, bit for
// bit, the mean of each example evaluated alone, summed in order.
func TestCNNEvaluationIsPerExample(t *testing.T) {
	for name, nt := range testNets(t) {
		r := rand.New(rand.NewPCG(7, 8))
		l := cnnLoss(nt, 0, r)
		s := classSet(r, cnnBlock+5, nt.Input().Size(), 3)
		w := make([]float64, l.Dim(s.Dim))
		ev := l.Evaluate(w, s)
		var nll float64
		wrong := 0
		for n := range s.Len() {
			one := &data.Set{Dim: s.Dim, X: s.Row(n), Y: s.Y[n : n+1]}
			e := l.Evaluate(w, one)
			nll += e.CrossEntropy
			if e.Error == 1 {
				wrong++
			}
		}
		if want := evaluation(wrong, s.Len(), nll); ev != want {
			t.Errorf("%s: Evaluate %+v, examples one at a time %+v", name, ev, want)
		}
	}
}

// TestArchitectures checks the named networks' sizes on 28×28 images
// against the papers' (McMahan et al.: 1 663 370 parameters) and the
// layers' arithmetic (Papernot et al.: 1 040 + 8 224 + 16 416 + 330), their
// forward multiply-adds against the layers' arithmetic — McMahan's
// 32·28²·25 + 64·14²·800 + 512·3136 + 10·512, Papernot's 16·14²·64 +
// 32·5²·256 + 32·512 + 10·32 — and that an initialization draws PyTorch's
// bounds.
func TestArchitectures(t *testing.T) {
	macs := map[string]int{"mcmahan-cnn": 627200 + 10035200 + 1605632 + 5120, "papernot-cnn": 200704 + 204800 + 16384 + 320}
	for name, want := range map[string]int{"mcmahan-cnn": 1663370, "papernot-cnn": 26010} {
		layers, err := Architecture(name, 10)
		if err != nil {
			t.Fatal(err)
		}
		nt, err := NewNet(Shape{C: 1, H: 28, W: 28}, layers, 10)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if nt.Dim() != want {
			t.Errorf("%s: %d parameters, want %d", name, nt.Dim(), want)
		}
		if got := nt.MultiplyAdds(); got != macs[name] {
			t.Errorf("%s: %d multiply-adds, want %d", name, got, macs[name])
		}
	}
	layers, _ := Architecture("papernot-cnn", 10)
	nt, _ := NewNet(Shape{C: 1, H: 28, W: 28}, layers, 10)
	theta := nt.init(rand.New(rand.NewPCG(1, 1)))
	conv1 := theta[:16*64+16] // fan-in 1·8·8: bound 1/8
	if m := floats.Norm(conv1, math.Inf(1)); m > 1.0/8 || m < 0.9/8 {
		t.Errorf("papernot-cnn conv1: largest |θ| %v, want just under 1/8", m)
	}
	if _, err := Architecture("lenet", 10); err == nil {
		t.Error("Architecture accepted an unknown name")
	}
}

// TestNewNetRefuses checks that impossible networks are refused, naming the
// layer.
func TestNewNetRefuses(t *testing.T) {
	in := Shape{C: 3, H: 5, W: 5}
	for _, c := range []struct {
		layers []Layer
		want   string
	}{
		{[]Layer{{Kind: LayerConv, Channels: 2, Kernel: 7, Stride: 1}, {Kind: LayerDense, Units: 2}}, "layers[0] (conv): a 7×7 window"},
		{[]Layer{{Kind: LayerGroupNorm, Groups: 2}, {Kind: LayerDense, Units: 2}}, "layers[0] (groupnorm): groups 2"},
		{[]Layer{{Kind: LayerMaxPool, Kernel: 2, Stride: 0}, {Kind: LayerDense, Units: 2}}, "layers[0] (maxpool): kernel and stride"},
		{[]Layer{{Kind: LayerReLU}}, "the last layer must be dense"},
		{[]Layer{{Kind: LayerDense, Units: 3}}, "3 units but there are 2 classes"},
		{[]Layer{{Kind: LayerTemperedSigmoid}, {Kind: LayerDense, Units: 2}}, "layers[0] (tempered-sigmoid)"},
	} {
		_, err := NewNet(in, c.layers, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewNet(%v) = %v, want an error containing %q", c.layers, err, c.want)
		}
	}
}
