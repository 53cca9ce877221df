package data

import (
	"bytes"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func readGolden(t *testing.T, opt LIBSVMOptions) *Set {
	t.Helper()
	f, err := os.Open("testdata/small.svm")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ReadLIBSVM(f, "small.svm", opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := wellFormed(s, true); err != nil {
		t.Fatal(err)
	}
	return s
}

// dense expands a sparse set into a row-major matrix.
func dense(s *Set) []float64 {
	x := make([]float64, s.Len()*s.Dim)
	for n := 0; n < s.Len(); n++ {
		s.AddScaledRow(x[n*s.Dim:(n+1)*s.Dim], n, 1)
	}
	return x
}

// testdata/small.svm exercises comments, a blank line, a label-only row, a
// tab, a CRLF line ending and exponent notation.
func TestReadLIBSVMGolden(t *testing.T) {
	s := readGolden(t, LIBSVMOptions{})
	want := &Set{
		Dim:    10,
		RowPtr: []int{0, 3, 4, 4, 6},
		Col:    []int32{0, 2, 9, 1, 0, 3},
		Val:    []float64{0.5, -2, 10, 1.25, 1, 0.3},
		Y:      []float64{1, -1, -1, 1},
	}
	if !sparseEqual(s, want) {
		t.Fatalf("parsed %+v, want %+v", s, want)
	}
	x := dense(s)
	for _, e := range []struct {
		n, j int
		v    float64
	}{{0, 0, 0.5}, {0, 1, 0}, {0, 9, 10}, {1, 1, 1.25}, {2, 5, 0}, {3, 3, 0.3}} {
		if got := x[e.n*s.Dim+e.j]; got != e.v {
			t.Errorf("x[%d][%d] = %v, want %v", e.n, e.j, got, e.v)
		}
	}
	if wide := readGolden(t, LIBSVMOptions{Dim: 12}); wide.Dim != 12 || !slices.Equal(wide.Col, want.Col) {
		t.Errorf("with dim 12: Dim %d, columns %v", wide.Dim, wide.Col)
	}
}

// hashSlot must stay the SplitMix64 finalizer forever, or hashed datasets would
// silently change between versions: its value at 0 modulo 2⁶² is the
// generator's published first output from seed 0, 0xe220a8397b1dcdaf, with the
// top two bits cleared; the small slots were cross-checked with an independent
// Python implementation.
func TestHashSlotIsPinned(t *testing.T) {
	if got := hashSlot(0, 1<<62); got != 0x2220a8397b1dcdaf {
		t.Errorf("hashSlot(0, 2⁶²) = %#x, want 0x2220a8397b1dcdaf", got)
	}
	var slots []int
	for i := 1; i <= 10; i++ {
		slots = append(slots, hashSlot(i, 4))
	}
	if want := []int{1, 2, 1, 2, 2, 0, 3, 2, 0, 2}; !slices.Equal(slots, want) {
		t.Errorf("slots of 1..10 mod 4: %v, want %v", slots, want)
	}
	if got := hashSlot(12345, 1024); got != 416 {
		t.Errorf("hashSlot(12345, 1024) = %d, want 416", got)
	}
}

// Folding into 4 slots keeps every row's value sum (collisions add) and the
// row structure, gives sorted unique columns, and is the same on every read.
func TestReadLIBSVMHashing(t *testing.T) {
	plain := readGolden(t, LIBSVMOptions{})
	hashed := readGolden(t, LIBSVMOptions{HashDim: 4})
	if again := readGolden(t, LIBSVMOptions{HashDim: 4}); !sparseEqual(hashed, again) {
		t.Fatal("hashing is not deterministic")
	}
	if hashed.Dim != 4 || !slices.Equal(hashed.Y, plain.Y) {
		t.Fatalf("hashed Dim %d, labels %v", hashed.Dim, hashed.Y)
	}
	for n := 0; n < plain.Len(); n++ {
		var a, b float64
		for _, v := range plain.Val[plain.RowPtr[n]:plain.RowPtr[n+1]] {
			a += v
		}
		for _, v := range hashed.Val[hashed.RowPtr[n]:hashed.RowPtr[n+1]] {
			b += v
		}
		if a != b { // small integers and halves: exact
			t.Errorf("row %d: value sum %v after hashing, %v before", n, b, a)
		}
	}
	// Row 0 has indices 1, 3 and 10, which fall in slots 1, 1 and 2.
	if got := hashed.Col[:hashed.RowPtr[1]]; !slices.Equal(got, []int32{1, 2}) || hashed.Val[0] != 0.5-2 {
		t.Errorf("row 0 hashed to columns %v values %v, want [1 2] [-1.5 10]", got, hashed.Val[:hashed.RowPtr[1]])
	}
}

func TestReadLIBSVMErrors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		opt  LIBSVMOptions
		want string
	}{
		{"1 1:1\n2 1:1\n", LIBSVMOptions{}, `t.svm:2: expected label +1, -1, 1 or 0, got "2"`},
		{"1:1 2:2\n", LIBSVMOptions{}, `t.svm:1: expected label +1, -1, 1 or 0, got "1:1"`},
		{"1 12:\n", LIBSVMOptions{}, `t.svm:1: expected index:value, got "12:"`},
		{"1 :3\n", LIBSVMOptions{}, `t.svm:1: expected index:value, got ":3"`},
		{"\n# c\n-1 12\n", LIBSVMOptions{}, `t.svm:3: expected index:value, got "12"`},
		{"1 a:1\n", LIBSVMOptions{}, `t.svm:1: expected index:value with an integer index, got "a:1"`},
		{"1 qid:3 1:1\n", LIBSVMOptions{}, `t.svm:1: expected index:value with an integer index, got "qid:3"`},
		{"1 0:1\n", LIBSVMOptions{}, `t.svm:1: expected an index ≥ 1 (indices are 1-based), got "0:1"`},
		{"1 -4:1\n", LIBSVMOptions{}, `t.svm:1: expected an index ≥ 1 (indices are 1-based), got "-4:1"`},
		{"1 2147483648:1\n", LIBSVMOptions{}, `t.svm:1: expected an index ≤ 2147483647, got "2147483648:1"`},
		{"1 99999999999999999999:1\n", LIBSVMOptions{}, `t.svm:1: expected an index ≤ 2147483647, got "99999999999999999999:1"`},
		{"1 11:1\n", LIBSVMOptions{Dim: 10}, `t.svm:1: expected an index ≤ dim 10, got "11:1"`},
		{"1 3:x\n", LIBSVMOptions{}, `t.svm:1: expected index:value with a numeric value, got "3:x"`},
		{"1 3:1:2\n", LIBSVMOptions{}, `t.svm:1: expected index:value with a numeric value, got "3:1:2"`},
		{"1 3:NaN\n", LIBSVMOptions{}, `t.svm:1: expected a finite value, got "3:NaN"`},
		{"1 3:-inf\n", LIBSVMOptions{}, `t.svm:1: expected a finite value, got "3:-inf"`},
		{"1 3:1e400\n", LIBSVMOptions{}, `t.svm:1: expected a finite value, got "3:1e400"`},
		{"1 3:1 2:1\n", LIBSVMOptions{}, `t.svm:1: expected indices in strictly increasing order, got 2 after 3`},
		{"1 3:1 3:1\n", LIBSVMOptions{HashDim: 8}, `t.svm:1: expected indices in strictly increasing order, got 3 after 3`},
		{"1 1:1\n1 " + strings.Repeat("x", 30) + "\n", LIBSVMOptions{MaxLineBytes: 16}, `t.svm:2: expected a line of at most 16 bytes, got a longer one`},
		{"1 1:" + strings.Repeat("9", 60) + "x\n", LIBSVMOptions{}, `t.svm:1: expected index:value with a numeric value, got "1:` + strings.Repeat("9", 38) + `…"`},
		{"", LIBSVMOptions{}, `t.svm: expected at least one sample, got none`},
		{"# only a comment\n\n", LIBSVMOptions{}, `t.svm: expected at least one sample, got none`},
		{"1\n-1\n", LIBSVMOptions{}, `t.svm: expected at least one feature (or a dim option), got only empty rows`},
		{"1 1:1\n", LIBSVMOptions{Dim: -1}, `t.svm: dim: must lie in [0, 2147483647], got -1`},
		{"1 1:1\n", LIBSVMOptions{HashDim: 1 << 31}, `t.svm: hash_dim: must lie in [0, 2147483647], got 2147483648`},
		{"1 1:1\n", LIBSVMOptions{MaxLineBytes: -1}, `t.svm: max_line_bytes: must be non-negative, got -1`},
	} {
		s, err := ReadLIBSVM(strings.NewReader(tc.in), "t.svm", tc.opt)
		if err == nil || err.Error() != tc.want || s != nil {
			t.Errorf("%q: got (%v, %v), want error %s", tc.in, s != nil, err, tc.want)
		}
	}
}

func TestReadLIBSVMReadError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("1 1:1\n"), iotest.ErrReader(errors.New("disk on fire")))
	if _, err := ReadLIBSVM(r, "t.svm", LIBSVMOptions{}); err == nil || err.Error() != "t.svm:2: disk on fire" {
		t.Errorf("got %v, want t.svm:2: disk on fire", err)
	}
}

// Labels-only rows with a dim option are valid (all-zero feature vectors).
func TestReadLIBSVMEmptyRowsWithDim(t *testing.T) {
	s, err := ReadLIBSVM(strings.NewReader("1\n0\n"), "t.svm", LIBSVMOptions{Dim: 3})
	if err != nil || s.Dim != 3 || !slices.Equal(s.Y, []float64{1, -1}) || !slices.Equal(s.RowPtr, []int{0, 0, 0}) {
		t.Fatalf("got %+v, %v", s, err)
	}
}

// FuzzReadLIBSVM checks that no input makes the reader panic and that every
// accepted input gives a well-formed set: consistent CSR, increasing columns
// below Dim, finite values, ±1 labels, and Dim equal to the option that sets it.
func FuzzReadLIBSVM(f *testing.F) {
	golden, err := os.ReadFile("testdata/small.svm")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden, uint16(0), uint16(0))
	f.Add(golden, uint16(0), uint16(3))
	f.Add([]byte("1 1:1 3:2\n-1 2:0.5 # c\n"), uint16(4), uint16(0))
	f.Add([]byte("0 5:1e-300 7:-0\n+1 1:0x1p-2\n"), uint16(0), uint16(2))
	f.Add([]byte("1 3:1 2:1\n"), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, in []byte, dim, hash uint16) {
		opt := LIBSVMOptions{Dim: int(dim), HashDim: int(hash), MaxLineBytes: 1 << 12}
		s, err := ReadLIBSVM(bytes.NewReader(in), "fuzz", opt)
		if err != nil {
			if s != nil || !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error %q (set returned: %v)", err, s != nil)
			}
			return
		}
		if err := wellFormed(s, true); err != nil {
			t.Fatal(err)
		}
		switch {
		case hash > 0 && s.Dim != int(hash), hash == 0 && dim > 0 && s.Dim != int(dim):
			t.Fatalf("Dim %d with options %+v", s.Dim, opt)
		}
	})
}
