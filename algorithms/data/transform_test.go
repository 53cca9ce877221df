package data

import (
	"bytes"
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"maple/algorithms/data/scatter"
)

// IDXTransformed gives every sample its image's coefficients (Apply on the
// scaled pixels) and label, the same bytes whatever GOMAXPROCS; it refuses
// an array that does not hold images, and stops once its context is done.
func TestIDXTransformed(t *testing.T) {
	const n, h, w = 70, 10, 9
	pixels := make([]byte, n*h*w)
	for i := range pixels {
		pixels[i] = byte(i * 37 % 251)
	}
	images, err := ReadIDX(bytes.NewReader(idxBytes([]int{n, h, w}, pixels)), "images")
	if err != nil {
		t.Fatal(err)
	}
	cfg := scatter.Config{J: 2, L: 4, Order: 2, Groups: 5}
	tr, err := NewScatter(images, "images", cfg)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]float64, n)
	for i := range y {
		y[i] = float64(i % 10)
	}
	idx := []int{5, 0, 69, 33, 33, 12, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 1, 2}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first *Set
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		s, err := IDXTransformed(context.Background(), images, y, idx, ScaleUnit, tr)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = s
			continue
		}
		if !slices.Equal(s.X, first.X) || !slices.Equal(s.Y, first.Y) {
			t.Fatalf("GOMAXPROCS %d: a different set", procs)
		}
	}
	if first.Dim != tr.Features() || first.Len() != len(idx) {
		t.Fatalf("dim %d, %d samples; want %d and %d", first.Dim, first.Len(), tr.Features(), len(idx))
	}
	img, want := make([]float64, h*w), make([]float64, tr.Features())
	for i, k := range idx {
		for j := range img {
			img[j] = float64(pixels[k*h*w+j]) / 255
		}
		if err := tr.Apply(want, img, tr.NewWorkspace()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(first.Row(i), want) || first.Y[i] != y[k] {
			t.Fatalf("sample %d (image %d): not its image's coefficients and label", i, k)
		}
		if math.IsNaN(want[0]) {
			t.Fatal("NaN coefficient")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := IDXTransformed(ctx, images, y, idx, ScaleUnit, tr); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled context: %v", err)
	}
	flat, err := ReadIDX(bytes.NewReader(idxBytes([]int{n, h * w}, pixels)), "flat")
	if err != nil {
		t.Fatal(err)
	}
	var fe *IDXFileError
	if _, err := NewScatter(flat, "flat", cfg); !errors.As(err, &fe) || !fe.Images {
		t.Errorf("a two-dimensional array: %v", err)
	}
}
