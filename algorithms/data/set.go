// Package data holds the local datasets of agents and the generators and readers
// that produce them.
//
// A Set is one agent's N samples (x_n, y_n) with x_n ∈ ℝ^Dim. Rows are stored
// densely (row-major float64), sparsely (compressed sparse rows) or coded
// (one byte per feature, as image files hold pixels), so that the same loss
// code serves the two-dimensional regression experiments, high-dimensional
// hashed click-through data and image benchmarks whose training set would
// take eight times its file's size as float64.
package data

// Set is one agent's local dataset. Exactly one of X (dense), the sparse
// triple (RowPtr, Col, Val) or Coded is used. Y holds regression targets,
// ±1 labels or classes.
type Set struct {
	// Dim is the feature dimension M.
	Dim int
	// X is the dense feature matrix, row-major, len(X) == Len()*Dim. Nil for
	// sparse and coded sets.
	X []float64
	// RowPtr, Col and Val are the compressed sparse rows of a sparse set:
	// row n has entries Val[RowPtr[n]:RowPtr[n+1]] at columns Col[RowPtr[n]:RowPtr[n+1]].
	RowPtr []int
	Col    []int32
	Val    []float64
	// Coded holds the features of a coded set.
	Coded *CodedRows
	// Y holds one target or label per sample.
	Y []float64
}

// CodedRows are the features of a coded set: one byte per feature and a
// table of the 256 values the bytes stand for (b/255 for pixels scaled to
// [0, 1]). Feature j of sample n is Values[Codes[Rows[n]·Dim + j]]: the
// samples are rows of a byte matrix that many sets may share — the agents'
// sets of an IDX file share the file's bytes — and that is never modified.
type CodedRows struct {
	Codes  []byte
	Rows   []int
	Values *[256]float64
}

// Len returns the number of samples.
func (s *Set) Len() int { return len(s.Y) }

// Sparse reports whether the rows are stored in compressed sparse form.
func (s *Set) Sparse() bool { return s.X == nil && s.RowPtr != nil }

// Row returns the dense row n. It must only be called on dense sets (X not
// nil); DenseRow reads a row of any set.
func (s *Set) Row(n int) []float64 { return s.X[n*s.Dim : (n+1)*s.Dim] }

// codes returns the bytes of row n of a coded set.
func (s *Set) codes(n int) []byte {
	r := s.Coded.Rows[n] * s.Dim
	return s.Coded.Codes[r : r+s.Dim]
}

// DenseRow sets dst (of length Dim) to x_n, whatever the layout.
func (s *Set) DenseRow(dst []float64, n int) {
	switch {
	case s.X != nil:
		copy(dst, s.Row(n))
	case s.Coded != nil:
		decode(dst, s.codes(n), s.Coded.Values)
	default:
		clear(dst)
		for p := s.RowPtr[n]; p < s.RowPtr[n+1]; p++ {
			dst[s.Col[p]] = s.Val[p]
		}
	}
}

// decode sets dst[j] = values[codes[j]]. It reads the codes eight at a time
// as one word: a load per code and the table's load and the store per
// value were the cost of decoding, half the time of the loop with a load
// per code (the evaluation of a model on an IDX test set decodes every test
// image every time).
func decode(dst []float64, codes []byte, values *[256]float64) {
	dst = dst[:len(codes)]
	j := 0
	for ; j+8 <= len(codes); j += 8 {
		c, d := codes[j:j+8:j+8], dst[j:j+8:j+8]
		u := uint64(c[0]) | uint64(c[1])<<8 | uint64(c[2])<<16 | uint64(c[3])<<24 |
			uint64(c[4])<<32 | uint64(c[5])<<40 | uint64(c[6])<<48 | uint64(c[7])<<56
		d[0] = values[byte(u)]
		d[1] = values[byte(u>>8)]
		d[2] = values[byte(u>>16)]
		d[3] = values[byte(u>>24)]
		d[4] = values[byte(u>>32)]
		d[5] = values[byte(u>>40)]
		d[6] = values[byte(u>>48)]
		d[7] = values[byte(u>>56)]
	}
	for ; j < len(codes); j++ {
		dst[j] = values[codes[j]]
	}
}

// Dot returns x_nᵀw, summed from the first feature to the last.
func (s *Set) Dot(n int, w []float64) float64 {
	if s.X != nil {
		return dot(s.X[n*s.Dim:(n+1)*s.Dim], w)
	}
	return s.dotRow(n, w)
}

// dot returns xᵀw for a dense row x, summed from the first feature to the
// last.
func dot(x, w []float64) float64 {
	var z float64
	for j, v := range x {
		z += v * w[j]
	}
	return z
}

// dotRow is Dot for coded and sparse sets.
func (s *Set) dotRow(n int, w []float64) float64 {
	var z float64
	if s.Coded != nil {
		values := s.Coded.Values
		for j, b := range s.codes(n) {
			z += values[b] * w[j]
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
		addScaled(dst, a, s.X[n*s.Dim:(n+1)*s.Dim])
		return
	}
	s.addScaledRow(dst, n, a)
}

// addScaled adds a·x to dst for a dense row x.
func addScaled(dst []float64, a float64, x []float64) {
	for j, v := range x {
		dst[j] += a * v
	}
}

// addScaledRow is AddScaledRow for coded and sparse sets.
func (s *Set) addScaledRow(dst []float64, n int, a float64) {
	if s.Coded != nil {
		values := s.Coded.Values
		for j, b := range s.codes(n) {
			dst[j] += a * values[b]
		}
		return
	}
	lo, hi := s.RowPtr[n], s.RowPtr[n+1]
	for k, c := range s.Col[lo:hi] {
		dst[c] += a * s.Val[lo+k]
	}
}
