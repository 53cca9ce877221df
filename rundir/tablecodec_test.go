package rundir

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

// A table survives encoding bit for bit: values (NaN payloads, signed zeros
// and infinities included), iterations and the divergence mark.
func TestTableBinaryRoundTrip(t *testing.T) {
	tb := NewTable(7, 3, 3) // iterations 0 3 6 7
	tb.Set(0, 0, math.Copysign(0, -1))
	tb.Set(1, 1, math.Float64frombits(0x7ff8000000000123)) // a NaN with a payload: diverged at 3
	tb.Set(2, 2, math.Inf(-1))
	tb.Set(3, 0, 0.1+0.2)
	tb.Set(1, 1, 1) // overwritten: the divergence mark stays
	b, err := tb.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got Table
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Iterations, tb.Iterations) || got.cols != tb.cols {
		t.Fatalf("shape %v×%d, want %v×%d", got.Iterations, got.cols, tb.Iterations, tb.cols)
	}
	for i := range tb.values {
		if math.Float64bits(got.values[i]) != math.Float64bits(tb.values[i]) {
			t.Errorf("value %d: bits %#x, want %#x", i, math.Float64bits(got.values[i]), math.Float64bits(tb.values[i]))
		}
	}
	if at, ok := got.DivergedAt(); !ok || at != 3 {
		t.Errorf("diverged at %d (%v), want 3", at, ok)
	}
	again, _ := got.MarshalBinary()
	if !bytes.Equal(again, b) {
		t.Error("re-encoding the decoded table changed its bytes")
	}
}

// Truncated or padded encodings are errors, never panics.
func TestTableBinaryRejectsMalformed(t *testing.T) {
	b, _ := NewTable(4, 1, 2).MarshalBinary()
	for n := 0; n < len(b); n++ {
		var tb Table
		if err := tb.UnmarshalBinary(b[:n]); err == nil {
			t.Errorf("%d of %d bytes decoded without error", n, len(b))
		}
	}
	var tb Table
	if err := tb.UnmarshalBinary(append(b, 0)); err == nil {
		t.Error("a trailing byte decoded without error")
	}
}

func FuzzTableUnmarshal(f *testing.F) {
	b, _ := NewTable(4, 1, 2).MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var tb Table
		if tb.UnmarshalBinary(data) != nil {
			return
		}
		out, _ := tb.MarshalBinary()
		var again Table
		if err := again.UnmarshalBinary(out); err != nil {
			t.Fatalf("re-encoded table does not decode: %v", err)
		}
		if out2, _ := again.MarshalBinary(); !bytes.Equal(out2, out) {
			t.Errorf("decoded table re-encodes differently") // varints may be non-minimal in data, never in out
		}
	})
}
