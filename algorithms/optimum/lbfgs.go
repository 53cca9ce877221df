package optimum

import (
	"gonum.org/v1/gonum/floats"
)

const (
	// lbfgsMemory is the number of curvature pairs L-BFGS keeps; 10 is the
	// customary choice (Nocedal & Wright, Numerical Optimization, §7.2).
	lbfgsMemory = 10
	// maxLBFGSIterations bounds the L-BFGS fallback; on a logistic risk with
	// condition number κ it needs O(√κ)–O(κ) iterations, a few hundred for
	// ρ ≥ 1e-4 and features of unit scale.
	maxLBFGSIterations = 20000
)

// lbfgs minimizes F from w = 0 by limited-memory BFGS with the backtracking
// line search of Newton's method, to the tolerance of Solve. Its unchecked
// full step for a tiny decrement rests on the superlinear convergence of
// L-BFGS, whose direction then approximates Newton's; the iteration limit
// catches a failure. gonum's optimize.LBFGS is not used: tried with a
// gradient threshold of 1e-12 and function-value convergence switched off,
// its line search fails ("linesearch: failed to converge") at ‖∇F‖ ≈ 1e-11,
// where the decrease it must certify is below the rounding error of F; this
// solver's unchecked full step near the optimum is what reaches the tolerance.
func (p *problem) lbfgs() ([]float64, Report, error) {
	return p.descend("lbfgs", "L-BFGS", maxLBFGSIterations, &curvatureMemory{})
}

// curvatureMemory holds the last lbfgsMemory pairs (s, y) = (w' − w, ∇F(w') − ∇F(w)).
type curvatureMemory struct {
	s, y [][]float64
	rho  []float64 // 1/(yᵀs)
}

// observe records the pair (s, y) of the last step, copying it, if it has positive curvature yᵀs > 0 (always
// true for a strictly convex F; skipping it otherwise keeps H positive definite).
func (m *curvatureMemory) observe(s, y []float64) {
	ys := floats.Dot(y, s)
	if !(ys > 0) {
		return
	}
	var sv, yv []float64
	if len(m.s) == lbfgsMemory { // recycle the oldest pair's storage
		sv, yv = m.s[0], m.y[0]
		m.s, m.y, m.rho = m.s[1:], m.y[1:], m.rho[1:]
	} else {
		sv, yv = make([]float64, len(s)), make([]float64, len(y))
	}
	copy(sv, s)
	copy(yv, y)
	m.s, m.y, m.rho = append(m.s, sv), append(m.y, yv), append(m.rho, 1/ys)
}

// direction sets d = −H g by the two-loop recursion (Nocedal & Wright,
// Algorithm 7.4) with the initial scaling H₀ = (sᵀy / yᵀy)·I of the newest
// pair; L-BFGS does not need w.
func (m *curvatureMemory) direction(d, _, g []float64) error {
	copy(d, g)
	alpha := make([]float64, len(m.s))
	for i := len(m.s) - 1; i >= 0; i-- {
		alpha[i] = m.rho[i] * floats.Dot(m.s[i], d)
		floats.AddScaled(d, -alpha[i], m.y[i])
	}
	if n := len(m.s); n > 0 {
		floats.Scale(1/(m.rho[n-1]*floats.Dot(m.y[n-1], m.y[n-1])), d)
	}
	for i := range m.s {
		beta := m.rho[i] * floats.Dot(m.y[i], d)
		floats.AddScaled(d, alpha[i]-beta, m.s[i])
	}
	floats.Scale(-1, d)
	return nil
}
