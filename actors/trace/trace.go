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
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/runtime/protoimpl"
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
	// A record described by Describer.DescribeText holds them only as
	// JSON text, which writers write, and Fields is nil.
	Fields map[string]any `json:"fields,omitempty"`
	// fieldsText is the JSON of Fields as Describer.Describe rendered it,
	// when it has, and fieldsCount the number of fields it holds: writers
	// copy the text rather than encode the map again, unless the map has
	// since changed size.
	fieldsText  []byte
	fieldsCount int
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
	c.fieldsText = slices.Clone(rec.fieldsText) // the describer reuses its text
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
// after another. It works out once per message type which fields to visit,
// in which order, and the JSON keys of their values, and it renders the
// fields' JSON as it fills the record's Fields map, so that a writer copies
// that text instead of sorting and encoding the map again. The zero value
// is ready to use; it is not safe for concurrent use.
type Describer struct {
	plans map[protoreflect.MessageDescriptor]*plan
	last  *plan  // the plan of the last message described
	text  []byte // the fields' JSON of the last record, reused
}

// plan is what a Describer works out once about a message type.
type plan struct {
	desc protoreflect.MessageDescriptor
	name string // the message name, without package
	// vectors are the repeated double and float fields, in the order in
	// which protobuf's Range visits them (declaration order), so that the
	// norm sums their squares in the same order; others are the remaining
	// fields, sorted by name as encoding/json writes a map's keys.
	vectors, others []planField
	// ranged means the message can carry fields the plan does not list
	// (extensions): it is walked by Range instead.
	ranged bool
	// goType is the Go type of the message the plan was worked out for: a
	// generated struct, whose fields the vectors' field indexes refer to,
	// or another implementation (dynamicpb) of the same descriptor.
	goType reflect.Type
	// sized means every field is read directly (planField.field ≥ 0), so
	// that the plan computes the message's protobuf size from the values
	// it reads (scalarSize, vectorSize) instead of proto.Size walking the
	// message again.
	sized bool
	// generated means goType is a struct protoc-gen-go generated, which
	// belongs to one descriptor alone, with its unknown fields at offset
	// unknown; direct, that it is also sized and not ranged: a message of
	// goType is then described from its struct alone, found by its Go type
	// without asking for its descriptor.
	generated, direct bool
	unknown           uintptr
}

// planField is one field of a plan and its JSON key.
type planField struct {
	fd   protoreflect.FieldDescriptor
	name string
	key  string // `"name":`
	// field is the index of the field's Go struct field in the plan's
	// goType, or -1, for a vector and for a scalar without presence (a
	// proto3 scalar, set when not zero): read directly, a vector is neither
	// wrapped in a protoreflect.List (an allocation per message) nor read
	// through it element by element, and a scalar costs no reflective
	// Has and Get. offset is where that field lies in the struct.
	field  int
	offset uintptr
	// tag is the size of the field's protobuf tag (protowire.SizeTag);
	// kind and packed are the descriptor's Kind and IsPacked, asked once.
	tag    int
	kind   protoreflect.Kind
	packed bool
}

// planFor returns the plan of m's type, of descriptor md, working it out
// the first time.
func (d *Describer) planFor(m proto.Message, md protoreflect.MessageDescriptor) *plan {
	if p := d.last; p != nil && p.desc == md {
		return p
	}
	p := d.plans[md]
	if p == nil {
		p = newPlan(m, md)
		if d.plans == nil {
			d.plans = map[protoreflect.MessageDescriptor]*plan{}
		}
		d.plans[md] = p
	}
	d.last = p
	return p
}

// newPlan works out the plan of m's type, of descriptor md.
func newPlan(m proto.Message, md protoreflect.MessageDescriptor) *plan {
	p := &plan{desc: md, goType: reflect.TypeOf(m), name: string(md.Name()), ranged: md.ExtensionRanges().Len() > 0, sized: true}
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		f := planField{fd: fd, name: string(fd.Name()), field: -1, tag: protowire.SizeTag(fd.Number()), kind: fd.Kind(), packed: fd.IsPacked()}
		if isVector(fd) {
			f.field = goField(p.goType, fd)
		} else if !fd.HasPresence() && !fd.IsList() && !fd.IsMap() && fd.Message() == nil {
			f.field = goField(p.goType, fd)
		}
		if f.field >= 0 {
			f.offset = p.goType.Elem().Field(f.field).Offset
		} else {
			p.sized = false
		}
		if isVector(fd) {
			p.vectors = append(p.vectors, f)
		} else {
			p.others = append(p.others, f)
		}
	}
	slices.SortFunc(p.others, func(a, b planField) int { return strings.Compare(a.name, b.name) })
	for i := range p.others {
		p.others[i].key = string(appendString(nil, p.others[i].name)) + ":"
	}
	p.unknown, p.generated = generatedUnknown(p.goType)
	p.direct = p.generated && p.sized && !p.ranged
	return p
}

// generatedUnknown reports whether t points to a struct protoc-gen-go
// generated — its first field the message state, and the unknown fields
// in a field of their own — and where in it the unknown fields lie.
func generatedUnknown(t reflect.Type) (uintptr, bool) {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || t.Elem().NumField() == 0 {
		return 0, false
	}
	st := t.Elem()
	unknown, ok := st.FieldByName("unknownFields")
	if st.Field(0).Type != reflect.TypeFor[protoimpl.MessageState]() || !ok || unknown.Type != reflect.TypeFor[protoimpl.UnknownFields]() {
		return 0, false
	}
	return unknown.Offset, true
}

// goField returns the index of the exported field of the struct t points
// to that holds fd, as protoc-gen-go generates it (its tag names fd's
// number), if its Go type is the one expected of a vector ([]float64,
// []float32) or of a scalar of fd's kind; otherwise -1.
func goField(t reflect.Type, fd protoreflect.FieldDescriptor) int {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return -1
	}
	st := t.Elem()
	for i := range st.NumField() {
		sf := st.Field(i)
		tag := strings.Split(sf.Tag.Get("protobuf"), ",")
		if sf.IsExported() && len(tag) > 1 && tag[1] == strconv.Itoa(int(fd.Number())) && goKindOf(fd) == goKind(sf.Type) {
			return i
		}
	}
	return -1
}

// goKind names a Go type by its kind, and a slice by its element's kind
// too.
func goKind(t reflect.Type) string {
	if t.Kind() == reflect.Slice {
		return "[]" + t.Elem().Kind().String()
	}
	return t.Kind().String()
}

// goKindOf is the goKind of the Go type protoc-gen-go gives fd: a vector
// or a scalar without presence.
func goKindOf(fd protoreflect.FieldDescriptor) string {
	var k reflect.Kind
	switch fd.Kind() {
	case protoreflect.BoolKind:
		k = reflect.Bool
	case protoreflect.EnumKind, protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		k = reflect.Int32
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		k = reflect.Int64
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		k = reflect.Uint32
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		k = reflect.Uint64
	case protoreflect.FloatKind:
		k = reflect.Float32
	case protoreflect.DoubleKind:
		k = reflect.Float64
	case protoreflect.StringKind:
		k = reflect.String
	case protoreflect.BytesKind:
		return "[]uint8"
	default:
		return ""
	}
	if fd.IsList() {
		return "[]" + k.String()
	}
	return k.String()
}

// scalarField returns the value of a scalar without presence of the given
// kind from its Go field at p, of the Go type goKindOf names for that kind,
// and whether it is set: not zero (a negative zero is set), as protobuf's
// Has says.
func scalarField(kind protoreflect.Kind, p unsafe.Pointer) (protoreflect.Value, bool) {
	switch kind {
	case protoreflect.BoolKind:
		v := *(*bool)(p)
		return protoreflect.ValueOfBool(v), v
	case protoreflect.EnumKind:
		v := *(*int32)(p)
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(v)), v != 0
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		v := *(*int32)(p)
		return protoreflect.ValueOfInt32(v), v != 0
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		v := *(*int64)(p)
		return protoreflect.ValueOfInt64(v), v != 0
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		v := *(*uint32)(p)
		return protoreflect.ValueOfUint32(v), v != 0
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		v := *(*uint64)(p)
		return protoreflect.ValueOfUint64(v), v != 0
	case protoreflect.FloatKind:
		v := *(*float32)(p)
		return protoreflect.ValueOfFloat32(v), v != 0 || math.Signbit(float64(v))
	case protoreflect.DoubleKind:
		v := *(*float64)(p)
		return protoreflect.ValueOfFloat64(v), v != 0 || math.Signbit(v)
	case protoreflect.StringKind:
		v := *(*string)(p)
		return protoreflect.ValueOfString(v), len(v) > 0
	}
	v := *(*[]byte)(p)
	return protoreflect.ValueOfBytes(v), len(v) > 0
}

// scalarSize returns the size of the protobuf encoding of field f, a set
// scalar without presence of value v, as proto.Size counts it.
func scalarSize(f *planField, v protoreflect.Value) int {
	switch f.kind {
	case protoreflect.BoolKind:
		return f.tag + 1
	case protoreflect.EnumKind:
		return f.tag + protowire.SizeVarint(uint64(int64(v.Enum())))
	case protoreflect.Int32Kind, protoreflect.Int64Kind:
		return f.tag + protowire.SizeVarint(uint64(v.Int()))
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return f.tag + protowire.SizeVarint(protowire.EncodeZigZag(v.Int()))
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		return f.tag + protowire.SizeVarint(v.Uint())
	case protoreflect.Sfixed32Kind, protoreflect.Fixed32Kind, protoreflect.FloatKind:
		return f.tag + 4
	case protoreflect.Sfixed64Kind, protoreflect.Fixed64Kind, protoreflect.DoubleKind:
		return f.tag + 8
	case protoreflect.StringKind:
		return f.tag + protowire.SizeBytes(len(v.String()))
	}
	return f.tag + protowire.SizeBytes(len(v.Bytes()))
}

// vectorSize returns the size of the protobuf encoding of vector field f
// holding n values of width bytes each: packed, one tag and a length, or
// else a tag per value; nothing when empty.
func vectorSize(f *planField, n, width int) int {
	switch {
	case n == 0:
		return 0
	case f.packed:
		return f.tag + protowire.SizeBytes(n*width)
	}
	return n * (f.tag + width)
}

// isVector reports whether fd is a vector: a repeated double or float.
func isVector(fd protoreflect.FieldDescriptor) bool {
	return fd.IsList() && (fd.Kind() == protoreflect.DoubleKind || fd.Kind() == protoreflect.FloatKind)
}

// Describe is the package's Describe. It also leaves in rec the JSON text
// of its Fields, which writers copy until the next Describe into rec.
func (d *Describer) Describe(rec *Record, m proto.Message, payload bool) {
	d.describe(rec, m, payload, true)
}

// DescribeText is Describe for a record that only a writer reads (Writer,
// StoreWriter): it renders the message's other fields as their JSON text
// alone and leaves Fields nil, sparing a map per message. The text is what
// Describe's Fields encode to, and the writer writes it in their place.
func (d *Describer) DescribeText(rec *Record, m proto.Message, payload bool) {
	d.describe(rec, m, payload, false)
}

// describe is Describe, filling Fields if fields is set.
func (d *Describer) describe(rec *Record, m proto.Message, payload, fields bool) {
	if fields {
		clear(rec.Fields)
	} else {
		rec.Fields = nil
	}
	rec.fieldsText, rec.fieldsCount = nil, 0
	// A message of the last plan's generated type needs no reflection: pm
	// stays nil, and every field and its unknown fields are read from its
	// struct, sp.
	p, pm := d.last, protoreflect.Message(nil)
	var sp unsafe.Pointer // the generated struct, if m is of the plan's type
	if p != nil && p.direct && reflect.TypeOf(m) == p.goType {
		sp = reflect.ValueOf(m).UnsafePointer()
	}
	if sp == nil { // another type, or a nil message
		pm = m.ProtoReflect()
		p = d.planFor(m, pm.Descriptor())
		if reflect.TypeOf(m) == p.goType && p.goType.Kind() == reflect.Pointer {
			sp = reflect.ValueOf(m).UnsafePointer()
		}
	}
	rec.Type = p.name
	if p.ranged {
		rec.Size = proto.Size(m)
		d.describeRanged(rec, pm, payload)
		return
	}
	var sq float64
	direct := sp != nil
	size := 0
	for i := range p.vectors {
		f := &p.vectors[i]
		if f.field >= 0 && direct {
			if f.kind == protoreflect.DoubleKind {
				v := *(*[]float64)(unsafe.Add(sp, f.offset))
				size += vectorSize(f, len(v), 8)
				sq = addFloats(rec, f.name, v, payload, sq)
			} else {
				v := *(*[]float32)(unsafe.Add(sp, f.offset))
				size += vectorSize(f, len(v), 4)
				sq = addFloats(rec, f.name, v, payload, sq)
			}
		} else if pm.Has(f.fd) {
			sq = addVector(rec, f.name, pm.Get(f.fd).List(), payload, sq)
		}
	}
	if rec.Dim > 0 {
		rec.Norm = math.Sqrt(sq)
	}
	text := append(d.text[:0], '{')
	n := 0
	ok := true
	for i := range p.others {
		f := &p.others[i]
		var v protoreflect.Value
		if f.field >= 0 && direct {
			var set bool
			if v, set = scalarField(f.kind, unsafe.Add(sp, f.offset)); !set {
				continue
			}
			size += scalarSize(f, v)
		} else if pm.Has(f.fd) {
			v = pm.Get(f.fd)
		} else {
			continue
		}
		if n > 0 {
			text = append(text, ',')
		}
		n++
		text = append(text, f.key...)
		if fields {
			val := fieldValue(f.fd, v)
			if rec.Fields == nil {
				rec.Fields = map[string]any{}
			}
			rec.Fields[f.name] = val
			if ok {
				text, ok = appendValue(text, val)
			}
		} else if ok && f.field >= 0 && direct {
			text, ok = appendScalar(text, f.fd, f.kind, v)
		} else if ok {
			text, ok = appendField(text, f.fd, v)
		}
	}
	d.text = append(text, '}')
	switch {
	case p.direct && direct:
		rec.Size = size + len(*(*protoimpl.UnknownFields)(unsafe.Add(sp, p.unknown)))
	case p.sized && direct:
		rec.Size = size + len(pm.GetUnknown())
	default:
		rec.Size = proto.Size(m)
	}
	switch {
	case n == 0:
	case ok:
		rec.fieldsText, rec.fieldsCount = d.text, len(rec.Fields)
	case !fields:
		// A float JSON cannot represent: the writer is to fail on the
		// map, as encoding/json does.
		if pm == nil {
			pm = m.ProtoReflect()
		}
		rec.Fields = map[string]any{}
		for _, f := range p.others {
			if pm.Has(f.fd) {
				rec.Fields[f.name] = fieldValue(f.fd, pm.Get(f.fd))
			}
		}
	}
}

// appendField appends the JSON of a non-vector field's value, as
// appendValue appends fieldValue's rendering of it. It reports false for a
// float JSON cannot represent.
func appendField(b []byte, fd protoreflect.FieldDescriptor, v protoreflect.Value) ([]byte, bool) {
	if fd.IsList() || fd.IsMap() {
		return appendValue(b, fieldValue(fd, v))
	}
	return appendScalar(b, fd, fd.Kind(), v)
}

// appendScalar is appendField for a field that is neither a list nor a
// map, of the given kind (fd's, which a plan has already asked for).
func appendScalar(b []byte, fd protoreflect.FieldDescriptor, kind protoreflect.Kind, v protoreflect.Value) ([]byte, bool) {
	switch kind {
	case protoreflect.BoolKind:
		return strconv.AppendBool(b, v.Bool()), true
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return strconv.AppendInt(b, v.Int(), 10), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.AppendUint(b, v.Uint(), 10), true
	case protoreflect.DoubleKind:
		return appendFloat(b, v.Float(), 64)
	case protoreflect.FloatKind:
		return appendFloat(b, v.Float(), 32)
	case protoreflect.StringKind:
		return appendString(b, v.String()), true
	case protoreflect.BytesKind:
		b = append(b, '"')
		b = hex.AppendEncode(b, v.Bytes())
		return append(b, '"'), true
	}
	return appendValue(b, scalarValue(fd, v))
}

// addVector adds the vector field name, with value list, to rec's Dim and,
// if payload is set, Payload, and returns sq plus its squared norm.
func addVector(rec *Record, name string, list protoreflect.List, payload bool, sq float64) float64 {
	var vec []float64 // kept only when the payload is recorded
	if payload {
		vec = make([]float64, list.Len())
		if rec.Payload == nil {
			rec.Payload = map[string][]float64{}
		}
		rec.Payload[name] = vec
	}
	for i := range list.Len() {
		x := list.Get(i).Float()
		if payload {
			vec[i] = x
		}
		sq += x * x
	}
	rec.Dim += list.Len()
	return sq
}

// addFloats is addVector for a vector read from its Go field; an empty
// one, which protobuf does not report as set, is skipped.
func addFloats[F float32 | float64](rec *Record, name string, v []F, payload bool, sq float64) float64 {
	if len(v) == 0 {
		return sq
	}
	var vec []float64
	if payload {
		vec = make([]float64, len(v))
		if rec.Payload == nil {
			rec.Payload = map[string][]float64{}
		}
		rec.Payload[name] = vec
	}
	for i, x := range v {
		if payload {
			vec[i] = float64(x)
		}
		sq += float64(x) * float64(x)
	}
	rec.Dim += len(v)
	return sq
}

// describeRanged describes a message whose fields the plan cannot list,
// visiting them by Range, and leaves the encoding of Fields to the writer.
func (d *Describer) describeRanged(rec *Record, pm protoreflect.Message, payload bool) {
	var sq float64
	pm.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if isVector(fd) {
			sq = addVector(rec, string(fd.Name()), v.List(), payload, sq)
			return true
		}
		if rec.Fields == nil {
			rec.Fields = map[string]any{}
		}
		rec.Fields[string(fd.Name())] = fieldValue(fd, v)
		return true
	})
	if rec.Dim > 0 {
		rec.Norm = math.Sqrt(sq)
	}
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
	enc  encoder
}

// NewWriter returns a Writer on w. Call Flush when done.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: bufio.NewWriter(w)}
}

// Write appends one record, as encoding/json's Encoder writes it.
func (w *Writer) Write(rec *Record) error {
	line, err := w.enc.appendRecord(w.line[:0], rec)
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
