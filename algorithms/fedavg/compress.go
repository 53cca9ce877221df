package fedavg

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"google.golang.org/protobuf/encoding/protowire"
)

// Compressed replies (algorithm.fedavg.compress): an agent sends its reply
// in a compressed form instead of the dense vector, and the server decodes
// it before its rule combines it. The compressor acts last, on what the
// agent would have sent — the update ψ_k (update sharing) or the model's
// change w_{i−1} − w_k (model sharing), privacy noise and an adversary's
// alteration included — so that what it does to the values is all the
// server sees, and a privatized reply stays as private (compressing it is
// post-processing). Under model sharing the server rebuilds the model as
// w_{i−1} minus the decoded change.
//
// The built-in compressors are in compressors.go: top-k sparsification
// with error feedback, QSGD and signSGD (with the majority vote, its
// server). actors/fedavg registers them.

// Compressed is a reply in compressed form, as the reply messages carry it
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

// ObsUplink is the observation every engine reports when an agent sends a
// reply: [bytes], the length of its protobuf encoding, in the round of the
// task — what a bandwidth-limited link charges, and the bytes column of a
// run that counts them.
const ObsUplink = "uplink"

// StreamCompress is the purpose of an agent's stream that a randomized
// compressor draws from (QSGD's stochastic rounding): the stream
// Local.Rand would open, saved with the agent when the Pool parks it.
const StreamCompress = "compress"

// Compressor is the parameters of a compression of the agents' replies,
// the value of Config.Compress. NewEncoder returns the encoder of one agent
// for one run, for replies of dimension dim, its state fresh (an error
// feedback's residual): both engines call it once per agent per run, and
// the agent keeps it while the Pool parks it, as it keeps a
// StatefulClient's client. Decode writes into dst, of the model's
// dimension, the vector c encodes; it fails on a c that no encoder of the
// compressor writes for that dimension (a malformed message), so that a
// protocol error stops the run.
type Compressor interface {
	NewEncoder(cfg *Config, dim int) Encoder
	Decode(dst []float64, c *Compressed) error
}

// Encoder compresses the replies of one agent. Encode returns the
// compressed form of u, which it must not change; stream(purpose) is the
// agent's stream for purpose (StreamCompress), for an encoder that draws.
// The returned slices are the caller's (the engines send them).
type Encoder interface {
	Encode(u []float64, stream func(purpose string) *rand.Rand) Compressed
}

// Dense is the compression of a configuration that sends its replies
// whole (none), as a nil Config.Compress does.
type Dense struct{}

// NewEncoder implements Compressor: a dense reply has no encoder.
func (Dense) NewEncoder(*Config, int) Encoder { return nil }

// Decode implements Compressor: there is nothing to decode.
func (Dense) Decode([]float64, *Compressed) error {
	return errors.New("dense replies are not compressed")
}

// Compressing reports whether the agents compress their replies.
func (c *Config) Compressing() bool {
	_, dense := c.Compress.(Dense)
	return c.Compress != nil && !dense
}

// newEncoder returns the encoder of one agent, nil when the replies are
// dense.
func (c *Config) newEncoder(dim int) Encoder {
	if !c.Compressing() {
		return nil
	}
	return c.Compress.NewEncoder(c, dim)
}

// Why compression is refused with the privacy features that work on
// dense vectors.
const (
	// CompressSecAgg: secure aggregation masks and sums dense vectors.
	CompressSecAgg = "secure aggregation sums the clients' dense vectors under masks that cancel only in the sum: a compressed reply cannot be masked (a sparse one would reveal its indices, a quantized one would need the grid of the sum), so compression and secure aggregation are not combined"
	// CompressDP: DP-FedAvg's sensitivity is that of the clipped update.
	CompressDP = "DP-FedAvg clips each dense update to norm C and calibrates its noise to that bound; a compressed reply's norm is not bounded by C (error feedback adds the residual, QSGD and signSGD can reach √d times it), so the guarantee would not hold: compression and privacy.dp are not combined"
)

// validateCompress checks the compression against the rest of the
// configuration.
func (c *Config) validateCompress() error {
	if !c.Compressing() {
		return nil
	}
	switch {
	case c.SecAgg != nil:
		return fmt.Errorf("compress: %s", CompressSecAgg)
	case c.DP.Mode != NoDP:
		return fmt.Errorf("compress: %s", CompressDP)
	}
	return nil
}

// Compress returns the compressed form of the reply the agent trained
// into reply from w0 (Train), after an adversary's alteration if any: under
// update sharing the update itself, under model sharing the model's change
// w0 − reply, which the server subtracts from its model (DecodeReply). It
// returns false when the configuration sends dense replies.
func (a *Agent) Compress(reply, w0 []float64) (Compressed, bool) {
	if a.enc == nil {
		return Compressed{}, false
	}
	u := reply
	if a.cfg.Share == Models {
		buf, delta := gradBuffer(len(w0))
		defer gradBuffers.Put(buf)
		for j := range delta {
			delta[j] = w0[j] - reply[j]
		}
		u = delta
	}
	return a.enc.Encode(u, a.Rand), true
}

// DecodeReply writes into dst the reply c encodes for a round whose model
// is model: the update itself under update sharing, and under model
// sharing the model minus the change c encodes.
func (c *Config) DecodeReply(dst, model []float64, comp *Compressed) error {
	if err := c.Compress.Decode(dst, comp); err != nil {
		return err
	}
	if c.Share == Models {
		for j := range dst {
			dst[j] = model[j] - dst[j]
		}
	}
	return nil
}

// AcceptCompressed is AcceptReply for a compressed reply, which the server
// decodes (DecodeReply) into a buffer of the slot's before it records it.
// It fails as AcceptReply does, and on a reply the compressor cannot
// decode.
func (s *Server) AcceptCompressed(slot, agent int, c *Compressed, side []float64, r Report) (complete bool, err error) {
	switch {
	case slot < 0 || slot >= len(s.draws) || s.draws[slot] != agent:
		return false, fmt.Errorf("reply for slot %d from agent %d, which was not drawn for it", slot, agent)
	case s.replies[slot] != nil:
		return false, fmt.Errorf("second reply for slot %d from agent %d", slot, agent)
	}
	for len(s.decoded) <= slot {
		s.decoded = append(s.decoded, make([]float64, len(s.model)))
	}
	v := s.decoded[slot]
	if err := s.cfg.DecodeReply(v, s.model, c); err != nil {
		return false, fmt.Errorf("compressed reply from agent %d: %w", agent, err)
	}
	return s.AcceptReply(slot, agent, v, side, r)
}

// ArriveCompressed is Arrive for a compressed reply, which the server
// decodes against the model version the agent was sent (DecodeReply).
func (s *AsyncServer) ArriveCompressed(agent, version int, c *Compressed) (updated bool, tau int, err error) {
	if !s.Waiting(agent, version) {
		return false, 0, fmt.Errorf("update from agent %d for version %d, which it is not training on", agent, version)
	}
	if s.decoded == nil {
		s.decoded = make([]float64, len(s.model))
	}
	var base []float64
	if s.cfg.Share == Models {
		base = s.sent[version].w
	}
	if err := s.cfg.DecodeReply(s.decoded, base, c); err != nil {
		return false, 0, fmt.Errorf("compressed update from agent %d: %w", agent, err)
	}
	return s.Arrive(agent, version, s.decoded)
}

// CompressedReplyWireSize is the length of the protobuf encoding of a
// LocalModel or LocalUpdate with slot carrying c, with a side vector of
// side values and no importance report, as proto.Size computes it (see
// ReplyWireSize).
func CompressedReplyWireSize(slot int32, c *Compressed, side int) int {
	size := vectorMessageSize(slot, 0) + packedDoublesSize(6, side)
	if len(c.Index) > 0 {
		n := 0
		for _, i := range c.Index {
			n += protowire.SizeVarint(uint64(i))
		}
		size += protowire.SizeTag(7) + protowire.SizeBytes(n)
	}
	if len(c.Values) > 0 {
		size += protowire.SizeTag(8) + protowire.SizeBytes(4*len(c.Values))
	}
	if math.Float64bits(c.Scale) != 0 {
		size += protowire.SizeTag(9) + protowire.SizeFixed64()
	}
	if len(c.Packed) > 0 {
		size += protowire.SizeTag(10) + protowire.SizeBytes(len(c.Packed))
	}
	return size
}

// ReportWireSize is the length an importance report r adds to the protobuf
// encoding of a reply (its fields grad_norm, sigma2 and alpha, each
// present unless zero).
func ReportWireSize(r Report) int {
	size := 0
	for field, x := range []float64{3: r.GradNorm, 4: r.Sigma2, 5: r.Alpha} {
		if math.Float64bits(x) != 0 {
			size += protowire.SizeTag(protowire.Number(field)) + protowire.SizeFixed64()
		}
	}
	return size
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
