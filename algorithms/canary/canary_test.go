package canary

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/privacy/clip"
)

// A gradient canary's clipped gradient is C·u exactly, bit for bit, whatever
// the model: its direction is built so that clipping to C leaves C·u as it
// is (for Dirac canaries ‖C·e_j‖ = C exactly; random ones are scaled down by
// an ulp where rounding would make C·u longer than C). Out, it adds nothing
// (add/remove) or −C·u exactly (replace-one). The random directions are
// unit vectors to rounding (1e-15: k squares of 1/√k summed) on k = min(dim,
// 64) distinct coordinates.
func TestGradientCanaryIsCTimesUAfterClipping(t *testing.T) {
	l := loss.Loss{Kind: loss.LeastSquares}
	for _, dim := range []int{2, 3, 70, 1000} {
		for _, C := range []float64{1, 0.7, 3.3, 1e-3} {
			r := rng.New(uint64(dim), "test", "canaries")
			free := []int{0, dim - 1}
			for _, m := range []int{2, 5} {
				dirs, dirac := NewGradients(r, m, dim, free, C)
				if dirac != (m <= len(free)) {
					t.Fatalf("dim %d, %d canaries, %d free coordinates: dirac %v", dim, m, len(free), dirac)
				}
				in := make([]bool, m)
				for i := range in {
					in[i] = i%2 == 0
				}
				for _, opposite := range []bool{false, true} {
					can := &Examples{Kind: Gradient, Directions: dirs, Included: in, Opposite: opposite}
					w := make([]float64, dim)
					for j := range w {
						w[j] = r.NormFloat64() // any model
					}
					for i, u := range dirs {
						if dirac && (len(u.Index) != 1 || !slices.Contains(free, u.Index[0]) || u.Value[0] != 1) {
							t.Fatalf("Dirac canary %+v off the free coordinates %v", u, free)
						}
						if !dirac && (len(u.Index) != min(dim, RandomSupport) || !slices.IsSorted(u.Index) || len(slices.Compact(slices.Clone(u.Index))) != len(u.Index)) {
							t.Fatalf("random canary %+v: want %d distinct sorted coordinates", u, min(dim, RandomSupport))
						}
						want := make([]float64, dim)
						u.AddScaledTo(want, C)
						if n := floats.Norm(want, 2); math.Abs(n-C) > 1e-15*C {
							t.Errorf("‖C·u‖ = %v, want C = %v", n, C)
						}
						v := slices.Clone(want)
						if _, clipped := clip.L2(v, C); clipped {
							t.Errorf("dim %d, C = %v: clipping changes C·u", dim, C)
						}
						got := make([]float64, dim)
						n := can.AddClipped(got, w, l, []int{i}, C, make([]float64, dim), make([]float64, dim))
						wantN := 1
						switch {
						case in[i]:
						case opposite:
							clear(want)
							u.AddScaledTo(want, -C)
						default:
							clear(want)
							wantN = 0
						}
						if n != wantN || !sameBits(got, want) {
							t.Errorf("dim %d, C = %v, canary %d (in %v, opposite %v): added %d gradients, %d coordinates off C·u; want %d", dim, C, i, in[i], opposite, n, differing(got, want), wantN)
						}
					}
				}
			}
		}
	}
}

// differing counts the coordinates where a and b differ in their bits.
func differing(a, b []float64) int {
	n := 0
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			n++
		}
	}
	return n
}

// sameBits reports whether a and b hold the same float64 bits.
func sameBits(a, b []float64) bool {
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// An example canary is a Dirac input a·e_j on a feature no real example
// has, with a real example's label; its amplitude is the least power of
// two at which its gradient at w0 reaches 2C (logistic: |ℓ'(0)| = ½, so
// a = 4C rounded up to a power of two), and the canary's contribution is
// that gradient clipped to C — exactly C·e_j·sign for a Dirac canary of
// logistic loss at w0 = 0, where the gradient is −y·½·a·e_j.
func TestExampleCanariesAreClippedOutOfDistributionExamples(t *testing.T) {
	set := &data.Set{Dim: 5, X: []float64{1, 0, 2, 0, 0, 0, 0, -1, 0, 0}, Y: []float64{1, -1}}
	free := UntouchedFeatures(set)
	if !slices.Equal(free, []int{1, 3, 4}) {
		t.Fatalf("untouched features %v, want [1 3 4]", free)
	}
	l := loss.Loss{Kind: loss.Logistic, Rho: 0.3}
	w0 := make([]float64, 5)
	for _, C := range []float64{1, 3, 0.1} {
		ex, dirac := NewExamples(rng.New(1, "test", "canaries"), 3, set, l, w0, free, C)
		if !dirac {
			t.Fatal("3 free features, 3 canaries: want Dirac inputs")
		}
		want := math.Pow(2, math.Ceil(math.Log2(4*C)))
		want = max(want, 1)
		var used []int
		for i := range 3 {
			row := ex.Row(i)
			j := slices.IndexFunc(row, func(x float64) bool { return x != 0 })
			if j < 0 || !slices.Contains(free, j) || row[j] != want || (ex.Y[i] != 1 && ex.Y[i] != -1) {
				t.Errorf("C = %v: canary %d: input %v label %v, want %v on a free feature and a real label", C, i, row, ex.Y[i], want)
			}
			used = append(used, j)
			can := &Examples{Kind: Example, Set: ex, Included: []bool{true, true, true}}
			got := make([]float64, 5)
			can.AddClipped(got, w0, l, []int{i}, C, make([]float64, 5), make([]float64, 5))
			g := make([]float64, 5)
			g[j] = -ex.Y[i] * C
			if !sameBits(got, g) {
				t.Errorf("C = %v: canary %d adds %v, want %v", C, i, got, g)
			}
		}
		slices.Sort(used)
		if len(slices.Compact(used)) != 3 {
			t.Errorf("C = %v: the canaries share features: %v", C, used)
		}
	}
	// Without enough free features the inputs are random directions of
	// the features.
	ex, dirac := NewExamples(rng.New(1, "test", "canaries"), 4, set, l, w0, free, 1)
	if dirac || ex.Len() != 4 {
		t.Errorf("4 canaries, 3 free features: Dirac %v, %d canaries", dirac, ex.Len())
	}
	for i := range 4 {
		// a·v with ‖v‖ = 1 to rounding (1e-15), a = 4: ½·a reaches 2C = 2.
		if a := floats.Norm(ex.Row(i), 2); math.Abs(a-4) > 4e-15 {
			t.Errorf("random canary %d: ‖x‖ = %v, want 4", i, a)
		}
	}
}
