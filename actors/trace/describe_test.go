package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"maple/actors/msg"
)

// The plans of a Describer give what protobuf's Range walk over a message
// gives — the same Fields, Dim, Norm and Payload — and the fields' JSON
// text that Describe and DescribeText leave in the record encodes exactly
// as the Fields map does through encoding/json, errors included. Messages
// of every type maple sends, of well-known types (maps, nested messages,
// enums, oneofs) and of a dynamic type with a field of every kind are
// filled at random.
func TestDescribeMatchesRangeAndEncodingJSON(t *testing.T) {
	types := []protoreflect.MessageType{
		(&structpb.Struct{}).ProtoReflect().Type(), (&structpb.Value{}).ProtoReflect().Type(),
		(&wrapperspb.BytesValue{}).ProtoReflect().Type(), (&descriptorpb.UninterpretedOption{}).ProtoReflect().Type(),
		// Generated proto3 scalars of other kinds, whose sizes a plan computes.
		(&wrapperspb.DoubleValue{}).ProtoReflect().Type(), (&wrapperspb.FloatValue{}).ProtoReflect().Type(),
		(&wrapperspb.Int64Value{}).ProtoReflect().Type(), (&wrapperspb.UInt64Value{}).ProtoReflect().Type(),
		(&wrapperspb.Int32Value{}).ProtoReflect().Type(), (&wrapperspb.UInt32Value{}).ProtoReflect().Type(),
		(&wrapperspb.BoolValue{}).ProtoReflect().Type(), (&wrapperspb.StringValue{}).ProtoReflect().Type(),
		dynamicpb.NewMessageType(everyKind(t)), dynamicpb.NewMessageType((&msg.StageShare{}).ProtoReflect().Descriptor()),
	}
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if strings.HasPrefix(string(mt.Descriptor().FullName()), "maple.") {
			types = append(types, mt)
		}
		return true
	})
	if len(types) < 30 {
		t.Fatalf("only %d message types", len(types))
	}
	r := rand.New(rand.NewPCG(5, 6))
	var d, text Describer // reused, as a run's is
	var rec, recText Record
	var enc encoder
	errs := 0
	// The plan of StageShare is worked out for the generated type, which
	// the dynamic messages of its descriptor then meet.
	d.Describe(&Record{}, &msg.StageShare{Payload: []float64{1}}, false)
	text.DescribeText(&Record{}, &msg.StageShare{Payload: []float64{1}}, false)
	var mt protoreflect.MessageType
	for i := range 20000 {
		if mt == nil || r.IntN(2) == 0 { // else the type of the message before, as runs send them
			mt = types[r.IntN(len(types))]
		}
		m := mt.New()
		fill(r, m, 2)
		if r.IntN(8) == 0 { // a field of a newer schema, which Size counts
			m.SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 1000, protowire.VarintType), r.Uint64()))
		}
		payload := r.IntN(4) == 0
		fresh := func() Record { return Record{Seq: uint64(i + 1), From: "a", To: "b"} }

		want := fresh() // the walk Describe made before plans
		pm := m.Interface().ProtoReflect()
		want.Type, want.Size = string(pm.Descriptor().Name()), proto.Size(m.Interface())
		new(Describer).describeRanged(&want, pm, payload)

		fields := rec.Fields
		rec = fresh()
		rec.Fields = fields
		d.Describe(&rec, m.Interface(), payload)
		recText = fresh()
		text.DescribeText(&recText, m.Interface(), payload)

		// dynamicpb's Range visits fields in map order, so the Range walk
		// sums the squares of several vectors in any order; a plan sums
		// them in declaration order, as Range does for generated messages.
		if _, dyn := m.(*dynamicpb.Message); dyn && math.Abs(rec.Norm-want.Norm) <= 1e-12*math.Abs(want.Norm) {
			want.Norm = rec.Norm
		}
		got := rec.Clone()
		got.fieldsText, got.fieldsCount = nil, 0 // compared below, as JSON
		if len(got.Fields) == 0 && want.Fields == nil {
			got.Fields = nil
		}
		// %#v shows types, sorts map keys and prints NaN as NaN, which
		// DeepEqual never finds equal.
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
			t.Fatalf("message %d (%v): Describe gives\n%+v\nthe Range walk\n%+v", i, prototextOf(m), got, want)
		}
		var js bytes.Buffer
		wantErr := json.NewEncoder(&js).Encode(&want)
		if wantErr != nil {
			errs++
		}
		textClone := recText.Clone()
		for _, c := range []struct {
			how string
			rec *Record
		}{{"Describe", &rec}, {"DescribeText", &recText}, {"a clone of DescribeText's", &textClone}} {
			line, err := enc.appendRecord(nil, c.rec)
			if (err != nil) != (wantErr != nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("message %d (%v), %s: error %v, encoding/json's %v", i, prototextOf(m), c.how, err, wantErr)
			}
			if err == nil && string(line) != js.String() {
				t.Fatalf("message %d (%v), %s:\n got %s\nwant %s", i, prototextOf(m), c.how, line, js.Bytes())
			}
		}
		if recText.Fields != nil && wantErr == nil {
			t.Fatalf("message %d: DescribeText filled Fields %v", i, recText.Fields)
		}
	}
	if errs == 0 {
		t.Error("no message had a float JSON refuses")
	}
}

// A store written from records described as a run describes them — one
// reused record, DescribeText, the writer's goroutine encoding them — is
// byte for byte the store of the same records with their Fields maps,
// which the writer encodes on the caller's side; with payloads, with
// records described by Describe in between, over many blocks and batches.
func TestStoreWriterOfDescribedMessages(t *testing.T) {
	defer func(target, limit int) { blockTarget, blockLimit = target, limit }(blockTarget, blockLimit)
	blockTarget, blockLimit = 4<<10, 32<<10
	var types []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		if strings.HasPrefix(string(mt.Descriptor().FullName()), "maple.") {
			types = append(types, mt)
		}
		return true
	})
	r := rand.New(rand.NewPCG(7, 8))
	var buf bytes.Buffer
	w := NewStoreWriter(&buf)
	var d Describer
	var rec Record
	var kept []Record
	var probe encoder
	for i := range 3 * batchSize {
		m := types[r.IntN(len(types))].New()
		fill(r, m, 1)
		head := Record{Seq: uint64(i + 1), Curve: "c", Round: i / 50, Time: float64(i / 50), From: fmt.Sprint("agent/", r.IntN(5)), To: "server"}
		rec = head
		payload := r.IntN(10) == 0
		if r.IntN(10) == 0 {
			d.Describe(&rec, m.Interface(), payload)
		} else {
			d.DescribeText(&rec, m.Interface(), payload)
		}
		if _, err := probe.appendRecord(nil, &rec); err != nil {
			continue // a NaN, which fails the writer (see TestStoreWriterReportsWriteErrorsAndStops)
		}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
		Describe(&head, m.Interface(), payload) // the map a sink that keeps the record sees
		kept = append(kept, head.Clone())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if want := writeStore(t, kept); !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("store of %d described records: %d bytes, the store of their maps %d", len(kept), buf.Len(), len(want))
	}
	dec, err := zstd.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	got, err := io.ReadAll(dec) // the blocks' frames, the index's skipped
	if err != nil {
		t.Fatal(err)
	}
	if want := jsonLines(t, kept); !bytes.Equal(got, want) {
		t.Fatalf("the store decompresses to %d bytes, not the %d bytes of the records' JSON lines", len(got), len(want))
	}
}

// The text of consecutive sequence numbers, carried digit by digit, is
// strconv's.
func TestAppendSeqCarries(t *testing.T) {
	var e encoder
	for _, start := range []uint64{0, 1, 7, 95, 990, 99995, 1<<64 - 3} {
		for seq := start; seq < start+12 && seq >= start; seq++ {
			if got, want := string(e.appendSeq(nil, seq)), strconv.FormatUint(seq, 10); got != want {
				t.Fatalf("after %d: %s, want %s", seq-1, got, want)
			}
		}
	}
}

func prototextOf(m protoreflect.Message) string {
	js, _ := json.Marshal(m.Interface())
	return string(js)
}

// everyKind returns a message type with a singular, a repeated and a map
// field of every scalar kind, an enum, a nested message and a oneof.
func everyKind(t *testing.T) protoreflect.MessageDescriptor {
	t.Helper()
	kinds := []descriptorpb.FieldDescriptorProto_Type{
		descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, descriptorpb.FieldDescriptorProto_TYPE_FLOAT,
		descriptorpb.FieldDescriptorProto_TYPE_INT64, descriptorpb.FieldDescriptorProto_TYPE_UINT64,
		descriptorpb.FieldDescriptorProto_TYPE_INT32, descriptorpb.FieldDescriptorProto_TYPE_FIXED64,
		descriptorpb.FieldDescriptorProto_TYPE_FIXED32, descriptorpb.FieldDescriptorProto_TYPE_BOOL,
		descriptorpb.FieldDescriptorProto_TYPE_STRING, descriptorpb.FieldDescriptorProto_TYPE_BYTES,
		descriptorpb.FieldDescriptorProto_TYPE_UINT32, descriptorpb.FieldDescriptorProto_TYPE_SFIXED32,
		descriptorpb.FieldDescriptorProto_TYPE_SFIXED64, descriptorpb.FieldDescriptorProto_TYPE_SINT32,
		descriptorpb.FieldDescriptorProto_TYPE_SINT64,
	}
	msg := &descriptorpb.DescriptorProto{Name: proto.String("Every")}
	num := int32(0)
	field := func(name string, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		num++
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum(), JsonName: proto.String(name)}
		if typeName != "" {
			f.TypeName = proto.String(typeName)
		}
		msg.Field = append(msg.Field, f)
		return f
	}
	opt, rep := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL, descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	for _, k := range kinds {
		name := strings.ToLower(strings.TrimPrefix(k.String(), "TYPE_"))
		field("z_"+name, k, opt, "")
		field("list_"+name, k, rep, "")
		if k != descriptorpb.FieldDescriptorProto_TYPE_DOUBLE && k != descriptorpb.FieldDescriptorProto_TYPE_FLOAT && k != descriptorpb.FieldDescriptorProto_TYPE_BYTES {
			entryName := "Map" + strings.ToUpper(name[:1]) + name[1:] + "Entry"
			entry := &descriptorpb.DescriptorProto{Name: proto.String(entryName), Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
				Field: []*descriptorpb.FieldDescriptorProto{
					{Name: proto.String("key"), Number: proto.Int32(1), Type: k.Enum(), Label: opt.Enum(), JsonName: proto.String("key")},
					{Name: proto.String("value"), Number: proto.Int32(2), Type: descriptorpb.FieldDescriptorProto_TYPE_DOUBLE.Enum(), Label: opt.Enum(), JsonName: proto.String("value")},
				}}
			msg.NestedType = append(msg.NestedType, entry)
			field("map_"+name, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".t.Every."+entryName)
		}
	}
	field("a_enum", descriptorpb.FieldDescriptorProto_TYPE_ENUM, opt, ".t.Colour")
	field("list_enum", descriptorpb.FieldDescriptorProto_TYPE_ENUM, rep, ".t.Colour")
	field("nested", descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, opt, ".t.Every")
	field("list_nested", descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, rep, ".t.Every")
	msg.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: proto.String("choice")}}
	for _, f := range []*descriptorpb.FieldDescriptorProto{
		field("one_string", descriptorpb.FieldDescriptorProto_TYPE_STRING, opt, ""),
		field("one_double", descriptorpb.FieldDescriptorProto_TYPE_DOUBLE, opt, ""),
	} {
		f.OneofIndex = proto.Int32(0)
	}
	file := &descriptorpb.FileDescriptorProto{
		Name: proto.String("every.proto"), Package: proto.String("t"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{msg},
		EnumType: []*descriptorpb.EnumDescriptorProto{{Name: proto.String("Colour"), Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("RED"), Number: proto.Int32(0)}, {Name: proto.String("GREEN"), Number: proto.Int32(1)}}}},
	}
	fd, err := protodesc.NewFile(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Messages().Get(0)
}

// fill sets each field of m, or not, to random values of its kind: floats
// of every magnitude (and, rarely, ones JSON refuses), strings of bytes
// JSON escapes, unknown enum numbers, nested messages down to depth.
func fill(r *rand.Rand, m protoreflect.Message, depth int) {
	fds := m.Descriptor().Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if r.IntN(3) == 0 || fd.Message() != nil && depth == 0 {
			continue
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range r.IntN(3) {
				if fd.MapValue().Message() != nil {
					v := mp.NewValue()
					fill(r, v.Message(), depth-1)
					mp.Set(scalar(r, fd.MapKey()).MapKey(), v)
				} else {
					mp.Set(scalar(r, fd.MapKey()).MapKey(), scalar(r, fd.MapValue()))
				}
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range r.IntN(4) {
				if fd.Message() != nil {
					e := l.NewElement()
					fill(r, e.Message(), depth-1)
					l.Append(e)
				} else {
					l.Append(scalar(r, fd))
				}
			}
		case fd.Message() != nil:
			fill(r, m.Mutable(fd).Message(), depth-1)
		default:
			m.Set(fd, scalar(r, fd))
		}
	}
}

// scalar returns a random value of fd's kind.
func scalar(r *rand.Rand, fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(r.IntN(2) == 0)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(r.Int32() - 1<<30)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(r.Int64() - 1<<62)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(r.Uint32())
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(r.Uint64())
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(randomFloat(r)))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(randomFloat(r))
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(randomString(r))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(randomString(r)))
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(r.IntN(3)))
	}
	panic(fd.Kind())
}

// BenchmarkDescribeText describes the message a decentralized run sends
// most, a stage share of a two-dimensional model, as a traced run does: one
// reused Describer and record, the same type message after message.
func BenchmarkDescribeText(b *testing.B) {
	var d Describer
	var rec Record
	m := &msg.StageShare{Stage: 2, Payload: []float64{0.3, 0.4}}
	for b.Loop() {
		d.DescribeText(&rec, m, false)
	}
	if rec.Norm != 0.5 || rec.Size != 20 {
		b.Fatalf("norm %v, size %d; want 0.5, 20", rec.Norm, rec.Size)
	}
}
