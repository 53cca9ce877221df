package rundir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// tableCodecVersion tags the binary encoding of a Table.
const tableCodecVersion = 1

// MarshalBinary encodes the table exactly — every value's bits, NaNs
// included, and the iteration it first diverged at — so that a run executed
// in another process averages exactly as one executed here. It implements
// encoding.BinaryMarshaler.
func (t *Table) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, 1+4*binary.MaxVarintLen64+binary.MaxVarintLen64*len(t.Iterations)+8*len(t.values))
	b = append(b, tableCodecVersion)
	b = binary.AppendUvarint(b, uint64(t.cols))
	b = binary.AppendUvarint(b, uint64(len(t.Iterations)))
	for _, it := range t.Iterations {
		b = binary.AppendVarint(b, int64(it))
	}
	for _, v := range t.values {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	diverged := uint64(0)
	if t.hasDiverged {
		diverged = 1
	}
	b = binary.AppendUvarint(b, diverged)
	b = binary.AppendVarint(b, int64(t.diverged))
	return b, nil
}

// errTableCodec reports a malformed encoded table.
var errTableCodec = errors.New("rundir: malformed encoded table")

// UnmarshalBinary decodes what MarshalBinary encoded into t. It implements
// encoding.BinaryUnmarshaler.
func (t *Table) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != tableCodecVersion {
		return fmt.Errorf("%w: unknown version", errTableCodec)
	}
	b = b[1:]
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	varint := func() (int64, bool) {
		v, n := binary.Varint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	cols, ok1 := uvarint()
	rows, ok2 := uvarint()
	if !ok1 || !ok2 || rows > uint64(len(b)) || cols > uint64(len(b)) || rows*cols*8 > uint64(len(b)) {
		return errTableCodec
	}
	out := Table{cols: int(cols), Iterations: make([]int, rows), values: make([]float64, rows*cols)}
	for i := range out.Iterations {
		v, ok := varint()
		if !ok {
			return errTableCodec
		}
		out.Iterations[i] = int(v)
	}
	if uint64(len(b)) < rows*cols*8 {
		return errTableCodec
	}
	for i := range out.values {
		out.values[i] = math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	diverged, ok1 := uvarint()
	at, ok2 := varint()
	if !ok1 || !ok2 || diverged > 1 || len(b) != 0 {
		return errTableCodec
	}
	out.hasDiverged, out.diverged = diverged == 1, int(at)
	*t = out
	return nil
}
