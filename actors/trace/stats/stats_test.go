package stats

import (
	"math"
	"testing"

	"maple/actors/trace"
)

// Two runs of a two-agent exchange: the counts, bytes, mean norms, and the
// busy and idle time of each actor are known by hand.
func TestAccumulator(t *testing.T) {
	run := func(r int) []trace.Record {
		return []trace.Record{
			{Run: r, Seq: 1, From: "env", To: "scheduler", Type: "Start"},
			{Run: r, Seq: 2, Round: 1, Time: 1, From: "scheduler", To: "agent/0", Type: "Tick", Start: 1, End: 3},
			{Run: r, Seq: 3, Round: 1, Time: 1, From: "scheduler", To: "agent/1", Type: "Tick", Start: 1, End: 2},
			{Run: r, Seq: 4, Round: 1, Time: 3, From: "agent/0", To: "agent/1", Type: "Share", Size: 10, Dim: 2, Norm: 3, Start: 3, End: 3},
			{Run: r, Seq: 5, Round: 1, Time: 4, From: "agent/1", To: "agent/0", Type: "Share", Size: 12, Dim: 2, Norm: 5, Start: 4, End: 6},
		}
	}
	a := New()
	for _, r := range [][]trace.Record{run(0), run(1)} {
		for i := range r {
			a.Add(&r[i])
		}
	}
	s := a.Stats()
	if s.Records != 10 || s.Runs != 2 || s.Duration != 12 {
		t.Errorf("records %d runs %d duration %v, want 10, 2, 12", s.Records, s.Runs, s.Duration)
	}
	want := []RoundType{
		{Round: 0, Type: "Start", Count: 2},
		{Round: 1, Type: "Share", Count: 4, Bytes: 44, Vectors: 4, MeanNorm: 4},
		{Round: 1, Type: "Tick", Count: 4},
	}
	if len(s.Rounds) != len(want) {
		t.Fatalf("rounds %+v", s.Rounds)
	}
	for i, w := range want {
		g := s.Rounds[i]
		if g.Round != w.Round || g.Type != w.Type || g.Count != w.Count || g.Bytes != w.Bytes || g.Vectors != w.Vectors || g.MeanNorm != w.MeanNorm {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
	if len(s.Types) != 3 || s.Types[0].Type != "Share" || s.Types[0].Round != -1 || s.Types[0].Count != 4 {
		t.Errorf("types %+v", s.Types)
	}
	// agent/0 handles a Tick 1–3 and a Share 4–6: busy 4 of 6 per run.
	// agent/1: a Tick 1–2 and a Share at 3 taking no time: busy 1.
	// The scheduler handles Start in no time and env receives nothing.
	names := []string{"agent/0", "agent/1", "env", "scheduler"}
	busy := []float64{8, 2, 0, 0}
	for i, x := range s.Actors {
		if x.Name != names[i] || x.Busy != busy[i] || x.Idle != 12-busy[i] {
			t.Errorf("actor %+v, want %s busy %v idle %v", x, names[i], busy[i], 12-busy[i])
		}
	}
	if x := s.Actors[0]; x.Sent != 2 || x.Received != 4 || x.BytesSent != 20 || x.BytesReceived != 24 {
		t.Errorf("agent/0: %+v", x)
	}
}

// The totals per type add the rounds' norms in round order, so the result is
// the same at every call (Go randomizes map iteration). The norms are chosen
// so that the order shows: 2⁵³ + 1 + 1 + … rounds to 2⁵³ when added first
// to last (each 1 is half an ulp and lost), but any order that adds two 1s
// before 2⁵³ keeps them.
func TestTypeTotalsAreDeterministic(t *testing.T) {
	const rounds = 12
	want := (math.Exp2(53) + 0) / rounds // round order: every 1 is lost
	for range 20 {
		a := New()
		for i := 1; i <= rounds; i++ {
			norm := 1.0
			if i == 1 {
				norm = math.Exp2(53)
			}
			a.Add(&trace.Record{Seq: uint64(i), Round: i, From: "a", To: "b", Type: "Share", Dim: 1, Norm: norm})
		}
		s := a.Stats()
		if got := s.Types[0].MeanNorm; got != want {
			t.Fatalf("mean norm of the type total %v, want %v (the rounds' norms added in round order)", got, want)
		}
	}
}
