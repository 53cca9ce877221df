package data

import (
	"fmt"
	"math"
)

// wellFormed checks the structural invariants every Set must satisfy: Y holds
// ±1 labels (classification sets only: pass labels=true), exactly one layout
// is used, and a sparse layout is CSR with RowPtr[0] = 0, non-decreasing row
// pointers ending at len(Col) = len(Val), and strictly increasing columns in
// [0, Dim) within each row. All values must be finite.
func wellFormed(s *Set, labels bool) error {
	if s.Dim < 1 {
		return fmt.Errorf("dim %d", s.Dim)
	}
	for n, y := range s.Y {
		if labels && y != 1 && y != -1 {
			return fmt.Errorf("label %d is %v, not ±1", n, y)
		}
	}
	if !s.Sparse() {
		if s.RowPtr != nil || len(s.X) != s.Len()*s.Dim {
			return fmt.Errorf("dense set with %d values for %d×%d (RowPtr %v)", len(s.X), s.Len(), s.Dim, s.RowPtr != nil)
		}
		return finite(s.X)
	}
	if len(s.RowPtr) != s.Len()+1 {
		return fmt.Errorf("%d row pointers for %d rows", len(s.RowPtr), s.Len())
	}
	if s.RowPtr[0] != 0 || s.RowPtr[s.Len()] != len(s.Col) || len(s.Col) != len(s.Val) {
		return fmt.Errorf("row pointers run from %d to %d over %d columns and %d values",
			s.RowPtr[0], s.RowPtr[s.Len()], len(s.Col), len(s.Val))
	}
	for n := 0; n < s.Len(); n++ {
		lo, hi := s.RowPtr[n], s.RowPtr[n+1]
		if hi < lo {
			return fmt.Errorf("row %d: pointers decrease (%d, %d)", n, lo, hi)
		}
		for i := lo; i < hi; i++ {
			c := s.Col[i]
			if c < 0 || int(c) >= s.Dim || (i > lo && c <= s.Col[i-1]) {
				return fmt.Errorf("row %d: column %d out of range [0, %d) or not increasing: %v", n, c, s.Dim, s.Col[lo:hi])
			}
		}
	}
	return finite(s.Val)
}

// finite reports the first NaN or infinite value.
func finite(v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("value %d is %v", i, x)
		}
	}
	return nil
}
