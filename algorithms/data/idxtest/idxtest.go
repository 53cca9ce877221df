// Package idxtest writes the small IDX data sets that tests of the IDX
// readers and of scenarios with `data.kind: idx` feed them, so that no test
// needs the Fashion-MNIST package.
package idxtest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"testing"
)

// UnsignedBytes is the IDX type code of unsigned one-byte elements (pixels,
// labels).
const UnsignedBytes = 0x08

// Write writes a gzip-compressed IDX file at path whose one-byte elements
// have the type code typ, with the given dimensions and values.
func Write(t testing.TB, path string, typ byte, dims []int, values []byte) {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte{0, 0, typ, byte(len(dims))})
	for _, d := range dims {
		binary.Write(z, binary.BigEndian, uint32(d))
	}
	z.Write(values)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Images returns n 3×3 images and their labels: image i has class i mod 3,
// and class c lights row c (values 200–202) above a dim background.
func Images(n int) (pixels, labels []byte) { return ImagesOf(n, 3, 3) }

// ImagesOf returns n images of rows×cols pixels (rows ≥ 3) and their
// labels: image i has class i mod 3, and class c lights row c (values 200,
// 201, …) above a dim background.
func ImagesOf(n, rows, cols int) (pixels, labels []byte) {
	for i := range n {
		c := i % 3
		labels = append(labels, byte(c))
		for r := range rows {
			for col := range cols {
				v := byte((i*7 + r*cols + col) % 40)
				if r == c {
					v = 200 + byte(col)
				}
				pixels = append(pixels, v)
			}
		}
	}
	return pixels, labels
}
