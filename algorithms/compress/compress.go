// Package compress holds the compressions of a vector a party sends in
// place of it — top-k sparsification with error feedback, QSGD's stochastic
// quantization and signSGD's signs — and their wire form, Compressed. A
// Compressor is a compression's parameters; it makes one Encoder per sender
// (which may keep state across messages, as error feedback does) and
// decodes what any of its encoders writes. Federated averaging's agents use
// them to compress their replies (algorithms/fedavg, compress.go), and
// actors/fedavg registers them under algorithm.fedavg.compress.
package compress

import (
	"errors"
	"fmt"
	"math/rand/v2"
)

// Compressed is a vector in compressed form, as messages carry it
// (msg.LocalModel and msg.LocalUpdate, fields index, values, scale and
// packed): Index and Values are the coordinates and values of a sparse
// vector, Scale a scalar and Packed fixed-width codes packed in bytes, each
// compressor using those it needs.
type Compressed struct {
	Index  []uint32
	Values []float32
	Scale  float64
	Packed []byte
}

// Stream is the purpose of a sender's stream that a randomized encoder
// draws from (QSGD's stochastic rounding).
const Stream = "compress"

// Compressor is the parameters of a compression. NewEncoder returns the
// encoder of one sender for vectors of dimension dim, its state fresh (an
// error feedback's residual): federated averaging's engines call it once
// per agent per run, and the agent keeps it while its pool parks it.
// Decode writes into dst, of the vectors' dimension, the vector c encodes;
// it fails on a c that no encoder of the compressor writes for that
// dimension (a malformed message), so that a protocol error stops the run.
type Compressor interface {
	NewEncoder(dim int) Encoder
	Decode(dst []float64, c *Compressed) error
}

// Encoder compresses the vectors of one sender. Encode returns the
// compressed form of u, which it must not change; stream(purpose) is the
// sender's stream for purpose (Stream), for an encoder that draws.
// The returned slices are the caller's (the engines send them).
type Encoder interface {
	Encode(u []float64, stream func(purpose string) *rand.Rand) Compressed
}

// Dense is no compression: the vectors are sent whole (compress: none).
type Dense struct{}

// NewEncoder implements Compressor: a dense vector has no encoder.
func (Dense) NewEncoder(int) Encoder { return nil }

// Decode implements Compressor: there is nothing to decode.
func (Dense) Decode([]float64, *Compressed) error {
	return errors.New("dense vectors are not compressed")
}

// Voting is implemented by a compressor whose messages are votes, not
// estimates of the vector (signSGD's signs): their mean is not the
// compressor's algorithm, and whoever combines them must take their
// majority (fedavg.MajorityRule).
type Voting interface {
	Compressor
	Votes()
}

// packCodes packs the codes of values, each below 2^bits (bits ≤ 32),
// bits apiece, least significant bit first, into ⌈n·bits/8⌉ bytes; the
// bits after the last code are zero.
func packCodes(n, bits int, code func(j int) uint32) []byte {
	out := make([]byte, (n*bits+7)/8)
	pos := 0
	for j := range n {
		v := uint64(code(j))
		for b := 0; b < bits; {
			shift := pos % 8
			take := min(8-shift, bits-b)
			out[pos/8] |= byte((v >> b) & (1<<take - 1) << shift)
			pos += take
			b += take
		}
	}
	return out
}

// unpackCodes reads the n codes of bits bits that packCodes wrote into
// packed, calling code for each, and fails unless packed has exactly
// packCodes's length with zero padding.
func unpackCodes(packed []byte, n, bits int, code func(j int, v uint32)) error {
	if want := (n*bits + 7) / 8; len(packed) != want {
		return fmt.Errorf("%d packed bytes, want %d for %d codes of %d bits", len(packed), want, n, bits)
	}
	pos := 0
	for j := range n {
		var v uint64
		for b := 0; b < bits; {
			shift := pos % 8
			take := min(8-shift, bits-b)
			v |= uint64(packed[pos/8]>>shift&(1<<take-1)) << b
			pos += take
			b += take
		}
		code(j, uint32(v))
	}
	if pad := pos % 8; pad != 0 && packed[len(packed)-1]>>pad != 0 {
		return errors.New("nonzero padding after the last code")
	}
	return nil
}
