// Package data holds the local datasets of agents and the generators and readers
// that produce them.
//
// A Set is one agent's N samples (x_n, y_n) with x_n ∈ ℝ^Dim. Rows are stored
// either densely (row-major) or sparsely (compressed sparse rows), so that the
// same loss code serves the two-dimensional regression experiments and
// high-dimensional, hashed click-through data.
package data

// Set is one agent's local dataset. Exactly one of X (dense) or the sparse
// triple (RowPtr, Col, Val) is used. Y holds regression targets or ±1 labels.
type Set struct {
	// Dim is the feature dimension M.
	Dim int
	// X is the dense feature matrix, row-major, len(X) == Len()*Dim. Nil for sparse sets.
	X []float64
	// RowPtr, Col and Val are the compressed sparse rows of a sparse set:
	// row n has entries Val[RowPtr[n]:RowPtr[n+1]] at columns Col[RowPtr[n]:RowPtr[n+1]].
	RowPtr []int
	Col    []int32
	Val    []float64
	// Y holds one target or label per sample.
	Y []float64
}

// Len returns the number of samples.
func (s *Set) Len() int { return len(s.Y) }

// Sparse reports whether the rows are stored in compressed sparse form.
func (s *Set) Sparse() bool { return s.X == nil && s.RowPtr != nil }

// Row returns the dense row n. It must only be called on dense sets.
func (s *Set) Row(n int) []float64 { return s.X[n*s.Dim : (n+1)*s.Dim] }

// Dot returns x_nᵀw.
func (s *Set) Dot(n int, w []float64) float64 {
	var z float64
	if s.X != nil {
		for j, x := range s.X[n*s.Dim : (n+1)*s.Dim] {
			z += x * w[j]
		}
		return z
	}
	lo, hi := s.RowPtr[n], s.RowPtr[n+1]
	for k, c := range s.Col[lo:hi] {
		z += s.Val[lo+k] * w[c]
	}
	return z
}

// AddScaledRow adds a·x_n to dst.
func (s *Set) AddScaledRow(dst []float64, n int, a float64) {
	if s.X != nil {
		for j, x := range s.X[n*s.Dim : (n+1)*s.Dim] {
			dst[j] += a * x
		}
		return
	}
	lo, hi := s.RowPtr[n], s.RowPtr[n+1]
	for k, c := range s.Col[lo:hi] {
		dst[c] += a * s.Val[lo+k]
	}
}
