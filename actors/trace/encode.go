package trace

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// encoder writes records as JSON lines: byte for byte what a json.Encoder
// (with its default HTML escaping) writes for a record, newline included,
// at a fraction of the cost — the encoder reflects over the record's fields
// on every call, and a run traces every message. Field values of kinds the
// fast path does not know, and floats that JSON cannot represent (NaN,
// ±Inf, which make the encoder fail), go through encoding/json itself, so
// the output and the errors stay the encoder's.
//
// It remembers the text of what consecutive records often share: the last
// value of each time (the messages of a round arrive at the same time) and
// of the norm (a message sent to several receivers is described once per
// receiver, in consecutive records), of the run, round, size and
// dimension, the cause (the messages one handling sends are consecutive
// records), the curve and the type, the names of the actors it has met,
// and the last sequence number. The zero value is ready to use.
type encoder struct {
	floats      [5]formatted // t, sent, start, end, norm
	ints        [4]formatted // run, round, size, dim
	seq         formatted    // the last Seq
	cause       formatted    // the last Cause
	curve, kind quoted       // the curve and the type, which change rarely
	actors      [256]actor   // the senders and receivers met, see actor
}

// actor is an actor name an encoder has met: its JSON text and, for a
// StoreWriter, its position in the store's table of names (-1 until
// known).
type actor struct {
	name string
	text []byte
	at   int
}

// actor returns the entry of name, made the first time. Entries are found
// by the address of the name's bytes, so that the names a run passes
// again and again, always the same strings, are found without hashing
// their text; the name is still compared, so that any string is correct.
func (e *encoder) actor(name string) *actor {
	p := uintptr(unsafe.Pointer(unsafe.StringData(name)))
	a := &e.actors[(p>>3^p>>11)%uintptr(len(e.actors))]
	if a.name != name || a.text == nil {
		a.name, a.text, a.at = name, appendString(a.text[:0], name), -1
	}
	return a
}

// quoted is a string and its JSON text.
type quoted struct {
	s    string
	text []byte
	ok   bool
}

// appendQuoted appends s as appendString does, from c if s is c's string.
func (c *quoted) appendQuoted(b []byte, s string) []byte {
	if c.ok && c.s == s {
		return append(b, c.text...)
	}
	n := len(b)
	b = appendString(b, s)
	c.s, c.text, c.ok = s, append(c.text[:0], b[n:]...), true
	return b
}

// formatted is a number (the bits of a float64, or an integer) and its
// JSON text.
type formatted struct {
	bits uint64
	text []byte
	ok   bool
}

// normFloat is the position of the norm among an encoder's float fields.
const normFloat = 4

// appendCached appends f, the i-th float field (normFloat for the norm),
// formatted as appendFloat does.
func (e *encoder) appendCached(b []byte, i int, f float64) ([]byte, bool) {
	c := &e.floats[i]
	if c.ok && c.bits == math.Float64bits(f) {
		return append(b, c.text...), true
	}
	n := len(b)
	b, ok := appendFloat(b, f, 64)
	if ok {
		c.bits, c.text, c.ok = math.Float64bits(f), append(c.text[:0], b[n:]...), true
	}
	return b, ok
}

// appendInt appends v, the i-th integer field, as strconv.AppendInt does.
func (e *encoder) appendInt(b []byte, i int, v int) []byte {
	c := &e.ints[i]
	if !c.ok || c.bits != uint64(v) {
		c.bits, c.text, c.ok = uint64(v), strconv.AppendInt(c.text[:0], int64(v), 10), true
	}
	return append(b, c.text...)
}

// appendSeq appends seq as strconv.AppendUint does. Records usually come in
// sequence, and the text of the next number is the last one's with its
// last digits carried.
func (e *encoder) appendSeq(b []byte, seq uint64) []byte {
	c := &e.seq
	if c.ok && seq == c.bits+1 && seq != 0 {
		t := c.text
		i := len(t) - 1
		for ; i >= 0 && t[i] == '9'; i-- {
			t[i] = '0'
		}
		if i >= 0 {
			t[i]++
		} else { // 99…9 + 1
			t = append(t, '0')
			t[0] = '1'
		}
		c.text = t
	} else {
		c.text = strconv.AppendUint(c.text[:0], seq, 10)
	}
	c.bits, c.ok = seq, true
	return append(b, c.text...)
}

// appendRecord appends the JSON line of rec to b.
func (e *encoder) appendRecord(b []byte, rec *Record) ([]byte, error) {
	start := len(b)
	b = append(b, `{"seq":`...)
	b = e.appendSeq(b, rec.Seq)
	b = append(b, `,"run":`...)
	b = e.appendInt(b, 0, rec.Run)
	b = append(b, `,"curve":`...)
	b = e.curve.appendQuoted(b, rec.Curve)
	b = append(b, `,"t":`...)
	var ok bool
	if b, ok = e.appendCached(b, 0, rec.Time); !ok {
		return slowRecord(b[:start], rec)
	}
	b = append(b, `,"round":`...)
	b = e.appendInt(b, 1, rec.Round)
	b = append(b, `,"from":`...)
	b = append(b, e.actor(rec.From).text...)
	b = append(b, `,"to":`...)
	b = append(b, e.actor(rec.To).text...)
	b = append(b, `,"type":`...)
	b = e.kind.appendQuoted(b, rec.Type)
	b = append(b, `,"size":`...)
	b = e.appendInt(b, 2, rec.Size)
	if rec.Dim != 0 {
		b = append(b, `,"dim":`...)
		b = e.appendInt(b, 3, rec.Dim)
	}
	if rec.Norm != 0 {
		b = append(b, `,"norm":`...)
		if b, ok = e.appendCached(b, normFloat, rec.Norm); !ok {
			return slowRecord(b[:start], rec)
		}
	}
	for i, f := range [...]struct {
		key string
		v   float64
	}{{`,"sent":`, rec.Sent}, {`,"start":`, rec.Start}, {`,"end":`, rec.End}} {
		if f.v != 0 {
			b = append(b, f.key...)
			if b, ok = e.appendCached(b, i+1, f.v); !ok {
				return slowRecord(b[:start], rec)
			}
		}
	}
	if rec.Cause != 0 {
		b = append(b, `,"cause":`...)
		c := &e.cause
		if !c.ok || c.bits != rec.Cause {
			c.bits, c.text, c.ok = rec.Cause, strconv.AppendUint(c.text[:0], rec.Cause, 10), true
		}
		b = append(b, c.text...)
	}
	if len(rec.fieldsText) > 0 && len(rec.Fields) == rec.fieldsCount {
		b = append(b, `,"fields":`...)
		b = append(b, rec.fieldsText...)
	} else if len(rec.Fields) > 0 {
		b = append(b, `,"fields":`...)
		if b, ok = appendValue(b, rec.Fields); !ok {
			return slowRecord(b[:start], rec)
		}
	}
	if len(rec.Payload) > 0 {
		b = append(b, `,"payload":{`...)
		var buf [8]string
		for i, k := range sortedKeys(rec.Payload, buf[:]) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, ok = appendFloats(b, rec.Payload[k]); !ok {
				return slowRecord(b[:start], rec)
			}
		}
		b = append(b, '}')
	}
	for _, f := range [...]struct {
		key string
		v   bool
	}{{`,"lost":true`, rec.Lost}, {`,"duplicate":true`, rec.Duplicate}, {`,"timer":true`, rec.Timer}} {
		if f.v {
			b = append(b, f.key...)
		}
	}
	return append(b, '}', '\n'), nil
}

// slowRecord appends rec as encoding/json encodes it, or returns its error.
func slowRecord(b []byte, rec *Record) ([]byte, error) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(rec); err != nil {
		return b, err
	}
	return append(b, buf.Bytes()...), nil
}

// appendValue appends a field value as encoding/json encodes it: the kinds
// Describe produces (numbers, strings, booleans, and lists and maps of
// them) directly, any other through json.Marshal. It reports false for a
// float JSON cannot represent.
func appendValue(b []byte, v any) ([]byte, bool) {
	ok := true
	switch v := v.(type) {
	case string:
		return appendString(b, v), true
	case bool:
		return strconv.AppendBool(b, v), true
	case int32:
		return strconv.AppendInt(b, int64(v), 10), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10), true
	case uint64:
		return strconv.AppendUint(b, v, 10), true
	case float64:
		return appendFloat(b, v, 64)
	case float32:
		return appendFloat(b, float64(v), 32)
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendValue(b, x); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		b = append(b, '{')
		var buf [8]string
		for i, k := range sortedKeys(v, buf[:]) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			if b, ok = appendValue(b, v[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	js, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, js...), true
}

// sortedKeys returns the keys of m in ascending byte order, as
// encoding/json writes a map's entries, in buf when they fit.
func sortedKeys[V any](m map[string]V, buf []string) []string {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendFloats appends a list of float64 as encoding/json encodes a
// []float64 (null for nil).
func appendFloats(b []byte, v []float64) ([]byte, bool) {
	if v == nil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	ok := true
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendFloat(b, x, 64); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// appendFloat appends f as encoding/json encodes a float of the given bit
// size: the shortest representation that round-trips, in exponent form
// outside [1e-6, 1e21) (for float32, [1e-6, 1e21) of the float32 value),
// with the exponent's leading zero dropped ("1e-07" becomes "1e-7"). It
// reports false for NaN and ±Inf, which JSON cannot represent.
func appendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// plain marks the ASCII bytes a JSON string holds as they are, with HTML
// escaping: printable characters but the quote, the backslash, '<', '>'
// and '&'.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString appends s as a JSON string the way encoding/json does with
// HTML escaping on: quotes, backslashes and control characters escaped
// (\b, \f, \n, \r, \t by name, the others as \u00XX), '<', '>' and '&' as
// \u003c, \u003e and \u0026, invalid UTF-8 as \ufffd, and U+2028 and U+2029
// as \u2028 and \u2029.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
