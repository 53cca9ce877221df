package audit

import (
	"math"
	"testing"

	"maple/privacy/noise"
)

func TestGraphModelOfEachNoise(t *testing.T) {
	law := LaplaceNoise(1)
	receivers := []int{3, 5, 8}
	noMask := func(int) Noise { t.Fatal("Mask called where the model does not read the masks' law"); return Noise{} }

	clear := GraphModel(GraphExchange{Noise: Clear, Receivers: receivers})
	if !clear.Revealed() || clear.Plain() != 0 {
		t.Errorf("clear: revealed %v on link %d, want true on link 0", clear.Revealed(), clear.Plain())
	}

	perLink := GraphModel(GraphExchange{Noise: PerLink, Receivers: receivers, Law: law})
	if perLink.Revealed() || len(perLink.Laws()) != 3 || perLink.Laws()[2].String() != law.String() {
		t.Errorf("per link: revealed %v, laws %v; want three of %v", perLink.Revealed(), perLink.Laws(), law)
	}

	broadcast := GraphModel(GraphExchange{Noise: Broadcast, Receivers: receivers, Law: law})
	if broadcast.Revealed() || len(broadcast.Laws()) != 1 {
		t.Errorf("broadcast: revealed %v, laws %v; want the one draw", broadcast.Revealed(), broadcast.Laws())
	}

	coef := map[int]float64{3: 2, 5: 2, 8: -1}
	multiples := GraphModel(GraphExchange{Noise: Multiples, Receivers: receivers, Law: law, Coefficient: func(r int) float64 { return coef[r] }})
	if pair, c := multiples.Pair(); !multiples.Revealed() || pair != [2]int{0, 2} || c != [2]float64{2, -1} {
		t.Errorf("multiples 2, 2, −1: revealed %v by links %v %v; want links 0 and 2, coefficients 2 and −1", multiples.Revealed(), pair, c)
	}
	coef[8] = 2
	if shared := GraphModel(GraphExchange{Noise: Multiples, Receivers: receivers, Law: law, Coefficient: func(r int) float64 { return coef[r] }}); !shared.Shared() {
		t.Error("multiples 2, 2, 2: not one shared draw")
	}

	maskable := func(r int) bool { return r != 5 }
	if m := GraphModel(GraphExchange{Noise: PairMasks, View: NetworkView, Receivers: receivers, Maskable: maskable, Mask: noMask}); m.Plain() != 1 {
		t.Errorf("masks, receiver 5 cannot mask: plain link %d, want 1", m.Plain())
	}
	all := func(int) bool { return true }
	if m := GraphModel(GraphExchange{Noise: PairMasks, View: NetworkView, Receivers: receivers, Maskable: all, Mask: noMask}); !m.Revealed() || m.Plain() != -1 {
		t.Errorf("masks, network view: revealed %v, plain link %d; want the replayed value", m.Revealed(), m.Plain())
	}
	mask := func(r int) Noise { return LaplaceSumNoise(2, 1, float64(r)) }
	wire := GraphModel(GraphExchange{Noise: PairMasks, View: WireView, Receivers: receivers, Maskable: all, Mask: mask})
	if wire.Revealed() || len(wire.Laws()) != 3 || wire.Laws()[1].String() != mask(5).String() {
		t.Errorf("masks, wire view: revealed %v, laws %v; want the masks' law of each link", wire.Revealed(), wire.Laws())
	}
}

func TestModelDivergence(t *testing.T) {
	tally := NewTally()
	revealed := PlainModel(0)
	if got := revealed.Divergence(&tally, true); got != 0 {
		t.Errorf("nothing scored: divergence %g, want 0", got)
	}
	tally.Shift([]float64{0, 0}, []float64{1, 2})
	tally.Add(0)
	if got := revealed.Divergence(&tally, true); !math.IsInf(got, 1) {
		t.Errorf("revealed, exact predictions: divergence %g, want +Inf", got)
	}
	if got := revealed.Divergence(&tally, false); !math.IsNaN(got) {
		t.Errorf("revealed, approximate predictions: divergence %g, want NaN", got)
	}
	laws := []Noise{GaussianNoise(1), GaussianNoise(2)}
	independent := IndependentModel(laws)
	// Gaussian: Σ_k Σ_c d_c²/(2σ_k²) = 5/2 + 5/8, exact in binary.
	if got := independent.Divergence(&tally, false); got != 5.0/2+5.0/8 {
		t.Errorf("independent Gaussian draws: divergence %g, want %g", got, 5.0/2+5.0/8)
	}
}

func TestMechanismNoise(t *testing.T) {
	if got, want := MechanismNoise(noise.Gaussian, 2), GaussianNoise(2); got.String() != want.String() {
		t.Errorf("Gaussian: %v, want %v", got, want)
	}
	if got, want := MechanismNoise(noise.Laplace, 2), LaplaceNoise(2); got.String() != want.String() {
		t.Errorf("Laplace: %v, want %v", got, want)
	}
}
