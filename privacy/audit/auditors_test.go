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
	if got, want := l.Divergence(laws), 26.0/8; got != want { // every term and sum is a short binary fraction: exact
		t.Errorf("divergence %g, want %g", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("Score of a round not scored did not panic")
		}
	}()
	l.Score(3, "round")
}

func TestModelScoresWhatTheViewReveals(t *testing.T) {
	mu0, mu1 := []float64{0, 0}, []float64{1, 2}
	msgs := [][]float64{{0.5, 1}, {3, 4}, {-1, 0}}
	obs := func(k int) []float64 { return msgs[k] }
	yhat := make([]float64, 2)

	plain := PlainModel(1)
	// ½(‖(3,4)‖² − ‖(2,2)‖²) = ½(25 − 8), to a few ulps (RevealedScore
	// squares a square root).
	if got := plain.Score(obs, yhat, mu0, mu1); math.Abs(got-8.5) > 1e-12 || !plain.Revealed() || !math.IsInf(plain.Draws(1), 1) {
		t.Errorf("plain link 1: score %g, revealed %v, draws %g; want 8.5, true, +Inf", got, plain.Revealed(), plain.Draws(1))
	}

	// One draw g times 2 on link 0 and −1 on link 1: y = (c₁x₀ − c₀x₁)/(c₁ − c₀)
	// = (−(0.5, 1) − 2(3, 4))/(−3) = (6.5, 9)/3.
	pairModel := MultiplesModel(LaplaceNoise(1), []float64{2, -1, 2})
	pair, coef := pairModel.Pair()
	if !pairModel.Revealed() || pairModel.Shared() || pair != [2]int{0, 1} || coef != [2]float64{2, -1} {
		t.Fatalf("multiples 2, −1: revealed %v, shared %v, pair %v %v", pairModel.Revealed(), pairModel.Shared(), pair, coef)
	}
	y := []float64{6.5 / 3, 9.0 / 3}
	// Exact: −6.5/−3 and −9/−3 round as 6.5/3 and 9/3 do.
	if got, want := pairModel.Score(obs, yhat, mu0, mu1), RevealedScore(y, mu0, mu1); got != want || !slices.Equal(yhat, y) {
		t.Errorf("multiples 2, −1: score %g, want %g (ŷ %v, want %v)", got, want, yhat, y)
	}

	// Equal coefficients: one draw of law 2·Laplace read on link 0.
	shared := MultiplesModel(LaplaceNoise(1), []float64{2, 2, 2})
	law := LaplaceNoise(1).Scaled(2)
	if !shared.Shared() || shared.Revealed() || len(shared.Laws()) != 1 || shared.Laws()[0].String() != law.String() {
		t.Fatalf("multiples 2, 2, 2: shared %v, revealed %v, laws %v", shared.Shared(), shared.Revealed(), shared.Laws())
	}
	if got, want := shared.Score(obs, yhat, mu0, mu1), IndependentScore([]Noise{law}, msgs[:1], mu0, mu1); got != want {
		t.Errorf("shared draw: score %g, want %g", got, want)
	}

	laws := []Noise{GaussianNoise(1), GaussianNoise(2)}
	independent := IndependentModel(laws)
	if got, want := independent.Score(obs, yhat, mu0, mu1), IndependentScore(laws, msgs[:2], mu0, mu1); got != want {
		t.Errorf("independent draws: score %g, want %g", got, want)
	}
	// Draws of σ = 2: (2/1)² + (2/2)².
	if got := independent.Draws(2); got != 5 {
		t.Errorf("independent draws worth %g draws of σ = 2, want 5", got)
	}

	yhat = []float64{1, 2}
	replayed := ReplayedModel()
	// ½(5 − 0), to a few ulps: RevealedScore squares a square root.
	if got := replayed.Score(obs, yhat, mu0, mu1); math.Abs(got-2.5) > 1e-12 {
		t.Errorf("replayed value at μ₁: score %g, want 2.5", got)
	}
}
