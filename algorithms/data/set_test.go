package data

import (
	"math/rand/v2"
	"testing"
)

// The dense and sparse layouts of the same matrix must give the same products.
func TestDenseAndSparseRowsAgree(t *testing.T) {
	dense := &Set{Dim: 3, X: []float64{1, 0, 2, 0, -3, 0}, Y: []float64{1, -1}}
	sparse := &Set{Dim: 3, RowPtr: []int{0, 2, 3}, Col: []int32{0, 2, 1}, Val: []float64{1, 2, -3}, Y: []float64{1, -1}}
	if dense.Sparse() || !sparse.Sparse() {
		t.Fatal("Sparse() misreports the layout")
	}
	w := []float64{0.5, 2, -1}
	for n := 0; n < 2; n++ {
		if a, b := dense.Dot(n, w), sparse.Dot(n, w); a != b {
			t.Errorf("row %d: dense dot %v, sparse dot %v", n, a, b)
		}
		d, s := make([]float64, 3), make([]float64, 3)
		dense.AddScaledRow(d, n, 1.5)
		sparse.AddScaledRow(s, n, 1.5)
		for j := range d {
			if d[j] != s[j] {
				t.Errorf("row %d: AddScaledRow differs at %d: %v vs %v", n, j, d, s)
			}
		}
		dense.DenseRow(d, n)
		s = []float64{7, 7, 7} // DenseRow overwrites every feature, zeros too
		sparse.DenseRow(s, n)
		for j := range d {
			if d[j] != s[j] || d[j] != dense.Row(n)[j] {
				t.Errorf("row %d: DenseRow %v (dense), %v (sparse), want %v", n, d, s, dense.Row(n))
			}
		}
	}
	if got := dense.Dot(0, w); got != 0.5-2 {
		t.Errorf("x_0ᵀw = %v, want %v", got, 0.5-2)
	}
}

// decode, eight codes at a time, is the table lookup of every code, for
// every length around the words' multiples and a row of 784 pixels.
func TestDecodeIsTheTableLookup(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 8))
	var values [256]float64
	for b := range values {
		values[b] = r.NormFloat64()
	}
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 784} {
		codes := make([]byte, n)
		for i := range codes {
			codes[i] = byte(r.IntN(256))
		}
		dst := make([]float64, n+1)
		dst[n] = 42
		decode(dst[:n], codes, &values)
		for j, b := range codes {
			if dst[j] != values[b] {
				t.Fatalf("n=%d, code %d: %v, want %v", n, j, dst[j], values[b])
			}
		}
		if dst[n] != 42 {
			t.Fatalf("n=%d: wrote past the row", n)
		}
	}
}
