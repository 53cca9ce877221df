package pairmask

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"maple/privacy/internal/stattest"
)

// paperPair draws fresh keys for ℓ ∈ N₊ and m ∈ N₋ from their own streams and
// returns the mask each of them computes from its keys and the other's public
// values.
func paperPair(p PaperParams, dim int, seed uint64) (atPlus, atMinus []float64) {
	kl, km := NewPaperKeys(dim), NewPaperKeys(dim)
	kl.Draw(Plus, rand.New(rand.NewPCG(seed, 1)))
	km.Draw(Minus, rand.New(rand.NewPCG(seed, 2)))
	pl, pm := make([]float64, 2*dim), make([]float64, 2*dim)
	kl.Public(pl)
	km.Public(pm)
	atPlus, atMinus = make([]float64, dim), make([]float64, dim)
	p.Mask(atPlus, kl, pm)
	p.Mask(atMinus, km, pl)
	return atPlus, atMinus
}

func TestPaperBothEndsIdentical(t *testing.T) {
	for _, p := range []PaperParams{{T: 1, Sigma: sigma}, {T: 7, Sigma: sigma}, {T: 1, Sigma: sigma, Literal: true}} {
		gl, gm := paperPair(p, 1000, 1)
		if !slices.Equal(gl, gm) {
			t.Fatalf("%+v: the two ends compute different masks", p)
		}
	}
}

// With the corrected scale σ_g/√2 the paper construction is Laplace of
// variance σ_g², for t = 1 and for a larger integer t (frac(t·U) is uniform);
// see checkLaplace for the KS and moment tolerances.
func TestPaperMaskIsLaplace(t *testing.T) {
	for _, p := range []PaperParams{{T: 1, Sigma: sigma}, {T: 7, Sigma: sigma}} {
		g, _ := paperPair(p, n, 2)
		t.Run("", func(t *testing.T) { checkLaplace(t, g, sigma) })
	}
}

// The printed scale √2/σ_g gives a Laplace of scale √2/σ_g, variance 4/σ_g²
// (400 at σ_g = 0.1) instead of σ_g²: the erratum of paper 001 eq. (54). The
// sample variance is within 5 standard errors, 4/σ_g²·√(5/n), of 4/σ_g².
func TestPaperLiteralScaleVariance(t *testing.T) {
	g, _ := paperPair(PaperParams{T: 1, Sigma: sigma, Literal: true}, n, 3)
	_, v := stattest.MeanVar(g)
	want := 4 / (sigma * sigma)
	if se := stattest.VarianceSE(want, 6, n); math.Abs(v-want) > 5*se {
		t.Fatalf("literal variance %.1f, more than 5 SE (%.1f) from 4/σ² = %.0f", v, se, want)
	}
}

// The keys have the distributions of Definition 2: U(0,1) for N₊ and
// Gamma(shape 2, rate 1) for N₋ (gonum's Beta is the rate), by KS at α = 0.001.
func TestPaperKeyDistributions(t *testing.T) {
	crit := stattest.KSCritical(2*n, alpha)
	for _, tc := range []struct {
		role Role
		cdf  func(float64) float64
	}{
		{Plus, distuv.Uniform{Min: 0, Max: 1}.CDF},
		{Minus, distuv.Gamma{Alpha: 2, Beta: 1}.CDF},
	} {
		k := NewPaperKeys(n)
		k.Draw(tc.role, rand.New(rand.NewPCG(4, 4)))
		if d := stattest.KS(slices.Clone(*k.keys.v), tc.cdf); d > crit {
			t.Errorf("%v keys: KS D = %.4f > %.4f", tc.role, d, crit)
		}
	}
}

func TestPaperParamsValidate(t *testing.T) {
	if err := (PaperParams{T: 1, Sigma: 0.1}).Validate(); err != nil {
		t.Errorf("valid parameters refused: %v", err)
	}
	for _, p := range []PaperParams{{T: 0, Sigma: 0.1}, {T: 1, Sigma: 0}, {T: 1, Sigma: math.NaN()}, {T: 1, Sigma: math.Inf(1)}} {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

func TestPaperMaskDoesNotAllocate(t *testing.T) {
	k := NewPaperKeys(8)
	k.Draw(Plus, rand.New(rand.NewPCG(5, 5)))
	peer, dst := make([]float64, 16), make([]float64, 8)
	k.Public(peer)
	p := PaperParams{T: 1, Sigma: sigma}
	if a := testing.AllocsPerRun(100, func() { p.Mask(dst, k, peer) }); a != 0 {
		t.Fatalf("Mask allocates %v times", a)
	}
}

func TestPaperKeyDrawDoesNotAllocate(t *testing.T) {
	k, r := NewPaperKeys(8), rand.New(rand.NewPCG(6, 6))
	for _, role := range []Role{Plus, Minus} {
		if a := testing.AllocsPerRun(100, func() { k.Draw(role, r) }); a != 0 {
			t.Errorf("Draw(%v) allocates %v times", role, a)
		}
	}
}
