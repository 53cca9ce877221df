package trace

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
)

// appendRecord writes exactly what a json.Encoder writes, on records whose
// every field is drawn at random: strings of arbitrary bytes (controls,
// quotes, HTML characters, invalid UTF-8, U+2028), floats of every
// magnitude and both float sizes, omitted and present optional fields, and
// field values of every kind Describe produces, nested.
func TestAppendRecordIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var shared encoder // remembers times across records, as a writer's does
	var prev *Record
	for i := range 20000 {
		rec := randomRecord(r)
		if prev != nil && r.IntN(2) == 0 { // consecutive records often share their times and cause
			rec.Time, rec.Sent, rec.Start, rec.End, rec.Cause = prev.Time, prev.Sent, prev.Start, prev.End, prev.Cause
		}
		if prev != nil && r.IntN(2) == 0 { // and the vector they describe, sent to several receivers
			rec.Dim, rec.Norm = prev.Dim, prev.Norm
		}
		prev = rec
		var want bytes.Buffer
		wantErr := json.NewEncoder(&want).Encode(rec)
		got, err := new(encoder).appendRecord([]byte("prefix"), rec)
		if again, errAgain := shared.appendRecord([]byte("prefix"), rec); string(again) != string(got) || (errAgain == nil) != (err == nil) {
			t.Fatalf("record %d: a writer's encoder gives\n%s\nwhere a fresh one gives\n%s", i, again, got)
		}
		if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("record %d: error %v, encoding/json's %v", i, err, wantErr)
		}
		if wantErr == nil && string(got) != "prefix"+want.String() {
			t.Fatalf("record %d:\n got %s\nwant %s", i, got[len("prefix"):], want.Bytes())
		}
	}
}

func randomRecord(r *rand.Rand) *Record {
	rec := &Record{
		Seq: r.Uint64() >> r.IntN(64), Run: r.IntN(1000) - 10, Curve: randomString(r), Time: randomFloat(r),
		Round: r.IntN(100000) - 5, From: randomString(r), To: randomString(r), Type: randomString(r), Size: r.IntN(1 << 20),
	}
	if r.IntN(2) == 0 {
		rec.Dim, rec.Norm = r.IntN(2000), randomFloat(r)
	}
	if r.IntN(2) == 0 {
		rec.Sent, rec.Start, rec.End, rec.Cause = randomFloat(r), randomFloat(r), randomFloat(r), r.Uint64N(1e9)
	}
	if r.IntN(2) == 0 {
		rec.Fields = map[string]any{}
		for range r.IntN(4) {
			rec.Fields[randomString(r)] = randomValue(r, 2)
		}
	}
	if r.IntN(3) == 0 {
		rec.Payload = map[string][]float64{}
		for range r.IntN(3) {
			var v []float64
			if r.IntN(5) > 0 {
				v = make([]float64, r.IntN(4))
			}
			for i := range v {
				v[i] = randomFloat(r)
			}
			rec.Payload[randomString(r)] = v
		}
	}
	rec.Lost, rec.Duplicate, rec.Timer = r.IntN(4) == 0, r.IntN(4) == 0, r.IntN(4) == 0
	return rec
}

// randomString mixes plain letters with the bytes JSON escapes.
func randomString(r *rand.Rand) string {
	pieces := []string{"agent/", "a", "Z", "0", " ", `"`, `\`, "<", ">", "&", "\n", "\t", "\b", "\f", "\r",
		"\x00", "\x1f", "\x7f", "é", "\u2028", "\u2029", "\xff", "\xe2\x80", "𝔸", "\ufffd"}
	var b []byte
	for range r.IntN(6) {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return string(b)
}

// randomFloat covers zero (both signs), the exponent-form cut-offs, tiny,
// huge and ordinary magnitudes and, rarely, the values JSON refuses.
func randomFloat(r *rand.Rand) float64 {
	switch r.IntN(12) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return []float64{1e-6, 1e21, 9.999999999999999e-7, 1e20, 5e-324, math.MaxFloat64}[r.IntN(6)]
	case 3:
		if r.IntN(50) == 0 {
			return []float64{math.NaN(), math.Inf(1), math.Inf(-1)}[r.IntN(3)]
		}
	}
	return math.Ldexp(r.NormFloat64(), r.IntN(160)-80)
}

func randomValue(r *rand.Rand, depth int) any {
	switch k := r.IntN(13); {
	case k == 0:
		return randomString(r)
	case k == 1:
		return r.IntN(2) == 0
	case k == 2:
		return int32(r.Int32() - 1<<30)
	case k == 3:
		return r.Int64() - 1<<62
	case k == 4:
		return r.Uint32()
	case k == 5:
		return r.Uint64()
	case k == 6:
		return randomFloat(r)
	case k == 7:
		return float32(randomFloat(r))
	case k == 8 && depth > 0:
		var l []any
		if r.IntN(4) > 0 {
			l = []any{}
		}
		for range r.IntN(3) {
			l = append(l, randomValue(r, depth-1))
		}
		return l
	case k == 9 && depth > 0:
		if r.IntN(4) == 0 {
			return map[string]any(nil)
		}
		m := map[string]any{}
		for range r.IntN(3) {
			m[randomString(r)] = randomValue(r, depth-1)
		}
		return m
	case k == 10:
		return []byte{1, 2} // a kind the fast path leaves to encoding/json
	}
	return nil
}
