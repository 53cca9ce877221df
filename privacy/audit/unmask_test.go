package audit

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"maple/privacy/pairmask"
)

// keyStream is node p's key stream under seeded key randomness: a function
// of the run seed and p alone, as a run opens it.
func keyStream(p int) *rand.Rand {
	var seed [32]byte
	seed[0], seed[1] = 42, byte(p)
	return rand.New(rand.NewChaCha8(seed))
}

// maskedMessage is what the victim (node 0, role plus at receiver 1 with
// weight a) sends at a slot under local graph-homomorphic masks: y + Σ_p g_p/a
// over its partners 2 and 3, each mask g_p from the pair's secret — agreed
// from the victim's key pair victim and the partner's public key.
func maskedMessage(t *testing.T, victim *pairmask.KeyPair, y []float64, a, std float64, at pairmask.Slot) []float64 {
	t.Helper()
	x, g := slices.Clone(y), make([]float64, len(y))
	for _, p := range []int{2, 3} {
		peer, err := pairmask.NewKeyPair(keyStream(p))
		if err != nil {
			t.Fatal(err)
		}
		s, err := victim.Shared(peer.PublicBytes())
		if err != nil {
			t.Fatal(err)
		}
		pairmask.NewMaskStream(s).Fill(g, at, std)
		pairmask.ApplyMask(x, g, pairmask.Plus, a)
	}
	return x
}

// The adversary holding the run seed recomputes the victim's key pair, its
// pair secrets and its masks, and subtracts them: with seeded keys it
// recovers the victim's value exactly; with keys the victim drew from the
// operating system the masks it subtracts are not the victim's, and its
// error is that of both sets of masks together — it recovers nothing.
func TestSeedHolderUnmasksSeededKeysOnly(t *testing.T) {
	const dim, a, std = 2000, 0.25, 1.0
	r := rand.New(rand.NewPCG(1, 2))
	y := make([]float64, dim)
	for j := range y {
		y[j] = r.NormFloat64()
	}
	at := pairmask.Slot{Receiver: 1, Iteration: 7, Stage: 2}
	links := []MaskedLink{{Receiver: 1, Role: pairmask.Plus, Weight: a, Partners: []int{2, 3}}}
	u, err := NewUnmasker(links, std, SeededSecrets(0, keyStream))
	if err != nil {
		t.Fatal(err)
	}

	seeded, err := pairmask.NewKeyPair(keyStream(0))
	if err != nil {
		t.Fatal(err)
	}
	x := maskedMessage(t, seeded, y, a, std, at)
	u.Unmask(x, 0, at.Iteration, at.Stage)
	// The masks subtracted are the very floats that were added (same
	// stream, same slot), so only the rounding of y + m/a − m/a remains:
	// a few ulps of the masks, |m/a| < 4·20 here, far below 1e-12.
	for j := range y {
		if math.Abs(x[j]-y[j]) > 1e-12 {
			t.Fatalf("seeded keys: coordinate %d unmasked to %v, want %v", j, x[j], y[j])
		}
	}

	osKey, err := pairmask.NewRandomKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	x = maskedMessage(t, osKey, y, a, std, at)
	u.Unmask(x, 0, at.Iteration, at.Stage)
	var mse float64
	for j := range y {
		mse += (x[j] - y[j]) * (x[j] - y[j]) / dim
	}
	// The error per coordinate is the true masks minus unrelated ones: four
	// independent Laplace terms of variance std²/a², 64 in expectation. The
	// masks alone (the eavesdropper without the seed) give 32. Over 2000
	// coordinates the mean is within a few per cent of 64; requiring more
	// than 32 says the seed bought nothing.
	if mse < 2*std*std/(a*a) {
		t.Errorf("os keys: mean square error %v per coordinate; recovering anything would put it below the masks' own %v", mse, 2*std*std/(a*a))
	}
}
