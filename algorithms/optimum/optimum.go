// Package optimum computes the minimizers that mean-square deviations are
// measured against: the global minimizer w^o of the weighted aggregate risk
// Σ_k π_k J_k(w) and the local minimizers w_k^o of each J_k.
//
// The papers average the agents' risks uniformly (π_k = 1/K, thesis eq. 2.1);
// under a left-stochastic but not doubly-stochastic combination matrix the
// decentralized algorithms converge to the Perron-weighted minimizer instead
// (decentralized-privacy spec §1), so the weights are a parameter.
package optimum

import (
	"context"
	"errors"
	"fmt"

	"maple/algorithms/data"
)

// ErrSingular reports a linear system the Cholesky factorization rejected.
var ErrSingular = errors.New("optimum: normal equations are not positive definite")

// Uniform returns the weights 1/k, k times.
func Uniform(k int) []float64 {
	w := make([]float64, k)
	for i := range w {
		w[i] = 1 / float64(k)
	}
	return w
}

// LeastSquares returns the closed-form minimizer of Σ_k π_k J_k(w) for the
// regularized least-squares risk J_k(w) = (1/N_k) Σ_n (y_n − x_nᵀw)² + ρ‖w‖²:
//
//	w^o = (R̂ + ρI)⁻¹ r̂,  R̂ = Σ_k π_k (1/N_k) Σ_n x_n x_nᵀ,  r̂ = Σ_k π_k (1/N_k) Σ_n y_n x_n
//
// (thesis eqs. 2.74–2.76 with the outer product the text misprints as uᵀu).
func LeastSquares(sets []*data.Set, weights []float64, rho float64) ([]float64, error) {
	if len(sets) == 0 || len(sets) != len(weights) {
		return nil, fmt.Errorf("optimum: %d datasets but %d weights", len(sets), len(weights))
	}
	return leastSquares(context.Background(), data.Sets(sets), func(k int) float64 { return weights[k] }, rho)
}

// leastSquares is LeastSquares on the datasets of src with weights π_k =
// weight(k), checking ctx before each agent's share of the normal
// equations.
func leastSquares(ctx context.Context, src data.Source, weight func(k int) float64, rho float64) ([]float64, error) {
	e := NewNormalEquations(src.Set(0).Dim)
	err := data.Each(src, func(k int, s *data.Set) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("optimum: interrupted: %w", err)
		}
		e.Add(weight(k), s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return e.Solve(rho)
}
