package chrometrace

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"maple/actors/trace"
	"maple/internal/browser"
)

// records is a run in which the scheduler (handling Start) ticks two agents
// at t=1; agent/0 computes for 2 s and sends a 10-byte share to agent/1,
// which arrives at t=3.5 while agent/1 is still busy until t=4.
func records() []trace.Record {
	return []trace.Record{
		{Seq: 1, Curve: "c", From: "env", To: "scheduler", Type: "Start"},
		{Seq: 2, Curve: "c", Round: 1, Time: 1, From: "scheduler", To: "agent/0", Type: "Tick", Start: 1, End: 3, Cause: 1},
		{Seq: 3, Curve: "c", Round: 1, Time: 1, From: "scheduler", To: "agent/1", Type: "Tick", Start: 1, End: 4, Cause: 1},
		{Seq: 4, Curve: "c", Round: 1, Time: 3.5, Sent: 3, From: "agent/0", To: "agent/1", Type: "Share", Size: 10, Dim: 2, Norm: 1.5, Start: 4, End: 4.5, Cause: 2},
	}
}

func export(t *testing.T, clock Clock, recs []trace.Record) []Event {
	t.Helper()
	var buf bytes.Buffer
	e := NewExporter(&buf, clock)
	for i := range recs {
		if err := e.Add(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []Event `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if len(doc.TraceEvents) != e.Events() {
		t.Errorf("%d events parsed, %d written", len(doc.TraceEvents), e.Events())
	}
	return doc.TraceEvents
}

// tracks maps thread ids to names.
func tracks(events []Event) map[int]string {
	m := map[int]string{}
	for _, ev := range events {
		if ev.Ph == "M" && ev.Name == "thread_name" {
			m[ev.Tid] = ev.Args["name"].(string)
		}
	}
	return m
}

func TestVirtualClock(t *testing.T) {
	events := export(t, Auto, records())
	names := tracks(events)
	type slice struct {
		track     string
		ts, dur   float64
		name, src string
	}
	var slices []slice
	flows := map[string][]Event{}
	var counter []float64
	for _, ev := range events {
		switch ev.Ph {
		case "X":
			slices = append(slices, slice{names[ev.Tid], ev.Ts, *ev.Dur, ev.Name, ev.Args["from"].(string)})
		case "s", "f":
			flows[ev.ID] = append(flows[ev.ID], ev)
		case "C":
			counter = append(counter, ev.Ts, ev.Args["bytes"].(float64))
		}
	}
	want := []slice{
		{"scheduler", 0, 0, "Start", "env"},
		{"agent/0", 1e6, 2e6, "Tick", "scheduler"},
		{"agent/1", 1e6, 3e6, "Tick", "scheduler"},
		{"agent/1", 4e6, 0.5e6, "Share", "agent/0"},
	}
	if len(slices) != len(want) {
		t.Fatalf("slices %+v", slices)
	}
	for i := range want {
		if slices[i] != want[i] {
			t.Errorf("slice %d = %+v, want %+v", i, slices[i], want[i])
		}
	}
	// Three flows (Start has no sender's handling): each a start on the
	// sender's track at its handling's slice and an end on the receiver's.
	if len(flows) != 3 {
		t.Fatalf("flows %+v", flows)
	}
	for id, f := range flows {
		if len(f) != 2 || f[0].Ph != "s" || f[1].Ph != "f" || f[1].Bp != "e" {
			t.Errorf("flow %s = %+v, want a start then an end bound to its slice", id, f)
		}
	}
	share := flows[flowID(1, 4)]
	if names[share[0].Tid] != "agent/0" || share[0].Ts != 1e6 || names[share[1].Tid] != "agent/1" || share[1].Ts != 4e6 {
		t.Errorf("share flow %+v: want agent/0 at 1 s to agent/1 at 4 s", share)
	}
	// The share is in flight from 3 s to 3.5 s.
	if len(counter) != 4 || counter[0] != 3e6 || counter[1] != 10 || counter[2] != 3.5e6 || counter[3] != 0 {
		t.Errorf("bytes in flight %v, want 10 from 3 s to 3.5 s", counter)
	}
}

func TestDeliveryClock(t *testing.T) {
	recs := records()
	for i := range recs { // a run without latency or compute time
		recs[i].Time, recs[i].Sent, recs[i].Start, recs[i].End = 0, 0, 0, 0
	}
	events := export(t, Auto, recs)
	var process string
	n := 0
	for _, ev := range events {
		if ev.Ph == "M" && ev.Name == "process_name" {
			process = ev.Args["name"].(string)
		}
		if ev.Ph == "X" {
			n++
			seq := ev.Args["seq"].(float64)
			if ev.Ts != seq || *ev.Dur != 1 {
				t.Errorf("slice of message %v at %v for %v, want one microsecond at its delivery number", seq, ev.Ts, *ev.Dur)
			}
		}
		if ev.Ph == "C" && ev.Ts == 2.5 && ev.Args["bytes"].(float64) != 10 {
			t.Errorf("share not in flight after being sent during delivery 2: %+v", ev)
		}
	}
	if n != 4 || process != "c — run 0 (delivery clock)" {
		t.Errorf("%d slices in process %q", n, process)
	}
}

func TestParseClock(t *testing.T) {
	for s, want := range map[string]Clock{"auto": Auto, "virtual": Virtual, "delivery": Delivery} {
		if got, err := ParseClock(s); got != want || err != nil {
			t.Errorf("ParseClock(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseClock("wall"); err == nil {
		t.Error("ParseClock accepted wall")
	}
}

// The export loads in Chromium's own trace engine (the DevTools Performance
// panel's, which reads the same trace-event format as ui.perfetto.dev): every
// message is an entry on its receiver's track and every flow arrow joins two
// of them. The check runs where Chromium is installed; the tests above check
// the same structure by parsing everywhere.
func TestExportLoadsInChromium(t *testing.T) {
	path := browser.Require(t, "the export was checked by parsing only")
	s, err := browser.Start(path, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Navigate("devtools://devtools/bundled/devtools_app.html"); err != nil {
		t.Fatal(err)
	}
	for _, clock := range []Clock{Virtual, Delivery} {
		var buf bytes.Buffer
		e := NewExporter(&buf, clock)
		recs := records()
		for i := range recs {
			if err := e.Add(&recs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Flows   int
			Entries map[string]int
		}
		js := `(async () => {
			const m = await import("./models/trace/trace.js");
			const model = m.TraceModel.Model.createWithAllHandlers();
			await model.parse(JSON.parse(` + strconv.Quote(buf.String()) + `).traceEvents);
			const d = model.parsedTrace(0).data;
			const entries = {};
			for (const p of d.Renderer.processes.values())
				for (const th of p.threads.values()) entries[th.name] = th.entries.length;
			return {Flows: d.Flows.flows.length, Entries: entries};
		})()`
		if err := s.Eval(js, &got); err != nil {
			t.Fatalf("%v clock: %v", clock, err)
		}
		want := map[string]int{"scheduler": 1, "agent/0": 1, "agent/1": 2}
		if got.Flows != 3 || len(got.Entries) != len(want) {
			t.Errorf("%v clock: Chromium sees %d flows and tracks %v; want 3 flows and %v", clock, got.Flows, got.Entries, want)
		}
		for name, n := range want {
			if got.Entries[name] != n {
				t.Errorf("%v clock: track %s has %d entries, want %d", clock, name, got.Entries[name], n)
			}
		}
	}
}
