package pld

import (
	"math"
	"testing"

	"maple/privacy/accountant"
)

// Issue 30: every valid input, however extreme, gets a correct ε — +Inf
// where no finite bound exists, 0 where nothing leaks — never a panic, a
// NaN or an internal error. The walk covers noise multipliers from 10⁻³⁰⁰
// to 10³⁰⁰, rates from 10⁻¹² to 1, up to 10¹⁸ rounds and δ down to
// 10⁻³⁰⁰, and checks that ε is non-increasing in z and non-decreasing in
// the rounds and the rate. Each ε is an upper bound within its
// discretization error of the true value, so two neighbours in the walk may
// be out of order by that error: 10⁻⁶ relative plus 10⁻⁹ is allowed. The
// walk uses Δ = 10⁻³ (the code paths do not depend on Δ; the grids are ten
// times shorter).
func TestExtremeInputs(t *testing.T) {
	zs := []float64{1e-300, 1e-8, 0.5, 2, 1e8, 1e300}
	qs := []float64{1e-12, 0.01, 1}
	ns := []int64{1, 100, 1e18}
	deltas := []float64{1e-300, 1e-5, 0.5}
	type key struct{ zi, qi, ni, di int }
	for _, s := range []accountant.Sampling{accountant.Poisson, accountant.FixedSize} {
		for _, r := range []accountant.Relation{accountant.AddRemove, accountant.ReplaceOne} {
			eps := map[key]float64{}
			for zi, z := range zs {
				for qi, q := range qs {
					// One discretized round per (z, q), composed for each
					// count (Compose's own path, TestRoundsAreCompose…).
					rounds, err := NewRounds(GaussianMechanism(z, q, s, r), Options{Interval: 1e-3, MaxPoints: 1 << 16})
					if err != nil {
						t.Fatalf("z = %g, q = %g, %v, %v: %v", z, q, s, r, err)
					}
					for ni, n := range ns {
						d, err := rounds.Compose(n)
						if err != nil {
							t.Fatalf("z = %g, q = %g, %d rounds, %v, %v: %v", z, q, n, s, r, err)
						}
						for di, delta := range deltas {
							e := d.Epsilon(delta)
							if math.IsNaN(e) || e < 0 {
								t.Errorf("z = %g, q = %g, %d rounds, %v, %v, δ = %g: ε = %v", z, q, n, s, r, delta, e)
							}
							eps[key{zi, qi, ni, di}] = e
						}
					}
				}
			}
			below := func(a, b float64) bool { return a <= b+1e-6*b+1e-9 || math.IsInf(b, 1) }
			for k, e := range eps {
				if k.zi+1 < len(zs) && !below(eps[key{k.zi + 1, k.qi, k.ni, k.di}], e) {
					t.Errorf("%v %v: ε grows with z at %+v: %v → %v", s, r, k, e, eps[key{k.zi + 1, k.qi, k.ni, k.di}])
				}
				if k.qi+1 < len(qs) && !below(e, eps[key{k.zi, k.qi + 1, k.ni, k.di}]) {
					t.Errorf("%v %v: ε falls with q at %+v: %v → %v", s, r, k, e, eps[key{k.zi, k.qi + 1, k.ni, k.di}])
				}
				if k.ni+1 < len(ns) && !below(e, eps[key{k.zi, k.qi, k.ni + 1, k.di}]) {
					t.Errorf("%v %v: ε falls with the rounds at %+v: %v → %v", s, r, k, e, eps[key{k.zi, k.qi, k.ni + 1, k.di}])
				}
			}
			// Where it must be: no noise to speak of at q = 1 leaves no
			// finite ε at δ = 1e-5; overwhelming noise leaves ε = 0.
			if e := eps[key{0, 2, 0, 1}]; !math.IsInf(e, 1) {
				t.Errorf("%v %v: z = 1e-300, q = 1: ε = %v, want +Inf", s, r, e)
			}
			if e := eps[key{5, 2, 1, 1}]; e != 0 {
				t.Errorf("%v %v: z = 1e300: ε = %v, want 0", s, r, e)
			}
		}
	}
}
