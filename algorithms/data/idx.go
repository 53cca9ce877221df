package data

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/klauspost/compress/gzip"
	"gonum.org/v1/gonum/floats"
)

// IDX is an array read from a file in the IDX format of LeCun's MNIST
// distribution, which Fashion-MNIST and its Debian package
// dataset-fashion-mnist use as well:
//
//	bytes 0–1  zero
//	byte  2    element type: 0x08 unsigned byte, 0x09 signed byte, 0x0B int16,
//	           0x0C int32, 0x0D float32, 0x0E float64
//	byte  3    number of dimensions D
//	then       D sizes, 32-bit big-endian
//	then       the elements, big-endian, last dimension varying fastest
//
// The elements stay in their encoded form (47 MB for the 60 000 training
// images rather than 376 MB as float64) until a Set is built from them.
type IDX struct {
	// Dims are the sizes of the dimensions, the first being the samples.
	Dims []int
	// Type is the element type code (0x08 … 0x0E).
	Type byte
	// Header is the length of the header in bytes: element i starts at byte
	// offset Header + i·Size.
	Header int
	raw    []byte
}

// idxTypes maps the IDX element type codes to their names and sizes.
var idxTypes = map[byte]struct {
	name string
	size int
}{
	0x08: {"unsigned byte", 1}, 0x09: {"signed byte", 1}, 0x0B: {"int16", 2},
	0x0C: {"int32", 4}, 0x0D: {"float32", 4}, 0x0E: {"float64", 8},
}

// maxIDXDims bounds the number of dimensions of an IDX array.
const maxIDXDims = 16

// maxIDXBytes bounds the data an IDX header may announce (8 GiB): a header
// claiming more is refused before anything is read.
const maxIDXBytes = 8 << 30

// Len returns the number of elements.
func (a *IDX) Len() int { return len(a.raw) / a.Size() }

// Size returns the size of one element in bytes.
func (a *IDX) Size() int { return idxTypes[a.Type].size }

// At returns element i as a float64.
func (a *IDX) At(i int) float64 {
	switch a.Type {
	case 0x08:
		return float64(a.raw[i])
	case 0x09:
		return float64(int8(a.raw[i]))
	case 0x0B:
		return float64(int16(binary.BigEndian.Uint16(a.raw[2*i:])))
	case 0x0C:
		return float64(int32(binary.BigEndian.Uint32(a.raw[4*i:])))
	case 0x0D:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(a.raw[4*i:])))
	}
	return math.Float64frombits(binary.BigEndian.Uint64(a.raw[8*i:]))
}

// ReadIDX reads an IDX array from r, gzip-compressed (as distributed) or
// plain: a stream starting with the gzip magic bytes 1f 8b is decompressed
// first, and byte offsets in errors count in the decompressed stream. A
// header announcing more or fewer bytes than follow, an unknown element type
// or a non-finite floating-point element is an error naming the byte offset.
func ReadIDX(r io.Reader, name string) (*IDX, error) {
	br, done, err := idxStream(r, name)
	if err != nil {
		return nil, err
	}
	defer done()
	a, total, err := readIDXHeader(br, name)
	if err != nil {
		return nil, err
	}
	t := idxTypes[a.Type]
	raw, err := readData(br, total, maxIDXPrealloc)
	if err != nil {
		return nil, fmt.Errorf("%s: byte offset %d: %v", name, a.Header+len(raw), err)
	}
	if int64(len(raw)) < total {
		return nil, fmt.Errorf("%s: truncated at byte offset %d: dimensions %v of %s elements need %d data bytes after the %d-byte header, got %d",
			name, a.Header+len(raw), a.Dims, t.name, total, a.Header, len(raw))
	}
	if _, err := br.ReadByte(); err == nil {
		return nil, fmt.Errorf("%s: byte offset %d: expected the end of the file after dimensions %v of %s elements, got more data", name, a.Header+len(raw), a.Dims, t.name)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: byte offset %d: %v", name, a.Header+len(raw), err)
	}
	a.raw = raw
	if a.Type == 0x0D || a.Type == 0x0E {
		for i := range a.Len() {
			if v := a.At(i); math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: byte offset %d: expected a finite value, got %v", name, a.Header+i*t.size, v)
			}
		}
	}
	return a, nil
}

// ReadIDXHeader reads only the header of an IDX array from r (gzip-compressed
// or plain, as ReadIDX): the returned IDX has its Dims, Type and Header but
// no elements (Len is 0). It reads a few bytes of a file of any size, so it
// suits a cheap look at a file's shape.
func ReadIDXHeader(r io.Reader, name string) (*IDX, error) {
	br, done, err := idxStream(r, name)
	if err != nil {
		return nil, err
	}
	defer done()
	a, _, err := readIDXHeader(br, name)
	return a, err
}

// idxStream returns the decompressed stream of r if it starts with the gzip
// magic bytes 1f 8b, or r itself, and the function that releases it.
func idxStream(r io.Reader, name string) (*bufio.Reader, func(), error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: gzip: %v", name, err)
		}
		return bufio.NewReader(z), func() { z.Close() }, nil
	}
	return br, func() {}, nil
}

// readIDXHeader reads and checks the header of an IDX array and returns the
// array without elements and the number of data bytes the header announces.
func readIDXHeader(br *bufio.Reader, name string) (*IDX, int64, error) {
	var head [4]byte
	if n, err := io.ReadFull(br, head[:]); err != nil {
		return nil, 0, fmt.Errorf("%s: truncated at byte offset %d: expected the 4-byte IDX header, got %d bytes", name, n, n)
	}
	t, ok := idxTypes[head[2]]
	switch {
	case head[0] != 0 || head[1] != 0:
		return nil, 0, fmt.Errorf("%s: byte offset 0: expected the IDX magic number 00 00, got %02x %02x (not an IDX file?)", name, head[0], head[1])
	case !ok:
		return nil, 0, fmt.Errorf("%s: byte offset 2: unknown IDX element type 0x%02x (expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E)", name, head[2])
	case head[3] == 0 || head[3] > maxIDXDims:
		return nil, 0, fmt.Errorf("%s: byte offset 3: expected 1 to %d dimensions, got %d", name, maxIDXDims, head[3])
	}
	a := &IDX{Type: head[2], Dims: make([]int, head[3]), Header: 4 + 4*int(head[3])}
	total := int64(t.size)
	for i := range a.Dims {
		var b [4]byte
		if _, err := io.ReadFull(br, b[:]); err != nil {
			return nil, 0, fmt.Errorf("%s: truncated at byte offset %d: expected the size of dimension %d", name, 4+4*i, i)
		}
		a.Dims[i] = int(binary.BigEndian.Uint32(b[:]))
		if a.Dims[i] > 0 && total > maxIDXBytes/int64(a.Dims[i]) {
			return nil, 0, fmt.Errorf("%s: byte offset %d: dimensions %v announce more than %d bytes of data", name, 4+4*i, a.Dims[:i+1], int64(maxIDXBytes))
		}
		total *= int64(a.Dims[i])
	}
	return a, total, nil
}

// maxIDXPrealloc is how much of the data an IDX header announces ReadIDX
// allocates before reading (256 MiB): the 47 MB of the Fashion-MNIST
// training images in one allocation, rather than the doublings of
// io.ReadAll, which copy the data and touch twice its size of fresh memory;
// and no more, so that a header announcing gigabytes before a truncated file
// costs at most this much.
const maxIDXPrealloc = 256 << 20

// readData reads the total data bytes that follow the header, or what there
// is of them, allocating at most prealloc bytes before they are read: a
// short read is no error here (the caller reports the truncation), only a
// failing reader is.
func readData(r io.Reader, total, prealloc int64) ([]byte, error) {
	raw := make([]byte, min(total, prealloc))
	populate(raw)
	n, err := io.ReadFull(r, raw)
	raw = raw[:n]
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return raw, nil
	case err != nil || int64(n) == total:
		return raw, err
	}
	rest, err := io.ReadAll(io.LimitReader(r, total-int64(n)))
	return append(raw, rest...), err
}

// IDXScale is how IDXSet maps the elements of an image array to features.
type IDXScale int

const (
	// ScaleUnit divides unsigned-byte pixels by 255, into [0, 1].
	ScaleUnit IDXScale = iota
	// ScaleNone keeps the values as they are.
	ScaleNone
)

// IDXSet returns the labelled dataset of an array of samples (first dimension
// N, the others flattened into the features, last varying fastest) and a
// one-dimensional array of N class labels, each an integer in [0, classes):
// IDXLabels and IDXSubset of every sample.
func IDXSet(images *IDX, imagesName string, labels *IDX, labelsName string, classes int, scale IDXScale) (*Set, error) {
	y, err := IDXLabels(images, imagesName, labels, labelsName, classes, scale)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(y))
	for i := range idx {
		idx[i] = i
	}
	return IDXSubset(images, y, idx, scale), nil
}

// IDXFileError is an error of IDXLabels, which checks two files together:
// Images says whether the images file is at fault (its element type, its
// dimensions) or the labels file (its shape, its count, a label). The
// message names that file; a caller that reports errors by the field naming
// a file uses Images to choose the field.
type IDXFileError struct {
	Images bool
	Err    error
}

// Error returns the message, which names the file at fault.
func (e *IDXFileError) Error() string { return e.Err.Error() }

// Unwrap returns the underlying error.
func (e *IDXFileError) Unwrap() error { return e.Err }

// IDXLabels checks that images and labels go together — as many labels as
// samples, at least one feature, unsigned bytes for ScaleUnit — and returns
// the labels. A label that is not a class 0…classes−1 is an error naming its
// byte offset in the labels file. Errors are *IDXFileError values saying
// which file is at fault.
func IDXLabels(images *IDX, imagesName string, labels *IDX, labelsName string, classes int, scale IDXScale) ([]float64, error) {
	inImages := func(format string, args ...any) error {
		return &IDXFileError{Images: true, Err: fmt.Errorf("%s: "+format, append([]any{imagesName}, args...)...)}
	}
	inLabels := func(format string, args ...any) error {
		return &IDXFileError{Err: fmt.Errorf("%s: "+format, append([]any{labelsName}, args...)...)}
	}
	switch {
	case len(labels.Dims) != 1:
		return nil, inLabels("expected a one-dimensional array of labels, got dimensions %v", labels.Dims)
	case labels.Dims[0] != images.Dims[0]:
		return nil, inLabels("%d labels, but %s holds %d samples", labels.Dims[0], imagesName, images.Dims[0])
	case scale == ScaleUnit && images.Type != 0x08:
		return nil, inImages("scaling to [0, 1] needs unsigned-byte pixels, got element type 0x%02x", images.Type)
	case images.Dims[0] == 0:
		return nil, inImages("expected at least one sample, got none")
	case images.Features() == 0:
		return nil, inImages("expected at least one feature per sample, got dimensions %v", images.Dims)
	}
	y := make([]float64, labels.Dims[0])
	for i := range y {
		v := labels.At(i)
		if v != math.Trunc(v) || v < 0 || v >= float64(classes) {
			return nil, inLabels("byte offset %d: label %v of sample %d is not a class 0…%d", labels.Header+i*labels.Size(), v, i, classes-1)
		}
		y[i] = v
	}
	return y, nil
}

// Features returns the number of features of one sample: the product of the
// dimensions after the first.
func (a *IDX) Features() int {
	m := 1
	for _, d := range a.Dims[1:] {
		m *= d
	}
	return m
}

// SharedRows reports whether IDXRows gives sets whose rows are the array's
// own bytes (unsigned-byte elements) rather than float64 copies of them.
func (a *IDX) SharedRows() bool { return a.Type == 0x08 }

// IDXSubset returns the dense set of the samples idx of images (checked by
// IDXLabels), with labels y, decoding straight from the file's bytes.
func IDXSubset(images *IDX, y []float64, idx []int, scale IDXScale) *Set {
	m := images.Features()
	s := &Set{Dim: m, X: make([]float64, len(idx)*m), Y: make([]float64, len(idx))}
	var values *[256]float64
	if images.Type == 0x08 {
		values = byteValues(scale)
	}
	for i, n := range idx {
		s.Y[i] = y[n]
		row := s.X[i*m : (i+1)*m]
		if values != nil {
			for j, b := range images.raw[n*m : (n+1)*m] {
				row[j] = values[b]
			}
			continue
		}
		for j := range row {
			row[j] = images.At(n*m + j)
		}
	}
	return s
}

// IDXRows returns the samples idx of images (checked by IDXLabels), with
// labels y, as IDXSubset does but without decoding them when the elements
// are unsigned bytes: a coded set whose rows are the file's own bytes, which
// the sets of one file share. The sets of the 60 000 Fashion-MNIST training
// images then hold 47 MB rather than 376 MB of float64, and building them
// touches no new memory: on a machine where first touches of fresh pages are
// slow, that is most of the time of reading the data. Other element types
// give IDXSubset's dense set. idx is kept as the set's row list, not copied.
func IDXRows(images *IDX, y []float64, idx []int, scale IDXScale) *Set {
	if !images.SharedRows() {
		return IDXSubset(images, y, idx, scale)
	}
	s := &Set{Dim: images.Features(), Y: make([]float64, len(idx))}
	for i, n := range idx {
		s.Y[i] = y[n]
	}
	s.Coded = &CodedRows{Codes: images.raw, Rows: idx, Values: byteValues(scale)}
	return s
}

// unitValues and plainValues are the feature values of the 256 bytes under
// ScaleUnit (b/255, rather than a division per pixel) and ScaleNone.
var unitValues, plainValues = func() (unit, plain [256]float64) {
	for b := range unit {
		unit[b], plain[b] = float64(b)/255, float64(b)
	}
	return unit, plain
}()

// byteValues returns the values of the 256 bytes under scale.
func byteValues(scale IDXScale) *[256]float64 {
	if scale == ScaleUnit {
		return &unitValues
	}
	return &plainValues
}

// Standardize shifts and scales every feature to mean 0 and standard
// deviation 1 over the samples of train (the agents' sets, together the
// training set), and applies the same affine map to the others (test sets),
// so that no test statistic leaks into training. A feature constant over
// the training set (a border pixel) is only centred. Sets must be dense and
// of one dimension.
func Standardize(train []*Set, others ...*Set) {
	m := train[0].Dim
	mean, sd := make([]float64, m), make([]float64, m)
	var n float64
	for _, s := range train {
		for i := 0; i < s.Len(); i++ {
			floats.Add(mean, s.Row(i))
		}
		n += float64(s.Len())
	}
	floats.Scale(1/n, mean)
	for _, s := range train {
		for i := 0; i < s.Len(); i++ {
			for j, x := range s.Row(i) {
				d := x - mean[j]
				sd[j] += d * d
			}
		}
	}
	for j := range sd {
		sd[j] = math.Sqrt(sd[j] / n)
		if sd[j] == 0 {
			sd[j] = 1
		}
	}
	for _, s := range append(slices.Clone(train), others...) {
		for i := 0; i < s.Len(); i++ {
			row := s.Row(i)
			for j := range row {
				row[j] = (row[j] - mean[j]) / sd[j]
			}
		}
	}
}
