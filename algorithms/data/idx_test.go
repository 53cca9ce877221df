package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// idxBytes encodes an IDX array of unsigned bytes with the given dimensions.
func idxBytes(dims []int, values []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(values)
	return b.Bytes()
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := z.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tinyImages returns 3 images of 2×2 pixels and their labels.
func tinyImages() (images, labels []byte) {
	pixels := []byte{0, 255, 51, 102, 1, 2, 3, 4, 255, 255, 0, 0}
	return idxBytes([]int{3, 2, 2}, pixels), idxBytes([]int{3}, []byte{7, 0, 9})
}

// An IDX pair written by the test reads back, plain or gzip-compressed, as
// the samples it encodes: pixels scaled by 1/255, labels as classes.
func TestIDXRoundTrip(t *testing.T) {
	img, lab := tinyImages()
	for _, compress := range []bool{false, true} {
		ib, lb := img, lab
		if compress {
			ib, lb = gzipped(t, img), gzipped(t, lab)
		}
		images, err := ReadIDX(bytes.NewReader(ib), "images")
		if err != nil {
			t.Fatal(err)
		}
		labels, err := ReadIDX(bytes.NewReader(lb), "labels")
		if err != nil {
			t.Fatal(err)
		}
		s, err := IDXSet(images, "images", labels, "labels", 10, ScaleUnit)
		if err != nil {
			t.Fatal(err)
		}
		if s.Dim != 4 || s.Len() != 3 {
			t.Fatalf("gzip=%v: %d samples of dimension %d, want 3 of 4", compress, s.Len(), s.Dim)
		}
		want := []float64{0, 1, 0.2, 0.4, 1.0 / 255, 2.0 / 255, 3.0 / 255, 4.0 / 255, 1, 1, 0, 0}
		for i, x := range s.X {
			if x != want[i] {
				t.Errorf("gzip=%v: feature %d = %v, want %v", compress, i, x, want[i])
			}
		}
		if s.Y[0] != 7 || s.Y[1] != 0 || s.Y[2] != 9 {
			t.Errorf("gzip=%v: labels %v, want [7 0 9]", compress, s.Y)
		}
		raw, err := IDXSet(images, "images", labels, "labels", 10, ScaleNone)
		if err != nil || raw.X[1] != 255 {
			t.Errorf("gzip=%v: unscaled pixel = %v (%v), want 255", compress, raw.X[1], err)
		}
	}
}

// ReadIDXHeader gives the shape of a file, plain or gzip-compressed,
// without reading its elements: a file cut right after its header, which
// ReadIDX refuses, still has its shape read.
func TestReadIDXHeader(t *testing.T) {
	img, _ := tinyImages()
	for name, b := range map[string][]byte{"plain": img, "gzip": gzipped(t, img), "cut": img[:16]} {
		a, err := ReadIDXHeader(bytes.NewReader(b), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fmt.Sprint(a.Dims) != "[3 2 2]" || a.Features() != 4 || a.Len() != 0 || a.Header != 16 {
			t.Errorf("%s: dims %v, %d features, %d elements, header %d; want [3 2 2], 4, 0, 16", name, a.Dims, a.Features(), a.Len(), a.Header)
		}
	}
	if _, err := ReadIDX(bytes.NewReader(img[:16]), "cut"); err == nil {
		t.Error("ReadIDX accepts a file without its elements")
	}
	if _, err := ReadIDXHeader(bytes.NewReader([]byte{1, 2, 3, 4}), "bad"); err == nil || !strings.Contains(err.Error(), "magic") {
		t.Errorf("ReadIDXHeader of a non-IDX stream: %v, want the magic-number error", err)
	}
}

// Every other element type decodes big-endian.
func TestIDXElementTypes(t *testing.T) {
	for _, c := range []struct {
		typ  byte
		data []byte
		want float64
	}{
		{0x09, []byte{0xff}, -1},
		{0x0B, []byte{0xff, 0xfe}, -2},
		{0x0C, []byte{0, 1, 0, 0}, 65536},
		{0x0D, binary.BigEndian.AppendUint32(nil, math.Float32bits(1.5)), 1.5},
		{0x0E, binary.BigEndian.AppendUint64(nil, math.Float64bits(-0.25)), -0.25},
	} {
		file := append([]byte{0, 0, c.typ, 1, 0, 0, 0, 1}, c.data...)
		a, err := ReadIDX(bytes.NewReader(file), "x")
		if err != nil {
			t.Fatalf("type 0x%02x: %v", c.typ, err)
		}
		if got := a.At(0); got != c.want {
			t.Errorf("type 0x%02x: %v, want %v", c.typ, got, c.want)
		}
	}
}

// Truncated, mis-sized and mislabelled files are refused, each with the byte
// offset where the problem is.
func TestIDXErrorsNameTheByteOffset(t *testing.T) {
	img, lab := tinyImages()
	for _, c := range []struct {
		name, file, want string
		data             []byte
	}{
		{"truncated data", "images", "images: truncated at byte offset 18", img[:18]},
		{"truncated header", "images", "images: truncated at byte offset 8: expected the size of dimension 1", img[:9]},
		{"trailing data", "labels", "labels: byte offset 11: expected the end of the file", append(append([]byte{}, lab...), 1)},
		{"bad magic", "images", "images: byte offset 0: expected the IDX magic number 00 00, got 1f 00", append([]byte{0x1f, 0}, img[2:]...)},
		{"bad type", "images", "images: byte offset 2: unknown IDX element type 0x07", append([]byte{0, 0, 7}, img[3:]...)},
		{"huge header", "images", "images: byte offset 8: dimensions [4294967295 4294967295] announce more than", idxBytes([]int{math.MaxUint32, math.MaxUint32}, nil)},
	} {
		_, err := ReadIDX(bytes.NewReader(c.data), c.file)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to contain %q", c.name, err, c.want)
		}
	}
	images, _ := ReadIDX(bytes.NewReader(img), "images")
	bad, _ := ReadIDX(bytes.NewReader(idxBytes([]int{3}, []byte{7, 12, 9})), "labels")
	if _, err := IDXSet(images, "images", bad, "labels", 10, ScaleUnit); err == nil ||
		!strings.Contains(err.Error(), "labels: byte offset 9: label 12 of sample 1 is not a class 0…9") {
		t.Errorf("mislabelled: err = %v", err)
	}
	short, _ := ReadIDX(bytes.NewReader(idxBytes([]int{2}, []byte{7, 1})), "labels")
	if _, err := IDXSet(images, "images", short, "labels", 10, ScaleUnit); err == nil ||
		!strings.Contains(err.Error(), "labels: 2 labels, but images holds 3 samples") {
		t.Errorf("count mismatch: err = %v", err)
	}
}

// Standardization maps every training feature to mean 0 and variance 1 and
// applies the training map, not the test set's own, to the test set.
// IDXRows deals out the same samples as IDXSubset without decoding them:
// every layout-independent view of a row — DenseRow, Dot, AddScaledRow — is
// the same bit for bit, under both scalings, and the coded sets share the
// file's bytes.
func TestIDXRowsEqualIDXSubset(t *testing.T) {
	img, lab := tinyImages()
	images, err := ReadIDX(bytes.NewReader(img), "images")
	if err != nil {
		t.Fatal(err)
	}
	labels, err := ReadIDX(bytes.NewReader(lab), "labels")
	if err != nil {
		t.Fatal(err)
	}
	y, err := IDXLabels(images, "images", labels, "labels", 10, ScaleUnit)
	if err != nil {
		t.Fatal(err)
	}
	idx := []int{2, 0, 2}
	w := []float64{0.5, -2, 1e-3, 3}
	for _, scale := range []IDXScale{ScaleUnit, ScaleNone} {
		dense, coded := IDXSubset(images, y, idx, scale), IDXRows(images, y, idx, scale)
		if coded.X != nil || coded.Coded == nil || &coded.Coded.Codes[0] != &images.raw[0] {
			t.Fatalf("scale %d: IDXRows did not return rows of the file's bytes: %+v", scale, coded)
		}
		if !slices.Equal(dense.Y, coded.Y) {
			t.Errorf("scale %d: labels %v and %v", scale, dense.Y, coded.Y)
		}
		for n := range idx {
			d, c := make([]float64, 4), make([]float64, 4)
			dense.DenseRow(d, n)
			coded.DenseRow(c, n)
			if !slices.Equal(d, dense.Row(n)) || !slices.Equal(c, d) {
				t.Errorf("scale %d, sample %d: DenseRow %v (coded), %v (dense), Row %v", scale, n, c, d, dense.Row(n))
			}
			if a, b := dense.Dot(n, w), coded.Dot(n, w); a != b {
				t.Errorf("scale %d, sample %d: Dot %v (dense), %v (coded)", scale, n, a, b)
			}
			dense.AddScaledRow(d, n, 0.3)
			coded.AddScaledRow(c, n, 0.3)
			if !slices.Equal(c, d) {
				t.Errorf("scale %d, sample %d: AddScaledRow %v (dense), %v (coded)", scale, n, d, c)
			}
		}
	}
}

// TestReadDataBeyondThePreallocation checks readData on data longer than
// what it allocates up front (as an IDX file over 256 MiB is): all of it is
// read, a truncated stream yields what there is without an error (ReadIDX
// reports the truncation with its offset), a failing reader is an error.
func TestReadDataBeyondThePreallocation(t *testing.T) {
	for _, tc := range []struct {
		in          string
		total       int64
		want        string
		wantErr     bool
		failingTail bool
	}{
		{in: "0123456789", total: 10, want: "0123456789"},
		{in: "0123456789xyz", total: 10, want: "0123456789"},
		{in: "0123456", total: 10, want: "0123456"},
		{in: "012", total: 10, want: "012"},
		{in: "0123456", total: 10, want: "0123456", wantErr: true, failingTail: true},
	} {
		var r io.Reader = strings.NewReader(tc.in)
		if tc.failingTail {
			r = io.MultiReader(r, iotest.ErrReader(errors.New("disk on fire")))
		}
		got, err := readData(r, tc.total, 4)
		if string(got) != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("readData(%q, %d, 4) = %q, %v; want %q, error %v", tc.in, tc.total, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestStandardize(t *testing.T) {
	train := &Set{Dim: 2, X: []float64{1, 5, 3, 5}, Y: []float64{0, 1}}
	test := &Set{Dim: 2, X: []float64{3, 7}, Y: []float64{1}}
	second := &Set{Dim: 2, X: []float64{5, 5}, Y: []float64{0}}
	Standardize([]*Set{train, second}, test)
	sd := math.Sqrt(8.0 / 3)
	want := []float64{-2 / sd, 0, 0, 0, 2 / sd, 0}
	for i, x := range append(train.X, second.X...) {
		if math.Abs(x-want[i]) > 1e-15 {
			t.Errorf("train feature %d = %v, want %v", i, x, want[i])
		}
	}
	if test.X[0] != 0 || test.X[1] != 2 {
		t.Errorf("test = %v, want [0 2] (the constant feature is only centred)", test.X)
	}
}

// ReadIDX never panics and never allocates beyond the input it is given.
func FuzzReadIDX(f *testing.F) {
	img, lab := tinyImages()
	f.Add(img)
	f.Add(lab)
	f.Add([]byte{0, 0, 0x0D, 1, 0, 0, 0, 1, 0x7f, 0xc0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadIDX(bytes.NewReader(b), "fuzz")
		if err == nil && a.Len()*a.Size()+a.Header != len(b) {
			t.Errorf("accepted %d bytes as a header of %d and %d elements of %d bytes", len(b), a.Header, a.Len(), a.Size())
		}
	})
}

// A problem of the pair is blamed on the file at fault: an element type that
// cannot be scaled is the images file's, a label the labels file's, and the
// error says which, so that a caller names the right field.
func TestIDXLabelsSaysWhichFileIsAtFault(t *testing.T) {
	img, lab := tinyImages()
	images, _ := ReadIDX(bytes.NewReader(img), "train-images")
	labels, _ := ReadIDX(bytes.NewReader(lab), "train-labels")
	floats := *images
	floats.Type = 0x0D // float32 pixels cannot be scaled to [0, 1]
	mislabelled, _ := ReadIDX(bytes.NewReader(idxBytes([]int{3}, []byte{7, 12, 9})), "train-labels")
	for _, c := range []struct {
		name           string
		images, labels *IDX
		inImages       bool
		want           string
	}{
		{"element type", &floats, labels, true, "train-images: scaling to [0, 1] needs unsigned-byte pixels, got element type 0x0d"},
		{"label", images, mislabelled, false, "train-labels: byte offset 9: label 12 of sample 1"},
	} {
		_, err := IDXLabels(c.images, "train-images", c.labels, "train-labels", 10, ScaleUnit)
		var fe *IDXFileError
		if !errors.As(err, &fe) || fe.Images != c.inImages || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v (%#v); want an IDXFileError with Images %v saying %q", c.name, err, fe, c.inImages, c.want)
		}
	}
}
