package accountant

import (
	"math"
	"slices"
	"testing"
)

// Issue 30: the Rényi accountant's entry points give a correct, possibly
// infinite, ε for every valid input — z from 10⁻³⁰⁰ to 10³⁰⁰, q from 10⁻¹²
// to 1, up to 10¹⁸ steps, δ down to 10⁻³⁰⁰ — never a panic or NaN (the
// fractional-order series used to panic "did not converge" at z = 1e-300),
// and ε is non-increasing in z and non-decreasing in steps and q. Each ε
// minimizes over the same orders bounds that are monotone in each argument,
// so the order is exact up to rounding: 1e-9 relative.
func TestRDPExtremeInputs(t *testing.T) {
	zs := []float64{1e-300, 1e-8, 0.5, 2, 1e8, 1e300}
	qs := []float64{1e-12, 0.01, 0.5, 1}
	ns := []int{1, 1000, 1e18}
	below := func(a, b float64) bool { return a <= b*(1+1e-9)+1e-300 || math.IsInf(b, 1) }
	orders := DefaultOrders()
	for _, s := range []Sampling{Poisson, FixedSize} {
		// One step's RDP at every order, for each (z, q): the steps only
		// multiply it (SubsampledGaussian.RDP), so the conversions of every
		// step count and δ below read the same table — what Epsilon does,
		// which the first count at δ = 10⁻⁵ checks.
		one := map[[2]int][]float64{}
		for zi, z := range zs {
			for qi, q := range qs {
				g := SubsampledGaussian{Rate: q, NoiseMultiplier: z, Steps: 1, Sampling: s}
				r := make([]float64, len(orders))
				for i, a := range orders {
					r[i] = g.RDP(a)
				}
				one[[2]int{zi, qi}] = r
			}
		}
		for _, delta := range []float64{1e-300, 1e-5} {
			eps := map[[3]int]float64{}
			for zi, z := range zs {
				for qi, q := range qs {
					r := one[[2]int{zi, qi}]
					for ni, n := range ns {
						e, _ := BestEpsilon(orders, func(a float64) float64 {
							return float64(n) * r[slices.Index(orders, a)]
						}, delta, Balle2020)
						if ni == 0 && delta == 1e-5 {
							// Epsilon itself, which computes the table
							// afresh, reads the same ε.
							if got, _ := (SubsampledGaussian{Rate: q, NoiseMultiplier: z, Steps: n, Sampling: s}).Epsilon(delta, Balle2020); got != e && !(math.IsNaN(got) && math.IsNaN(e)) {
								t.Errorf("%v z = %g q = %g: Epsilon %v, from the table %v", s, z, q, got, e)
							}
						}
						if math.IsNaN(e) || e < 0 {
							t.Errorf("%v z = %g q = %g n = %d δ = %g: ε = %v", s, z, q, n, delta, e)
						}
						eps[[3]int{zi, qi, ni}] = e
					}
				}
			}
			for k, e := range eps {
				if k[0]+1 < len(zs) && !below(eps[[3]int{k[0] + 1, k[1], k[2]}], e) {
					t.Errorf("%v δ = %g: ε grows with z at %v", s, delta, k)
				}
				if k[1]+1 < len(qs) && !below(e, eps[[3]int{k[0], k[1] + 1, k[2]}]) {
					t.Errorf("%v δ = %g: ε falls with q at %v: %v → %v", s, delta, k, e, eps[[3]int{k[0], k[1] + 1, k[2]}])
				}
				if k[2]+1 < len(ns) && !below(e, eps[[3]int{k[0], k[1], k[2] + 1}]) {
					t.Errorf("%v δ = %g: ε falls with the steps at %v", s, delta, k)
				}
			}
			if e := eps[[3]int{0, 3, 0}]; !math.IsInf(e, 1) {
				t.Errorf("%v: z = 1e-300 at q = 1: ε = %v, want +Inf", s, e)
			}
		}
	}
	// The fractional orders alone, where the series failed.
	for _, z := range zs {
		for _, q := range qs {
			for _, a := range []float64{1.1, 2.5, 10.9} {
				if r := PoissonGaussianRDP(a, q, z); math.IsNaN(r) || r < 0 {
					t.Errorf("α = %g, q = %g, z = %g: %v", a, q, z, r)
				}
			}
		}
	}
	if _, err := NoiseMultiplier(DPSGD(60000, 256, 1, 1, Poisson), 1, 1e-300, Balle2020); err != nil {
		t.Errorf("δ = 1e-300: %v", err)
	}
}
