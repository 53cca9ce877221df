package topology

import (
	"errors"

	"gonum.org/v1/gonum/mat"
)

// Combination is a validated combination matrix with what the agents of a
// network need from it, worked out once: a decentralized network and graph
// federated learning's server graph both build theirs from it.
type Combination struct {
	// A is a copy of the matrix: A.At(m, p) = a_mp, the weight receiver p
	// gives sender m.
	A *mat.Dense
	// Perron is the Perron vector q of A (Aq = q, q > 0, 1ᵀq = 1).
	Perron []float64
	// Senders[p] lists the m ≠ p with a_mp > 0 and Receivers[m] the p ≠ m
	// with a_mp > 0, ascending (Support).
	Senders, Receivers [][]int
	// Symmetric reports whether A equals its transpose.
	Symmetric bool
}

// NewCombination checks that A is present, left-stochastic within
// DefaultTol and primitive (the errors of Perron) and returns its
// Combination.
func NewCombination(A mat.Matrix) (*Combination, error) {
	if A == nil {
		return nil, errors.New("no combination matrix")
	}
	if d, ok := A.(*mat.Dense); ok && d == nil {
		return nil, errors.New("no combination matrix")
	}
	q, err := Perron(A)
	if err != nil {
		return nil, err
	}
	c := &Combination{A: mat.DenseCopyOf(A), Perron: q}
	c.Senders, c.Receivers = Support(A)
	c.Symmetric = mat.Equal(c.A, c.A.T())
	return c, nil
}
