package fedavg

import (
	"strings"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/rng"
)

func regression(agents, samples int, seed uint64) []*data.Set {
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: agents, SamplesMin: samples, SamplesMax: samples, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, seed)
	return sets
}

func TestServerRejectsUnexpectedReplies(t *testing.T) {
	cfg := &Config{Agents: 5, Participants: 2, StepSize: 0.1}
	s := NewServer(cfg, []float64{0, 0}, rng.New(1, ServerName, "participation"))
	draws := append([]int(nil), s.Begin()...)
	other := 0
	for other == draws[0] || other == draws[1] {
		other++
	}
	cases := []struct {
		name       string
		slot, from int
		v          []float64
		want       string
	}{
		{"wrong agent", 0, other, []float64{1, 1}, "not drawn"},
		{"bad slot", 5, draws[0], []float64{1, 1}, "not drawn"},
		{"bad dimension", 0, draws[0], []float64{1}, "dimension"},
	}
	for _, c := range cases {
		if _, err := s.Accept(c.slot, c.from, c.v); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Accept returned %v, want an error mentioning %q", c.name, err, c.want)
		}
	}
	if done, err := s.Accept(0, draws[0], []float64{1, 2}); done || err != nil {
		t.Fatalf("first reply: done=%v err=%v", done, err)
	}
	if _, err := s.Accept(0, draws[0], []float64{1, 2}); err == nil || !strings.Contains(err.Error(), "second reply") {
		t.Errorf("duplicate reply: %v", err)
	}
	if done, err := s.Accept(1, draws[1], []float64{3, 4}); !done || err != nil {
		t.Fatalf("last reply: done=%v err=%v", done, err)
	}
	s.Combine()
	if m := s.Model(); m[0] != 2 || m[1] != 3 {
		t.Errorf("combined model %v, want the mean [2 3]", m)
	}
}

func TestParseNames(t *testing.T) {
	for _, p := range []Participation{WithoutReplacement, WithReplacement, Full} {
		if got, err := ParseParticipation(p.String()); err != nil || got != p {
			t.Errorf("participation %v round trip: %v %v", p, got, err)
		}
	}
	for _, s := range []Schedule{PerAgent, PerRound} {
		if got, err := ParseSchedule(s.String()); err != nil || got != s {
			t.Errorf("schedule %v round trip: %v %v", s, got, err)
		}
	}
	for _, s := range []Share{Models, Updates} {
		if got, err := ParseShare(s.String()); err != nil || got != s {
			t.Errorf("share %v round trip: %v %v", s, got, err)
		}
	}
	if _, err := ParseParticipation("some"); err == nil {
		t.Error("unknown participation accepted")
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{5}, 5}} {
		if got := median(append([]float64(nil), c.in...)); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestCombinations(t *testing.T) {
	replies := [][]float64{{1, 10}, {2, 20}, {9, 30}}
	model := []float64{5, 5}
	Median(model, replies, Models, 0.1, nil)
	if model[0] != 2 || model[1] != 20 {
		t.Errorf("median of models = %v, want [2 20]", model)
	}
	model = []float64{5, 5}
	Median(model, replies, Updates, 0.1, nil)
	if model[0] != 5-0.1*2 || model[1] != 5-0.1*20 {
		t.Errorf("median update step = %v, want [4.8 3]", model)
	}
	model = []float64{5, 5}
	Mean(model, replies, Updates, 0.1)
	if model[0] != 5-0.1*12*(1.0/3) || model[1] != 5-0.1*60*(1.0/3) {
		t.Errorf("mean update step = %v, want [4.6 3]", model)
	}
}

// Trimmed means by hand: of 5 values, trim 0.2 drops one at each end
// (⌊0.2·5⌋ = 1), trim 0.39 still one (⌊1.95⌋), trim 0 none (the mean).
func TestTrimmedMean(t *testing.T) {
	replies := [][]float64{{1, 50}, {2, 10}, {3, 20}, {100, 30}, {4, 40}}
	for _, c := range []struct {
		trim  float64
		share Share
		want  []float64
	}{
		{0.2, Models, []float64{3, 30}},                  // {2, 3, 4}, {20, 30, 40}
		{0.39, Models, []float64{3, 30}},                 //
		{0, Models, []float64{22, 30}},                   // the mean
		{0.2, Updates, []float64{5 - 0.1*3, 5 - 0.1*30}}, // w −= μ·trimmed mean
	} {
		model := []float64{5, 5}
		TrimmedMean(model, replies, c.share, 0.1, c.trim, nil)
		if model[0] != c.want[0] || model[1] != c.want[1] {
			t.Errorf("trim %v, %v: %v, want %v", c.trim, c.share, model, c.want)
		}
	}
	if k := TrimCount(7, 0.49); k != 3 {
		t.Errorf("⌊0.49·7⌋ = %d, want 3", k)
	}
	// The server combines with its configuration's rule, the mean by
	// default; without replies no rule moves the model.
	for _, c := range []struct {
		rule Rule
		want float64
	}{{nil, 22}, {MeanRule{}, 22}, {MedianRule{}, 3}, {TrimmedMeanRule{Trim: 0.2}, 3}} {
		s := NewServer(&Config{Agents: 5, Participation: Full, Rule: c.rule}, []float64{7, 7}, nil)
		for slot, k := range s.Begin() {
			if _, err := s.Accept(slot, k, replies[slot]); err != nil {
				t.Fatal(err)
			}
		}
		s.Combine()
		if s.Model()[0] != c.want {
			t.Errorf("server with rule %#v: %v, want %v", c.rule, s.Model()[0], c.want)
		}
		if c.rule == nil {
			continue
		}
		model := []float64{7, 7}
		c.rule.Combine(model, nil, Models, 0.1)
		if model[0] != 7 || model[1] != 7 {
			t.Errorf("rule %#v without replies moved the model to %v", c.rule, model)
		}
	}
}
