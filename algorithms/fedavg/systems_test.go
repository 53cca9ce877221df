package fedavg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
)

// The staleness weights are FedAsync's (Xie et al., 2019, §5.2): constant 1,
// polynomial (1+τ)^(−a), hinge 1 up to b and 1/(a(τ−b)+1) beyond.
func TestStalenessWeightsMatchTheirFormulas(t *testing.T) {
	for _, c := range []struct {
		s    Staleness
		tau  int
		want float64
	}{
		{Staleness{Kind: Constant}, 7, 1},
		{Staleness{Kind: Polynomial, A: 0.5}, 0, 1},
		{Staleness{Kind: Polynomial, A: 0.5}, 3, 0.5},       // 4^(−1/2)
		{Staleness{Kind: Polynomial, A: 2}, 1, 0.25},        // 2^(−2)
		{Staleness{Kind: Hinge, A: 1, B: 4}, 4, 1},          // at the knee
		{Staleness{Kind: Hinge, A: 1, B: 4}, 6, 1.0 / 3},    // 1/(1·2 + 1)
		{Staleness{Kind: Hinge, A: 0.5, B: 0}, 10, 1.0 / 6}, // 1/(0.5·10 + 1)
	} {
		if got := c.s.Weight(c.tau); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("%v(τ=%d) = %v, want %v", c.s, c.tau, got, c.want)
		}
	}
}

func TestAsyncUpdates(t *testing.T) {
	model := []float64{1, 2}
	MixAsync(model, []float64{3, 6}, Models, 0.1, 0.5, 0.5) // α·s = 0.25
	if !slices.Equal(model, []float64{1.5, 3}) {
		t.Errorf("FedAsync mix of models: %v, want [1.5 3]", model)
	}
	model = []float64{1, 2}
	MixAsync(model, []float64{10, 20}, Updates, 0.1, 1, 0.5) // w − 0.5·0.1·ψ
	if !slices.Equal(model, []float64{0.5, 1}) {
		t.Errorf("FedAsync mix of updates: %v, want [0.5 1]", model)
	}
	// FedBuff: w − η·(1/b)·Σ s·Δ, summed in agent order.
	model = []float64{0, 0}
	ApplyBuffer(model, []BufferedUpdate{{Agent: 3, Delta: []float64{2, 0}, S: 1}, {Agent: 1, Delta: []float64{0, 4}, S: 0.5}}, 2)
	if !slices.Equal(model, []float64{-2, -2}) {
		t.Errorf("FedBuff step: %v, want [-2 -2]", model)
	}
}

func TestAttacks(t *testing.T) {
	w0 := []float64{1, 1}
	reply := []float64{2, 0} // update w − w0 = (1, −1)
	SignFlip{Scale: 2}.Corrupt(reply, w0, Models, nil)
	if !slices.Equal(reply, []float64{-1, 3}) {
		t.Errorf("sign-flip ×2 of models: %v, want [-1 3]", reply)
	}
	psi := []float64{1, -2}
	Scaled{Scale: 10}.Corrupt(psi, w0, Updates, nil)
	if !slices.Equal(psi, []float64{10, -20}) {
		t.Errorf("scaled update: %v", psi)
	}
	free := []float64{9, 9}
	FreeRider{}.Corrupt(free, w0, Models, nil)
	if !slices.Equal(free, w0) || (FreeRider{}).Trains() {
		t.Errorf("free-rider model: %v", free)
	}
	FreeRider{}.Corrupt(free, w0, Updates, nil)
	if !slices.Equal(free, []float64{0, 0}) {
		t.Errorf("free-rider update: %v", free)
	}
	set := &data.Set{Dim: 1, X: []float64{1, 2}, Y: []float64{0, 2}}
	if got := (LabelFlip{}).Poison(set, loss.Loss{Kind: loss.Softmax, Classes: 3}).Y; !slices.Equal(got, []float64{2, 0}) {
		t.Errorf("flipped classes %v, want [2 0]", got)
	}
	if got := FlipLabels(set, loss.Loss{Kind: loss.LeastSquares}).Y; !slices.Equal(got, []float64{0, -2}) || set.Y[1] != 2 {
		t.Errorf("flipped targets %v (original %v)", got, set.Y)
	}
	r := rand.New(rand.NewPCG(1, 1))
	bad := Adversaries(func() *rand.Rand { return r }, 50, 0.1)
	n := 0
	for _, b := range bad {
		if b {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d adversaries of 50 at fraction 0.1, want 5", n)
	}
	// They are the first five of rand.Rand.Perm of the same stream.
	for _, k := range rand.New(rand.NewPCG(1, 1)).Perm(50)[:5] {
		if !bad[k] {
			t.Errorf("agent %d, among the first 5 of the permutation, is not an adversary", k)
		}
	}
	if Adversaries(func() *rand.Rand { panic("drawn") }, 50, 0.001) != nil {
		t.Error("a fraction that rounds to no adversary gave a list")
	}
}

// A round closed early combines the replies received; without re-weighting
// each missing reply counts as the current model (or a zero update).
func TestCloseRoundWithMissingReplies(t *testing.T) {
	for _, c := range []struct {
		share    Share
		reweight bool
		want     []float64
	}{
		{Models, true, []float64{4}},        // mean of the one reply
		{Models, false, []float64{7.0 / 3}}, // (4 + 1.5 + 1.5)/3
		{Updates, false, []float64{1.5 - 0.5*2.0/3}},
	} {
		cfg := &Config{Agents: 3, Participation: Full, StepSize: 0.5, Share: c.share, Collect: Deadline{Seconds: 1, Reweighted: c.reweight}}
		s := NewServer(cfg, []float64{1.5}, nil)
		s.Begin()
		if _, err := s.Accept(1, 1, []float64{map[Share]float64{Models: 4, Updates: 2}[c.share]}); err != nil {
			t.Fatal(err)
		}
		if n := s.Close(); n != 1 {
			t.Fatalf("Close counted %d replies", n)
		}
		s.Combine()
		if math.Abs(s.Model()[0]-c.want[0]) > 1e-15 {
			t.Errorf("%v, reweight %v: model %v, want %v", c.share, c.reweight, s.Model(), c.want)
		}
	}
	s := NewServer(&Config{Agents: 2, Participation: Full, StepSize: 1, Collect: Deadline{Seconds: 1}}, []float64{3}, nil)
	s.Begin()
	s.Close()
	s.Combine()
	if s.Model()[0] != 3 {
		t.Errorf("an empty round changed the model to %v", s.Model())
	}
}
