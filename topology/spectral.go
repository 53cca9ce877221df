package topology

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// ErrNumerical reports that a linear solve or an eigendecomposition failed or
// was too ill-conditioned to trust.
var ErrNumerical = errors.New("topology: numerical failure")

// Perron returns the Perron vector q of A: A q = q, q > 0 and 1ᵀq = 1. It
// weights each agent in the network centroid Σ_p q_p w_p and in the limit that
// decentralized learning converges to; for a doubly-stochastic A it is 1/P.
//
// A must be left-stochastic within DefaultTol and primitive, otherwise the
// error wraps ErrNotStochastic, ErrNotPrimitive or ErrNotConnected. q is
// computed directly, not by power iteration (which needs about
// 1/(1−|λ₂|) steps, P² on a ring), by solving (A − I) q = 0 with its last
// equation replaced by 1ᵀq = 1; that system is nonsingular because the
// eigenvalue 1 of a primitive A is simple and 1ᵀq ≠ 0.
func Perron(A mat.Matrix) ([]float64, error) {
	if err := CheckLeftStochastic(A, DefaultTol); err != nil {
		return nil, err
	}
	if err := CheckPrimitive(A); err != nil {
		return nil, err
	}
	n, _ := A.Dims()
	M := mat.DenseCopyOf(A)
	for p := range n {
		M.Set(p, p, M.At(p, p)-1)
		M.Set(n-1, p, 1)
	}
	e := mat.NewVecDense(n, nil)
	e.SetVec(n-1, 1)
	var x mat.VecDense
	if err := x.SolveVec(M, e); err != nil {
		return nil, fmt.Errorf("%w: solving for the Perron vector: %v", ErrNumerical, err)
	}
	q := make([]float64, n)
	sum := mat.Sum(&x)
	for p := range q {
		q[p] = x.AtVec(p) / sum
		if !(q[p] > 0) {
			return nil, fmt.Errorf("%w: Perron vector entry q[%d] = %g is not positive; A is too ill-conditioned",
				ErrNumerical, p, q[p])
		}
	}
	return q, nil
}

// SecondEigenvalueModulus returns |λ₂|, the second-largest modulus among the
// eigenvalues of the square matrix A (counted with multiplicity; 0 for a 1×1
// matrix). For a primitive stochastic A the largest is λ₁ = 1, and |λ₂| sets
// how fast the agents reach agreement: disagreement shrinks like |λ₂|^i.
// Exactly symmetric matrices use the symmetric eigensolver.
func SecondEigenvalueModulus(A mat.Matrix) (float64, error) {
	moduli, err := eigenModuli(A)
	if err != nil || len(moduli) < 2 {
		return 0, err
	}
	return moduli[1], nil
}

// MixingRate returns ρ(A − q1ᵀ), the spectral radius of A with its Perron
// component removed, where q is the Perron vector of A (from Perron). It is
// the rate at which iterates approach the q-weighted centroid, and is below 1
// exactly when A is primitive. For a symmetric doubly-stochastic A it equals
// |λ₂|. q must have one entry per row of A.
func MixingRate(A mat.Matrix, q []float64) (float64, error) {
	n, err := order(A)
	if err != nil {
		return 0, err
	}
	if len(q) != n {
		panic(fmt.Sprintf("topology: MixingRate: %d×%d matrix with a Perron vector of length %d", n, n, len(q)))
	}
	B := mat.DenseCopyOf(A)
	for m := range n {
		for p := range n {
			B.Set(m, p, B.At(m, p)-q[m])
		}
	}
	moduli, err := eigenModuli(B)
	if err != nil {
		return 0, err
	}
	return moduli[0], nil
}

// eigenModuli returns the moduli of the eigenvalues of the square matrix A in
// descending order.
func eigenModuli(A mat.Matrix) ([]float64, error) {
	n, err := order(A)
	if err != nil {
		return nil, err
	}
	for m := range n {
		for p := range n {
			if v := A.At(m, p); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%w: entry [%d][%d] = %g is not finite", ErrNotStochastic, m, p, v)
			}
		}
	}
	var moduli []float64
	if S, ok := exactlySymmetric(A); ok {
		var eig mat.EigenSym
		if !eig.Factorize(S, false) {
			return nil, fmt.Errorf("%w: symmetric eigendecomposition did not converge", ErrNumerical)
		}
		for _, v := range eig.Values(nil) {
			moduli = append(moduli, math.Abs(v))
		}
	} else {
		var eig mat.Eigen
		if !eig.Factorize(A, mat.EigenNone) {
			return nil, fmt.Errorf("%w: eigendecomposition did not converge", ErrNumerical)
		}
		for _, v := range eig.Values(nil) {
			moduli = append(moduli, cmplx.Abs(v))
		}
	}
	slices.Sort(moduli)
	slices.Reverse(moduli)
	return moduli, nil
}

// exactlySymmetric returns A as a *mat.SymDense when a_mp == a_pm for all m, p.
func exactlySymmetric(A mat.Matrix) (*mat.SymDense, bool) {
	n, _ := A.Dims()
	S := mat.NewSymDense(n, nil)
	for m := range n {
		for p := m; p < n; p++ {
			if A.At(m, p) != A.At(p, m) {
				return nil, false
			}
			S.SetSym(m, p, A.At(m, p))
		}
	}
	return S, true
}
