package fedavg

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/actors"
	"maple/actors/msg"
	"maple/actors/trace"
	"maple/algorithms/data"
	"maple/algorithms/fedavg"
)

var update = flag.Bool("update", false, "rewrite the golden traces in testdata/")

// TestGoldenTrace runs a tiny FedAvg protocol — 4 agents, 2 per round with
// replacement, 3 rounds, latency and compute time — and compares its message
// trace with testdata/fedavg.trace. Any change to who sends what to whom, in
// which order, when, or how large, shows up as a readable diff; review it and
// rewrite the file with `go test ./actors/fedavg -run Golden -update`.
func TestGoldenTrace(t *testing.T) {
	sets, l := regression(t, 4)
	cfg := fedavg.Config{Agents: 4, Participants: 2, Participation: fedavg.WithReplacement, StepSize: 0.05,
		Normalized: true, Epochs: fedavg.Range{Min: 1, Max: 3}, Batch: fedavg.Range{Min: 2, Max: 4}}
	var lines []string
	sink := func(rec *trace.Record) error { lines = append(lines, trace.Format(rec)); return nil }
	r := actors.NewRun(actors.Options{RunSeed: 5, Timing: actors.Timing{Latency: 0.01}, Trace: actors.TraceOptions{Sink: sink}})
	defer r.Close()
	sched, err := Spawn(r, Setup{Config: &cfg, Data: data.Sets(sets), Loss: l, W0: make([]float64, 3), Rounds: 3, Server: "mean", GradientTime: 0.001})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Execute(sched, &msg.Start{}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "fedavg.trace")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("trace differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}
