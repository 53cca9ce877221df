package fedavg

import (
	"slices"
	"strings"
	"testing"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/privacy/noise"
)

// The auditor scores a task once both its halves are in, whatever their
// order and however far the model of a later task runs ahead, so that the
// actor engine's wiretap (which may deliver a reply's copy after the next
// round's model) and the reference engine (model, then reply) give the same
// scores bit for bit; what cannot happen on the link is an error.
func TestDatasetAuditorTakesTheHalvesOfATaskInAnyOrder(t *testing.T) {
	sets := regression(2, 12, 7)
	cfg := &Config{Agents: 3, Participants: 2, StepSize: 0.1, Epochs: Range{1, 3}, Batch: Range{2, 4}, Noise: noise.Laplace, NoiseStd: 0.3}
	l := loss.Loss{Kind: loss.LeastSquares, Rho: 0.01}
	newAuditor := func() *DatasetAuditor {
		a, err := NewDatasetAuditor(cfg, [2]*data.Set{sets[0], sets[1]}, l, 11, []float64{0.5, -0.5})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	w := [][]float64{{0, 0}, {0.3, -0.2}, {0.5, 0.1}}
	x := [][]float64{{1, 2}, {-0.5, 0.7}, {0.2, 0.2}}
	inOrder := newAuditor()
	for i := range w {
		if inOrder.Sent(i+1, 0, w[i], 0) != nil || inOrder.Replied(i+1, 0, x[i]) != nil {
			t.Fatal("in order: refused")
		}
	}
	shuffled := newAuditor()
	for _, step := range []func() error{
		func() error { return shuffled.Replied(1, 0, x[0]) },
		func() error { return shuffled.Sent(1, 0, w[0], 0) },
		func() error { return shuffled.Sent(2, 0, w[1], 0) },
		func() error { return shuffled.Sent(3, 0, w[2], 0) },
		func() error { return shuffled.Replied(3, 0, x[2]) },
		func() error { return shuffled.Replied(2, 0, x[1]) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := shuffled.Finish(); err != nil {
		t.Fatal(err)
	}
	if got, want := shuffled.Tasks(), inOrder.Tasks(); len(want) != 3 || !slices.Equal(got, want) {
		t.Errorf("shuffled %v, in order %v", got, want)
	}
	if s := inOrder.Score(2); s != inOrder.Tasks()[0].Score+inOrder.Tasks()[1].Score {
		t.Errorf("score after round 2: %v, tasks %v", s, inOrder.Tasks())
	}

	a := newAuditor()
	for _, c := range []struct {
		err  error
		want string
	}{
		{a.Sent(1, 0, []float64{1, 2, 3}, 0), "dimension 3"},
		{a.Sent(1, 0, w[0], 0), ""},
		{a.Sent(1, 0, w[0], 0), "a second model"},
		{a.Finish(), "never replied"},
		{a.Replied(1, 0, x[0]), ""},
		{a.Replied(2, 1, x[1]), ""},
		{a.Finish(), "replied in round 2 (slot 1) to no model"},
		{a.Sent(2, 1, w[1], 0), ""},
		{a.Sent(1, 1, w[0], 0), "round 1 after round 2"},
	} {
		if c.want == "" && c.err != nil || c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)) {
			t.Errorf("%v, want %q", c.err, c.want)
		}
	}
}
