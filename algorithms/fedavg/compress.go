package fedavg

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"maple/algorithms/compress"
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
// The compressors are algorithms/compress's (top-k sparsification with
// error feedback, QSGD and signSGD); signSGD's server, the majority vote,
// is MajorityRule below. actors/fedavg registers them.

// ObsUplink is the observation every engine reports when an agent sends a
// reply: [bytes], the length of its protobuf encoding, in the round of the
// task — what a bandwidth-limited link charges, and the bytes column of a
// run that counts them.
const ObsUplink = "uplink"

// Compressing reports whether the agents compress their replies.
func (c *Config) Compressing() bool {
	_, dense := c.Compress.(compress.Dense)
	return c.Compress != nil && !dense
}

// newEncoder returns the encoder of one agent, nil when the replies are
// dense.
func (c *Config) newEncoder(dim int) compress.Encoder {
	if !c.Compressing() {
		return nil
	}
	return c.Compress.NewEncoder(dim)
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
	return c.CheckVotes()
}

// CheckVotes refuses a compressor whose replies are votes (compress.Voting:
// signSGD's signs) unless the server takes their majority (MajorityRule):
// combined any other way they are not the compressor's algorithm.
func (c *Config) CheckVotes() error {
	if _, votes := c.Compress.(compress.Voting); !votes {
		return nil
	}
	if _, ok := c.ServerBehaviour().(MajorityRule); !ok {
		return fmt.Errorf("signSGD's signs are combined by majority vote (Bernstein et al. 2018), server majority; the server's rule %T is not: the mean of ±1 signs is not their algorithm", c.ServerBehaviour())
	}
	return nil
}

// Compress returns the compressed form of the reply the agent trained
// into reply from w0 (Train), after an adversary's alteration if any: under
// update sharing the update itself, under model sharing the model's change
// w0 − reply, which the server subtracts from its model (DecodeReply). It
// returns nil when the configuration sends dense replies.
func (a *Agent) Compress(reply, w0 []float64) *compress.Compressed {
	if a.enc == nil {
		return nil
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
	c := a.enc.Encode(u, a.Rand)
	return &c
}

// DecodeReply writes into dst the reply c encodes for a round whose model
// is model: the update itself under update sharing, and under model
// sharing the model minus the change c encodes.
func (c *Config) DecodeReply(dst, model []float64, comp *compress.Compressed) error {
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
func (s *Server) AcceptCompressed(slot, agent int, c *compress.Compressed, side []float64, r Report) (complete bool, err error) {
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
func (s *AsyncServer) ArriveCompressed(agent, version int, c *compress.Compressed) (updated bool, tau int, err error) {
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
func CompressedReplyWireSize(slot int32, c *compress.Compressed, side int) int {
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

// MajorityRule is signSGD's majority vote (Bernstein, Wang,
// Azizzadenesheli and Anandkumar, ICML 2018; Bernstein, Zhao,
// Azizzadenesheli and Anandkumar, "signSGD with majority vote is
// communication efficient and fault tolerant", ICLR 2019): every reply
// votes the sign of its update ψ_k in every coordinate (of w_{i−1} − w_k
// under model sharing), and the model takes a step of lr·μ against the
// sign of the votes' sum, w ← w − lr·μ·sign(Σ_k sign(ψ_k)). A coordinate
// whose votes tie does not move, and a reply whose update is 0 in a
// coordinate abstains there. It combines dense replies as well: the server
// then takes the signs itself.
type MajorityRule struct {
	LR float64 `yaml:"lr" range:"(0, inf)" doc:"the server's step, a multiple of the step size μ: w ← w − lr·μ·sign(Σ votes)"`
}

// Combine implements Rule.
func (m MajorityRule) Combine(model []float64, replies [][]float64, share Share, mu float64) {
	if len(replies) == 0 {
		return
	}
	step := m.LR * mu
	for j := range model {
		votes := 0
		for _, r := range replies {
			u := r[j]
			if share == Models {
				u = model[j] - r[j]
			}
			votes += sign(u)
		}
		model[j] -= step * float64(sign(votes))
	}
}

// sign returns −1, 0 or 1 as x is negative, zero (or NaN) or positive.
func sign[T int | float64](x T) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
