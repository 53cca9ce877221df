package trace

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"maple/actors/msg"
)

func TestDescribeSummarizesVectorsAndListsOtherFields(t *testing.T) {
	var rec Record
	Describe(&rec, &msg.GlobalModel{Slot: 3, Weights: []float64{3, 4}}, false)
	if rec.Type != "GlobalModel" || rec.Dim != 2 || rec.Norm != 5 {
		t.Errorf("record %+v, want type GlobalModel, dim 2, norm 5", rec)
	}
	if rec.Fields["slot"] != int32(3) || rec.Payload != nil {
		t.Errorf("fields %v payload %v, want slot=3 and no payload", rec.Fields, rec.Payload)
	}
	// The encoding of {slot: 3, weights: [3, 4]}: tag+varint (2 bytes) and a
	// packed field of two doubles (tag, length, 16 bytes).
	if rec.Size != 2+2+16 {
		t.Errorf("size %d, want 20", rec.Size)
	}
	var full Record
	Describe(&full, &msg.LocalModel{Weights: []float64{1, 2}}, true)
	if got := full.Payload["weights"]; len(got) != 2 || got[1] != 2 {
		t.Errorf("payload %v, want the weights", full.Payload)
	}
}

// Bytes (public keys) are rendered as hex, so the trace stays valid JSON and
// shows exactly what crosses the link.
func TestDescribeRendersBytesAsHex(t *testing.T) {
	var rec Record
	Describe(&rec, wrapperspb.Bytes([]byte{0xde, 0xad}), false)
	if rec.Fields["value"] != "dead" {
		t.Errorf("bytes field rendered as %v", rec.Fields["value"])
	}
	var empty Record
	Describe(&empty, &msg.Tick{}, false)
	if empty.Type != "Tick" || empty.Size != 0 || empty.Dim != 0 || empty.Fields != nil {
		t.Errorf("empty message described as %+v", empty)
	}
	// Lists, maps and nested messages are rendered by value, never as Go
	// pointers, so that traces are reproducible.
	var role Record
	Describe(&role, &msg.RoleAssign{Role: msg.MaskRole_MASK_ROLE_PLUS, Weight: 0.25, Partners: []int32{3, 7}}, false)
	if got := fmt.Sprint(role.Fields["partners"]); got != "[3 7]" || role.Fields["role"] != "MASK_ROLE_PLUS" {
		t.Errorf("RoleAssign fields rendered as %v", role.Fields)
	}
	var nested Record
	s, _ := structpb.NewStruct(map[string]any{"a": 1.5, "b": "x"})
	Describe(&nested, s, false)
	js, err := json.Marshal(nested.Fields)
	if err != nil || string(js) != `{"fields":{"a":{"number_value":1.5},"b":{"string_value":"x"}}}` {
		t.Errorf("map of messages rendered as %s (%v)", js, err)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	in := []Record{
		{Seq: 1, Run: 0, Time: 0.5, Round: 1, From: "scheduler", To: "server", Type: "Tick"},
		{Seq: 2, Run: 0, Time: 1.5, Round: 1, From: "server", To: "agent/3", Type: "GlobalModel", Size: 20, Dim: 2, Norm: math.Sqrt2, Fields: map[string]any{"slot": 0}},
	}
	for i := range in {
		if err := w.Write(&in[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("%d lines for 2 records", n)
	}
	var out []Record
	if err := Read(&buf, "t.jsonl", func(r *Record) error { out = append(out, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[1].To != "agent/3" || out[1].Norm != math.Sqrt2 || out[1].Time != 1.5 {
		t.Errorf("read back %+v", out)
	}
	err := Read(strings.NewReader("{\"seq\":1}\nnot json\n"), "t.jsonl", func(*Record) error { return nil })
	if err == nil || !strings.HasPrefix(err.Error(), "t.jsonl:2:") {
		t.Errorf("malformed line: %v", err)
	}
}

func TestFilter(t *testing.T) {
	rec := &Record{Run: 1, Curve: "atc", Round: 3, From: "agent/1", To: "agent/2", Type: "Share"}
	cases := []struct {
		f    Filter
		want bool
	}{
		{Filter{}, true},
		{Filter{Rounds: []int{2, 3}}, true},
		{Filter{Rounds: []int{2}}, false},
		{Filter{Actors: []string{"agent/2"}}, true},
		{Filter{Actors: []string{"agent/1"}}, true},
		{Filter{Actors: []string{"server"}}, false},
		{Filter{Types: []string{"Share", "Tick"}}, true},
		{Filter{Types: []string{"Tick"}}, false},
		{Filter{Runs: []int{0}}, false},
		{Filter{Curve: "cta"}, false},
		{Filter{Rounds: []int{3}, Actors: []string{"agent/2"}, Types: []string{"Share"}, Runs: []int{1}, Curve: "atc"}, true},
	}
	for _, c := range cases {
		if got := c.f.Match(rec); got != c.want {
			t.Errorf("%+v.Match = %v, want %v", c.f, got, c.want)
		}
	}
}

func TestFormat(t *testing.T) {
	got := Format(&Record{Seq: 12, Run: 0, Time: 0.02, Round: 3, From: "server", To: "agent/17", Type: "GlobalModel", Size: 43, Dim: 2, Norm: 1.234, Fields: map[string]any{"slot": 0, "b": "x"}})
	want := "#12 run=0 t=0.0200 round=3 server -> agent/17 GlobalModel 43B dim=2 norm=1.234 b=x slot=0"
	if got != want {
		t.Errorf("Format =\n  %s\nwant\n  %s", got, want)
	}
}

// A record described into a reused record has the new message's fields
// only, and a clone taken before keeps the old ones.
func TestDescribeReusesFieldsAndCloneKeepsThem(t *testing.T) {
	var rec Record
	Describe(&rec, &msg.RoleAssign{Role: msg.MaskRole_MASK_ROLE_PLUS, Weight: 0.25}, true)
	kept := rec.Clone()
	Describe(&rec, &msg.GlobalModel{Slot: 3, Weights: []float64{3, 4}}, true)
	if len(rec.Fields) != 1 || rec.Fields["slot"] != int32(3) {
		t.Errorf("reused record has fields %v, want only slot=3", rec.Fields)
	}
	if len(kept.Fields) != 2 || kept.Fields["role"] != "MASK_ROLE_PLUS" || kept.Fields["weight"] != 0.25 {
		t.Errorf("clone has fields %v, want role and weight", kept.Fields)
	}
	clone := rec.Clone()
	rec.Payload["weights"][0] = 7
	if clone.Payload["weights"][0] != 3 {
		t.Error("a clone shares its payload vectors with the record")
	}
}
