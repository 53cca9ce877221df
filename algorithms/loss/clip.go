package loss

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

// ClippedGradSum sets dst to Σ_b clip_c(∇ℓ(w; x_{idx[b]}, y_{idx[b]})), the
// sum of the per-example gradients of the data term, each scaled to ℓ2 norm
// at most c, and returns how many were scaled: the clipped sum of DP-SGD
// (Abadi et al., CCS 2016, Algorithm 1), to which the caller adds
// N(0, (zc)²I) noise. The regularizer's gradient 2ρθ is left out: it does
// not depend on the data, so DP-SGD adds it after the noise without
// spending privacy. Every model maple has (least squares, logistic,
// softmax, MLP) works, one example at a time. scratch must have length
// len(w); dst must not alias w or scratch.
func (l Loss) ClippedGradSum(dst, w []float64, s *data.Set, idx []int, c float64, scratch []float64) (clipped int) {
	if !(c > 0) {
		panic(fmt.Sprintf("loss: clipping norm %v must be positive", c))
	}
	dataTerm := l
	dataTerm.Rho = 0
	clear(dst)
	var one [1]int
	for _, n := range idx {
		one[0] = n
		dataTerm.Grad(scratch, w, s, one[:], nil)
		if norm := math.Sqrt(floats.Dot(scratch, scratch)); norm > c {
			floats.AddScaled(dst, c/norm, scratch)
			clipped++
		} else {
			floats.Add(dst, scratch)
		}
	}
	return clipped
}
