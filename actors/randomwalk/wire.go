package randomwalk

import (
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"maple/actors/msg"
	rw "maple/algorithms/randomwalk"
)

// announcement, token and gossipModel build the protobuf messages of the
// protocol; the behaviours send them and WireSizer measures them, so both
// engines count the same bytes. Vectors are copied: messages are immutable
// once sent.
func announcement(a rw.Announcement) *msg.WalkAnnounce {
	return &msg.WalkAnnounce{Degree: int32(a.Degree), LogWeight: a.LogWeight}
}

func token(walk, k int, model []float64) *msg.WalkToken {
	return &msg.WalkToken{Walk: int32(walk), Step: int64(k), Model: slices.Clone(model)}
}

func gossipModel(model []float64, reply bool) *msg.GossipModel {
	return &msg.GossipModel{Model: slices.Clone(model), Reply: reply}
}

// WireSizer is the randomwalk.Sizer of the actor messages: the length of
// their protobuf encoding.
type WireSizer struct{}

// Announcement implements randomwalk.Sizer.
func (WireSizer) Announcement(a rw.Announcement) int { return proto.Size(announcement(a)) }

// Token implements randomwalk.Sizer.
func (WireSizer) Token(walk, k int, model []float64) int { return tokenSize(walk, k, len(model)) }

// tokenSize is proto.Size of the token of walk after step k carrying a model
// of dimension dim, without building it: every step of a walk measures its
// token, and protobuf's size of a message is the sum of its fields' tags and
// encodings — a varint for walk and step unless zero, a packed run of
// doubles for the model unless empty. A test checks it against proto.Size.
func tokenSize(walk, k, dim int) int {
	n := 0
	if walk != 0 {
		n += protowire.SizeTag(1) + protowire.SizeVarint(uint64(int64(int32(walk))))
	}
	if k != 0 {
		n += protowire.SizeTag(2) + protowire.SizeVarint(uint64(int64(k)))
	}
	if dim > 0 {
		n += protowire.SizeTag(3) + protowire.SizeBytes(8*dim)
	}
	return n
}

// GossipModel implements randomwalk.Sizer.
func (WireSizer) GossipModel(model []float64, reply bool) int {
	return proto.Size(gossipModel(model, reply))
}
