package data

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// sampleCount draws a per-agent sample count N_k uniformly from [lo, hi].
func sampleCount(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// uniformIn draws uniformly from [lo, hi).
func uniformIn(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

// sigmoid returns 1/(1 + e^{−z}) without overflow for large |z|.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// bernoulliLabel returns +1 with probability σ(z) and −1 otherwise, the label
// model of logistic regression: P(y | x) = σ(y·xᵀw⋆).
func bernoulliLabel(r *rand.Rand, z float64) float64 {
	if r.Float64() < sigmoid(z) {
		return 1
	}
	return -1
}

// checkCounts validates the shared agent/sample-count fields of the generators.
func checkCounts(agents, lo, hi int) error {
	switch {
	case agents < 1:
		return fmt.Errorf("agents: must be at least 1, got %d", agents)
	case lo < 1 || hi < lo:
		return fmt.Errorf("samples: need 1 ≤ min ≤ max, got [%d, %d]", lo, hi)
	}
	return nil
}

// checkRange validates a range 0 ≤ lo ≤ hi < top of probabilities or
// variances (top = +Inf for variances), naming the field. NaN bounds fail.
func checkRange(field string, lo, hi, top float64) error {
	if lo >= 0 && hi >= lo && hi < top {
		return nil
	}
	if math.IsInf(top, 1) {
		return fmt.Errorf("%s: need finite 0 ≤ min ≤ max, got [%v, %v]", field, lo, hi)
	}
	return fmt.Errorf("%s: need 0 ≤ min ≤ max < %v, got [%v, %v]", field, top, lo, hi)
}

// newDense returns a dense set of n samples of dim features, zero, its
// features and targets in one allocation.
func newDense(n, dim int) *Set {
	buf := make([]float64, n*dim+n)
	return &Set{Dim: dim, X: buf[: n*dim : n*dim], Y: buf[n*dim:]}
}

// scratch returns a vector of length n: stack if it is long enough, a new
// one otherwise.
func scratch(stack []float64, n int) []float64 {
	if n <= len(stack) {
		return stack[:n]
	}
	return make([]float64, n)
}

// reshapeDense makes s a dense set of n samples of dim features, reusing its
// storage when it is large enough, and otherwise allocating it for up to
// most samples; the values are left to the caller.
func (s *Set) reshapeDense(n, dim, most int) {
	x, y := s.X, s.Y
	if cap(x) < n*dim {
		x = make([]float64, max(n, most)*dim)
	}
	if cap(y) < n {
		y = make([]float64, max(n, most))
	}
	*s = Set{Dim: dim, X: x[:n*dim], Y: y[:n]}
}
