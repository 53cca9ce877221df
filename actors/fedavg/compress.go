package fedavg

import (
	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/compress"
	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// Compressed replies (algorithm.fedavg.compress): the agents send their
// replies compressed — top-k sparsification with error feedback, QSGD,
// signSGD — in the fields index, values, scale and packed of LocalModel and
// LocalUpdate instead of the dense vector, so that a compressed reply's
// protobuf encoding, which the engine counts, traces and charges to the
// links' bandwidth, is really smaller; the server decodes it before its
// rule (algorithms/fedavg/compress.go; the compressors are
// algorithms/compress's). signSGD's server, the majority
// vote, is registered here too.

// CompressSlot is the slot of the compression of the agents' replies,
// selected by algorithm.fedavg.compress.
const CompressSlot = "fedavg.compress"

// Compressors is the registry of the compressions: a compress.Compressor,
// registered as the struct of its parameters at their defaults, which both
// engines apply (Config.Compress).
var Compressors = params.Registry[compress.Compressor]{Slot: CompressSlot}

func init() {
	Compressors.Register("none", "every reply is sent whole, as 64-bit floats", compress.Dense{})
	Compressors.Register("top-k", "top-k sparsification (Aji & Heafield 2017) with error feedback (Stich et al. 2018): the k coordinates of largest magnitude, as indices and 32-bit floats",
		compress.TopK{K: 10, Feedback: true})
	Compressors.Register("qsgd", "QSGD (Alistarh et al. 2017): the norm and, per coordinate, an unbiased stochastic rounding of its magnitude to one of s levels, with its sign, in ⌈log₂(2s + 1)⌉ bits",
		compress.QSGD{Levels: 4})
	Compressors.Register("signsgd", "signSGD (Bernstein et al. 2018): one sign bit per coordinate; the server is the majority vote (server majority)", compress.SignSGD{})
	RegisterServer(Server{Name: "majority", Doc: "signSGD's majority vote (Bernstein et al. 2018, 2019): w ← w − lr·μ·sign(Σ_k sign(ψ_k))",
		Params: fedavg.MajorityRule{LR: 1}})
}

// compressedReply is what LocalModel and LocalUpdate share of a compressed
// reply.
type compressedReply interface {
	GetIndex() []uint32
	GetValues() []float32
	GetScale() float64
	GetPacked() []byte
}

// compressedOf returns the compressed reply m carries under cfg, nil when
// cfg's replies are dense.
func compressedOf(cfg *fedavg.Config, m compressedReply) *compress.Compressed {
	if !cfg.Compressing() {
		return nil
	}
	return &compress.Compressed{Index: m.GetIndex(), Values: m.GetValues(), Scale: m.GetScale(), Packed: m.GetPacked()}
}

// replyMessage returns the reply message of an agent, one the run recycled
// if it has one (actors.Fresh): a LocalUpdate when it shares updates, a
// LocalModel otherwise.
func replyMessage(ctx *actors.Context, share fedavg.Share, slot int32, reply []float64, c *compress.Compressed, out fedavg.Outcome) proto.Message {
	if share == fedavg.Updates {
		return fillUpdate(actors.Fresh[msg.LocalUpdate](ctx), slot, reply, c, out)
	}
	return fillModel(actors.Fresh[msg.LocalModel](ctx), slot, reply, c, out)
}

// fillUpdate fills the empty m with an agent's reply: dense, or carrying c
// when it is not nil (compressed).
func fillUpdate(m *msg.LocalUpdate, slot int32, reply []float64, c *compress.Compressed, out fedavg.Outcome) *msg.LocalUpdate {
	r := out.Report
	m.Slot, m.Update, m.GradNorm, m.Sigma2, m.Alpha, m.Side = slot, reply, r.GradNorm, r.Sigma2, r.Alpha, out.ToServer
	if c != nil {
		m.Update, m.Index, m.Values, m.Scale, m.Packed = nil, c.Index, c.Values, c.Scale, c.Packed
	}
	return m
}

// fillModel is fillUpdate for a reply that is a model.
func fillModel(m *msg.LocalModel, slot int32, reply []float64, c *compress.Compressed, out fedavg.Outcome) *msg.LocalModel {
	r := out.Report
	m.Slot, m.Weights, m.GradNorm, m.Sigma2, m.Alpha, m.Side = slot, reply, r.GradNorm, r.Sigma2, r.Alpha, out.ToServer
	if c != nil {
		m.Weights, m.Index, m.Values, m.Scale, m.Packed = nil, c.Index, c.Values, c.Scale, c.Packed
	}
	return m
}
