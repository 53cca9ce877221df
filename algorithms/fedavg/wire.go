package fedavg

import (
	"google.golang.org/protobuf/encoding/protowire"

	"maple/algorithms/compress"
)

// Observation keys the actor behaviours report (package actors/fedavg uses
// these values) and reference.Simulate reports through SimOptions.Observe,
// in the round of the message concerned.
const (
	ObsDropped   = "dropped"
	ObsLate      = "late"
	ObsTimeout   = "timeout"
	ObsTime      = "time"
	ObsEmpty     = "empty"
	ObsStaleness = "staleness"
	ObsModel     = "model"
	// ObsDraws is the number of agents a synchronous server drew for the
	// round, [n], reported when it draws them under Poisson participation
	// (where it is random, possibly 0).
	ObsDraws = "draws"
	// ObsLost and ObsDuplicate are the actor engine's own observations of a
	// message lost on its link and of a message sent twice (actors.KeyLost,
	// actors.KeyDuplicate); the value is the receiver.
	ObsLost      = "engine/lost"
	ObsDuplicate = "engine/duplicate"
)

// ModelWireSize is the length of the protobuf encoding of a GlobalModel with
// slot and n weights (and no probability p), as proto.Size computes it.
func ModelWireSize(slot int32, n int) int { return vectorMessageSize(slot, n) }

// ClientsWireSize is the length the field clients (the round's number of
// clients, n) adds to the protobuf encoding of a GlobalModel.
func ClientsWireSize(n int) int {
	if n == 0 {
		return 0
	}
	return protowire.SizeTag(4) + protowire.SizeVarint(uint64(int64(n)))
}

// Announces reports whether the server tells each client of a round how
// many clients the round has (GlobalModel's field clients): under secure
// aggregation with Poisson participation, where the parties of the
// protocol need the round's n and it is random.
func (c *Config) Announces() bool { return c.SecAgg != nil && c.Participation == Poisson }

// ReplyWireSize is the length of the protobuf encoding of a LocalModel or
// LocalUpdate with slot and n values and no importance report.
func ReplyWireSize(slot int32, n int) int { return vectorMessageSize(slot, n) }

// UplinkWireSize is the length of the protobuf encoding of an agent's reply
// with slot — n values, or c when c is not nil (compressed) —, a side vector
// of side values and the importance report r, as proto.Size computes it:
// what every engine reports under ObsUplink.
func UplinkWireSize(slot int32, n int, c *compress.Compressed, side int, r Report) int {
	if c != nil {
		return CompressedReplyWireSize(slot, c, side) + ReportWireSize(r)
	}
	return ReplyWireSize(slot, n) + ReplySideWireSize(side) + ReportWireSize(r)
}

// ModelSideWireSize and ReplySideWireSize are the lengths a side vector of n
// values adds to the protobuf encoding of a GlobalModel (field 5) and of a
// reply (field 6): a rule's Broadcaster and SideRule vectors.
func ModelSideWireSize(n int) int { return packedDoublesSize(5, n) }

// ReplySideWireSize: see ModelSideWireSize.
func ReplySideWireSize(n int) int { return packedDoublesSize(6, n) }

// packedDoublesSize is the encoded size of field, a packed repeated double
// of n values (nothing when empty).
func packedDoublesSize(field protowire.Number, n int) int {
	if n == 0 {
		return 0
	}
	return protowire.SizeTag(field) + protowire.SizeBytes(8*n)
}

// vectorMessageSize is the encoded size of a message whose field 1 is an
// int32 slot and field 2 a packed repeated double of n values.
func vectorMessageSize(slot int32, n int) int {
	size := 0
	if slot != 0 {
		size += protowire.SizeTag(1) + protowire.SizeVarint(uint64(int64(slot)))
	}
	return size + packedDoublesSize(2, n)
}

// WireSizes returns the encoded sizes reference.Simulate charges to bandwidth for a
// GlobalModel and a reply with slot and n values, for tests that compare
// them with the protobuf library's.
func WireSizes(slot int32, n int) (model, reply int) {
	return ModelWireSize(slot, n), ReplyWireSize(slot, n)
}
