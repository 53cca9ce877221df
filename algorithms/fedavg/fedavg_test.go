package fedavg

import (
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/algorithms/rng"
)

func regression(agents, samples int, seed uint64) []*data.Set {
	sets, _ := data.Regression(data.RegressionConfig{
		Agents: agents, SamplesMin: samples, SamplesMax: samples, Dim: 2, CovScale: 1, NoiseVarMin: 0.1, NoiseVarMax: 1,
	}, seed)
	return sets
}

// With full participation, one local step and the whole local dataset as the
// batch, normalized FedAvg is gradient descent on the average risk:
// w_i = w_{i−1} − μ·(1/K) Σ_k ∇J_k(w_{i−1}). The two computations differ only
// in summation order, so each iterate agrees to ~1e-15 relative; 1e-12 is a
// safe bound over 500 iterations of a contraction. The iterates must also
// reach the closed-form w^o (to 1e-10: the contraction factor is below 0.99,
// so 500 rounds shrink the initial error ~1 by far more than 1e10).
func TestFullBatchFedAvgIsGradientDescent(t *testing.T) {
	const K, N, rounds = 6, 15, 500
	sets := regression(K, N, 1)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	cfg := Config{Agents: K, Participation: Full, StepSize: 0.1, Normalized: true,
		Epochs: Range{1, 1}, Batch: Range{N, N}}
	gd := []float64{0, 0}
	g := make([]float64, 2)
	var last []float64
	err := Reference(cfg, data.Sets(sets), l, []float64{0, 0}, 5, rounds, func(round int, w []float64) {
		step := []float64{0, 0}
		for _, s := range sets {
			l.FullGrad(g, gd, s)
			for j := range step {
				step[j] += g[j] / K
			}
		}
		for j := range gd {
			gd[j] -= cfg.StepSize * step[j]
			if math.Abs(w[j]-gd[j]) > 1e-12*math.Max(1, math.Abs(gd[j])) {
				t.Fatalf("round %d coordinate %d: FedAvg %v, gradient descent %v", round, j, w[j], gd[j])
			}
		}
		last = append(last[:0], w...)
	})
	if err != nil {
		t.Fatal(err)
	}
	wOpt, err := optimum.LeastSquares(sets, optimum.Uniform(K), l.Rho)
	if err != nil {
		t.Fatal(err)
	}
	for j := range wOpt {
		if math.Abs(last[j]-wOpt[j]) > 1e-10 {
			t.Errorf("after %d rounds coordinate %d is %v, w^o is %v", rounds, j, last[j], wOpt[j])
		}
	}
}

// Without noise, sharing updates ψ_k = (w_{i−1} − w_{k,E_k})/μ and applying
// w_i = w_{i−1} − μ·mean(ψ) is the same recursion as averaging models; only
// rounding differs (two extra operations per coordinate, relative error
// ~1e-16 each, amplified at most by the 200-round contraction), so 1e-12.
func TestUpdateSharingWithoutNoiseIsFedAvg(t *testing.T) {
	sets := regression(10, 20, 2)
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
	cfg := Config{Agents: 10, Participants: 3, StepSize: 0.05, Normalized: true, Epochs: Range{1, 5}, Batch: Range{1, 10}}
	models := trajectory(t, cfg, sets, l, 200)
	cfg.Share = Updates
	updates := trajectory(t, cfg, sets, l, 200)
	for i := range models {
		for j := range models[i] {
			if math.Abs(models[i][j]-updates[i][j]) > 1e-12 {
				t.Fatalf("round %d: models %v, updates %v", i+1, models[i], updates[i])
			}
		}
	}
}

func trajectory(t *testing.T, cfg Config, sets []*data.Set, l loss.Loss, rounds int) [][]float64 {
	t.Helper()
	var out [][]float64
	err := Reference(cfg, data.Sets(sets), l, make([]float64, sets[0].Dim), 11, rounds, func(_ int, w []float64) {
		out = append(out, append([]float64(nil), w...))
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The steady-state MSD of FedAvg is O(μ) (thesis Theorem 2.1, eq. 2.43): on a
// log-log plot against μ it is a line of slope 1. The slope is fitted over
// μ ∈ {0.04, 0.02, 0.01, 0.005}; each MSD is the mean over 6 runs × the last
// 3/4 of 400/μ rounds. The O(μ²) terms bend the line slightly at the large
// end, and the Monte-Carlo error of each point is a few percent (about 0.02 in
// log10), which moves the fitted slope by less than 0.05; [0.85, 1.15] is three
// times that margin.
func TestSteadyStateMSDScalesLinearlyInStepSize(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte-Carlo slope test")
	}
	const K = 20
	mus := []float64{0.04, 0.02, 0.01, 0.005}
	var logMu, logMSD []float64
	for _, mu := range mus {
		cfg := Config{Agents: K, Participants: 5, StepSize: mu, Normalized: true, Epochs: Range{1, 5}, Batch: Range{1, 10}}
		rounds := int(400 / mu)
		var sum float64
		var count int
		for run := 0; run < 6; run++ {
			seed := rng.RunSeed(1, run)
			sets := regression(K, 100, seed)
			l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.001}
			wOpt, _ := optimum.LeastSquares(sets, optimum.Uniform(K), l.Rho)
			err := Reference(cfg, data.Sets(sets), l, []float64{0, 0}, seed, rounds, func(round int, w []float64) {
				if round > rounds/4 {
					d0, d1 := w[0]-wOpt[0], w[1]-wOpt[1]
					sum += d0*d0 + d1*d1
					count++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		logMu = append(logMu, math.Log10(mu))
		logMSD = append(logMSD, math.Log10(sum/float64(count)))
	}
	_, slope := stat.LinearRegression(logMu, logMSD, nil, false)
	t.Logf("log10 MSD %v at log10 μ %v: slope %.3f", logMSD, logMu, slope)
	if slope < 0.85 || slope > 1.15 {
		t.Errorf("steady-state MSD slope in μ is %.3f, want 1 ± 0.15", slope)
	}
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
