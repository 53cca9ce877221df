package audit

import (
	"math"
	"slices"
	"testing"
)

func TestParseViewRoundTrips(t *testing.T) {
	for _, name := range ViewNames() {
		v, err := ParseView(name)
		if err != nil || v.String() != name {
			t.Errorf("ParseView(%q) = %v, %v", name, v, err)
		}
	}
	if names := ViewNames(); !slices.Equal(names, []string{"wire", "network"}) {
		t.Errorf("ViewNames() = %v, want the wire view first", names)
	}
	if _, err := ParseView("radio"); err == nil {
		t.Error("ParseView accepted an unknown view")
	}
}

func TestLinksNumberTheView(t *testing.T) {
	// 0 → 1, 2; 1 → 0; 2 → 0, 1.
	receivers := [][]int{{1, 2}, {0}, {0, 1}}
	wire := NewLinks(WireView, 0, receivers)
	if wire.Len() != 2 || wire.Index(0, 1) != 0 || wire.Index(0, 2) != 1 {
		t.Errorf("wire view: %d links, 0→1 is %d, 0→2 is %d; want 2, 0, 1", wire.Len(), wire.Index(0, 1), wire.Index(0, 2))
	}
	if wire.Index(1, 0) != -1 || wire.Index(2, 1) != -1 {
		t.Error("the wire view holds another sender's link")
	}
	network := NewLinks(NetworkView, 0, receivers)
	want := map[[2]int]int{{0, 1}: 0, {0, 2}: 1, {1, 0}: 2, {2, 0}: 3, {2, 1}: 4}
	if network.Len() != len(want) {
		t.Errorf("network view: %d links, want %d", network.Len(), len(want))
	}
	for m := -1; m <= 3; m++ {
		for p := -1; p <= 3; p++ {
			w, ok := want[[2]int{m, p}]
			if !ok {
				w = -1
			}
			if got := network.Index(m, p); got != w {
				t.Errorf("network view: link %d → %d is %d, want %d", m, p, got, w)
			}
		}
	}
}

func TestTallySumsScoresAndShifts(t *testing.T) {
	l := NewTally()
	if l.Scored() != 0 || l.Score(0, "round") != 0 || l.Sensitivity() != 0 {
		t.Fatalf("an empty tally: scored %d, score %g, sensitivity %g", l.Scored(), l.Score(0, "round"), l.Sensitivity())
	}
	l.Shift([]float64{1, 1}, []float64{4, 5}) // shift (3, 4): norm 5
	l.Add(0.5)
	l.Shift([]float64{0, 0}, []float64{-1, 0}) // shift (−1, 0): norm 1
	l.Add(-2)
	if l.Scored() != 2 || l.Score(1, "round") != 0.5 || l.Score(2, "round") != -1.5 {
		t.Errorf("scored %d, scores %g, %g; want 2, 0.5, −1.5", l.Scored(), l.Score(1, "round"), l.Score(2, "round"))
	}
	if l.Sensitivity() != 5 {
		t.Errorf("sensitivity %g, want 5", l.Sensitivity())
	}
	// Gaussian noise of σ = 2: KL of a shift d is d²/(2σ²) per coordinate,
	// so (9 + 16 + 1)/8 over the two shifts.
	laws := []Noise{GaussianNoise(2)}
	if got, want := l.Divergence(laws), 26.0/8; math.Abs(got-want) > 1e-15 {
		t.Errorf("divergence %g, want %g", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("Score of a round not scored did not panic")
		}
	}()
	l.Score(3, "round")
}
