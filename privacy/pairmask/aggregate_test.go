package pairmask

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/rng"
)

// pairMasker returns the masks the two agents of a pair compute, each on its
// own, for one slot.
type pairMasker func(t *testing.T, plus, minus int, at Slot, dst [2][]float64)

func secureMasker(t *testing.T, plus, minus int, at Slot, dst [2][]float64) {
	l, m := keyPair(t, plus), keyPair(t, minus)
	NewMaskStream(shared(t, l, m)).Fill(dst[0], at, sigma)
	NewMaskStream(shared(t, m, l)).Fill(dst[1], at, sigma)
}

func oracleMasker(_ *testing.T, plus, minus int, at Slot, dst [2][]float64) {
	NewMaskStream(OracleSecret(pairStream(99, plus, minus))).Fill(dst[0], at, sigma)
	NewMaskStream(OracleSecret(pairStream(99, minus, plus))).Fill(dst[1], at, sigma)
}

// pairStream opens the oracle stream of the unordered pair {a, b}, as each end
// of the pair does on its own.
func pairStream(seed uint64, a, b int) *rand.Rand {
	return rng.New(seed, fmt.Sprintf("pair/%d/%d", min(a, b), max(a, b)), "oracle")
}

func paperMasker(_ *testing.T, plus, minus int, at Slot, dst [2][]float64) {
	gl, gm := paperPair(PaperParams{T: 1, Sigma: sigma}, len(dst[0]), uint64(1000*plus+minus))
	copy(dst[0], gl)
	copy(dst[1], gm)
}

// Receiver k = 0 with neighbours 1…7 and random weights: the weighted sum of the
// masked messages equals the weighted sum of the plain ones.
//
// Tolerance. Model entries are drawn from [1, 2), so every coordinate of the
// exact aggregate Σ_j a_{j0} y_j lies in [1, 2) and relative error is well
// defined. A coordinate of the aggregate passes through at most 4 mask
// additions in a message, one product by the weight and 8 additions at the
// receiver, so its rounding error is at most about 14u·S with u = 2⁻⁵³ ≈
// 1.1e-16 and S the total magnitude of what is added (the terms' weights
// cancel: a·(g/a) = g(1 + δ), |δ| ≤ 2u, whatever a). Here S ≤ Σ_j a_j|y_j| +
// Σ_pairs 2|g| ≤ 2 + 24·20σ = 50, since Laplace masks of scale σ/√2 exceed 20σ
// with probability e^{−20√2} ≈ 5e-13. The error is ≤ 14·1.1e-16·50 ≈ 8e-14,
// relative to a coordinate ≥ 1: 1e-12 leaves a margin of 10.
func TestReceiverAggregateIsUnchanged(t *testing.T) {
	const dim, receiver = 16, 0
	r := rand.New(rand.NewPCG(6, 6))
	neighbours := []int{0, 1, 2, 3, 4, 5, 6, 7}
	weights, y := make([]float64, 8), make([][]float64, 8)
	for j := range weights {
		weights[j] = 0.01 + r.Float64() // small weights make g/a large
		y[j] = make([]float64, dim)
		for c := range y[j] {
			y[j][c] = 1 + r.Float64()
		}
	}
	floats.Scale(1/floats.Sum(weights), weights) // Σ_j a_{j0} = 1, a_00 included

	want := make([]float64, dim)
	for j := range y {
		floats.AddScaled(want, weights[j], y[j])
	}
	plus, minus, ok := SplitRoles(Alternating, receiver, neighbours)
	if !ok {
		t.Fatal("7 neighbours reported unmaskable")
	}
	for _, mode := range []struct {
		name   string
		masker pairMasker
	}{{"secure", secureMasker}, {"oracle", oracleMasker}, {"paper", paperMasker}} {
		name, masker := mode.name, mode.masker
		at := Slot{Receiver: receiver, Iteration: 4, Stage: 2}
		messages := make([][]float64, 8)
		for j := range messages {
			messages[j] = append([]float64(nil), y[j]...)
		}
		masks := [2][]float64{make([]float64, dim), make([]float64, dim)}
		for _, l := range plus {
			for _, m := range minus {
				masker(t, l, m, at, masks)
				ApplyMask(messages[l], masks[0], Plus, weights[l])
				ApplyMask(messages[m], masks[1], Minus, weights[m])
			}
		}
		got := make([]float64, dim)
		for j := range messages {
			floats.AddScaled(got, weights[j], messages[j])
		}
		for c := range got {
			if e := math.Abs(got[c]-want[c]) / want[c]; e > 1e-12 {
				t.Errorf("%s: coordinate %d: aggregate %v, unmasked %v (relative error %.2g)", name, c, got[c], want[c], e)
			}
		}
		// The messages themselves are masked: every neighbour's differs
		// from its model.
		for _, j := range neighbours[1:] {
			if floats.Equal(messages[j], y[j]) {
				t.Errorf("%s: neighbour %d sent its model unmasked", name, j)
			}
		}
	}
}
