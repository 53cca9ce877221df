// Package trace records the messages of a run, one JSON line per message, and
// reads and filters such traces back.
//
// A trace shows what an observer on the links would see: who sent what to
// whom, when (virtual time) and in which round, with the size of the message on
// the wire and the dimension and Euclidean norm of the vector it carries.
// Scalar and byte fields (roles, weights, public keys) are listed as they are;
// vectors appear in full only when payload recording is switched on. Nothing
// that stays inside an actor (private keys, pairwise secrets, local data) is a
// message, so nothing of it can appear here.
package trace

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Record is one line of a trace.
type Record struct {
	// Seq numbers the messages of one run in delivery order, from 1.
	Seq uint64 `json:"seq"`
	// Run is the Monte-Carlo run index and Curve the label of the curve
	// (sweep point) the run belongs to.
	Run   int    `json:"run"`
	Curve string `json:"curve"`
	// Time is the virtual time at which the message arrives, in seconds.
	Time float64 `json:"t"`
	// Round is the round (iteration) the message belongs to.
	Round int `json:"round"`
	// From and To name the sender and receiver actors.
	From string `json:"from"`
	To   string `json:"to"`
	// Type is the protobuf message name, without package.
	Type string `json:"type"`
	// Size is the length of the message's protobuf encoding in bytes.
	Size int `json:"size"`
	// Dim and Norm describe the vector fields of the message: their total
	// length and joint Euclidean norm. Both are zero for messages without one.
	Dim  int     `json:"dim,omitempty"`
	Norm float64 `json:"norm,omitempty"`
	// Sent is the sender's virtual clock when it sent the message: Time
	// minus the link delay.
	Sent float64 `json:"sent,omitempty"`
	// Start and End are the receiver's virtual clock when it began and
	// finished handling the message. Start is the later of Time and the end
	// of the receiver's previous handling; End − Start is the compute time
	// the handling spent.
	Start float64 `json:"start,omitempty"`
	End   float64 `json:"end,omitempty"`
	// Cause is the Seq of the delivery during whose handling the sender
	// sent this message (0 for the harness's Start): the edge from a
	// handling to the messages it produced.
	Cause uint64 `json:"cause,omitempty"`
	// Fields lists the message's other populated fields; bytes are hex.
	Fields map[string]any `json:"fields,omitempty"`
	// Payload holds the vector fields in full, when payload recording is on.
	Payload map[string][]float64 `json:"payload,omitempty"`
	// Lost marks a message lost on its link: it is recorded at the time it
	// would have arrived and never delivered. Duplicate marks the second
	// copy of a message the link delivered twice, and Timer a message an
	// actor set for itself (Context.After), which crosses no link.
	Lost      bool `json:"lost,omitempty"`
	Duplicate bool `json:"duplicate,omitempty"`
	Timer     bool `json:"timer,omitempty"`
}

// Clone returns a copy of rec that shares no map or vector with it. A sink
// that keeps the records it is handed keeps clones: the engine reuses one
// record, and its Fields map, from message to message.
func (rec *Record) Clone() Record {
	c := *rec
	c.Fields = maps.Clone(rec.Fields)
	if rec.Payload != nil {
		c.Payload = make(map[string][]float64, len(rec.Payload))
		for k, v := range rec.Payload {
			c.Payload[k] = slices.Clone(v)
		}
	}
	return c
}

// Describe fills the message-dependent fields of rec (Type, Size, Dim, Norm,
// Fields and, if payload is set, Payload) from m by protobuf reflection, so
// user-defined messages are traced without any code of their own. A Fields
// map rec already holds is cleared and reused; the values put in it are
// new.
func Describe(rec *Record, m proto.Message, payload bool) {
	var d Describer
	d.Describe(rec, m, payload)
}

// Describer is Describe for a caller that describes many messages, one
// after another: it keeps the state of the walk over a message's fields, so
// that describing one allocates nothing beyond the field values it records.
// The zero value is ready to use; it is not safe for concurrent use.
type Describer struct {
	rec     *Record
	payload bool
	sq      float64
	visit   func(protoreflect.FieldDescriptor, protoreflect.Value) bool // d.field, bound once
}

// Describe is the package's Describe.
func (d *Describer) Describe(rec *Record, m proto.Message, payload bool) {
	clear(rec.Fields)
	pm := m.ProtoReflect()
	rec.Type = string(pm.Descriptor().Name())
	rec.Size = proto.Size(m)
	if d.visit == nil {
		d.visit = d.field
	}
	d.rec, d.payload, d.sq = rec, payload, 0
	pm.Range(d.visit)
	if rec.Dim > 0 {
		rec.Norm = math.Sqrt(d.sq)
	}
	d.rec = nil
}

// field records one populated field of the message being described.
func (d *Describer) field(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	rec := d.rec
	name := string(fd.Name())
	if fd.IsList() && (fd.Kind() == protoreflect.DoubleKind || fd.Kind() == protoreflect.FloatKind) {
		list := v.List()
		var vec []float64 // kept only when the payload is recorded
		if d.payload {
			vec = make([]float64, list.Len())
			if rec.Payload == nil {
				rec.Payload = map[string][]float64{}
			}
			rec.Payload[name] = vec
		}
		for i := range list.Len() {
			x := list.Get(i).Float()
			if d.payload {
				vec[i] = x
			}
			d.sq += x * x
		}
		rec.Dim += list.Len()
		return true
	}
	if rec.Fields == nil {
		rec.Fields = map[string]any{}
	}
	rec.Fields[name] = fieldValue(fd, v)
	return true
}

// fieldValue renders a non-vector field for JSON: lists as arrays, maps as
// objects, nested messages as objects of their populated fields, bytes as
// hex and enums by name, so that a record is a readable, deterministic
// function of the message.
func fieldValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch {
	case fd.IsList():
		list := v.List()
		out := make([]any, list.Len())
		for i := range out {
			out[i] = scalarValue(fd, list.Get(i))
		}
		return out
	case fd.IsMap():
		out := map[string]any{}
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			out[k.String()] = scalarValue(fd.MapValue(), mv)
			return true
		})
		return out
	}
	return scalarValue(fd, v)
}

// scalarValue renders one value of a field's kind.
func scalarValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.BytesKind:
		return hex.EncodeToString(v.Bytes())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return int32(v.Enum())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		out := map[string]any{}
		v.Message().Range(func(f protoreflect.FieldDescriptor, fv protoreflect.Value) bool {
			out[string(f.Name())] = fieldValue(f, fv)
			return true
		})
		return out
	}
	return v.Interface()
}

// Writer writes records as JSON lines.
type Writer struct {
	w    *bufio.Writer
	line []byte
}

// NewWriter returns a Writer on w. Call Flush when done.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriter(w)}
}

// Write appends one record, as encoding/json's Encoder writes it.
func (w *Writer) Write(rec *Record) error {
	line, err := appendRecord(w.line[:0], rec)
	if err != nil {
		return err
	}
	w.line = line
	_, err = w.w.Write(line)
	return err
}

// Flush writes any buffered data to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

// Read calls fn for every record of a JSON-lines trace, stopping at the first
// error. Errors name the trace and the line.
func Read(r io.Reader, name string, fn func(*Record) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 256*1024*1024)
	for line := 1; sc.Scan(); line++ {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("%s:%d: not a trace record: %v", name, line, err)
		}
		if err := fn(&rec); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
