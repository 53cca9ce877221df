package pld

import "math"

// discretize returns the connect-the-dots discretization (Doroshenko,
// Ghazi, Kamath, Kumar & Manurangsi, "Connect the dots: tighter discrete
// approximations of privacy loss distributions", PoPETs 2022, Algorithm 1)
// of the pair with privacy profile f on the losses iΔ, i = lo … hi: with
// δ_i = f(iΔ), the discrete pair whose profile equals f at every grid
// point and is linear in e^ε between them. As f is convex in e^ε the chord
// lies above it, so the discrete pair dominates the original one at every
// ε, under composition too. In terms of x = e^ε, the mass at iΔ is e^{iΔ}
// times the increase of the chords' slope there:
//
//	p_lo = 1 − δ_lo + (δ_{lo+1} − δ_lo)/(e^Δ − 1)   (the first chord starts at (x, δ) = (0, 1)),
//	p_i  = ((δ_{i+1} − δ_i) − e^Δ(δ_i − δ_{i−1}))/(e^Δ − 1),
//	p_hi = (δ_hi − δ_{hi−1})/(e^{−Δ} − 1),   and mass δ_hi at +∞.
//
// Every loss below loΔ is thereby moved up to loΔ (the first chord from
// (0, 1) lies above f), which is also an upper bound.
func discretize(f profile, interval float64, lo, hi int64) *pmf {
	n := int(hi - lo + 1)
	d := make([]float64, n)
	for i := range d {
		d[i] = f.delta(float64(lo+int64(i)) * interval)
	}
	// Monotone despite rounding: δ never increases with ε.
	for i := 1; i < n; i++ {
		d[i] = min(d[i], d[i-1])
	}
	p := &pmf{interval: interval, offset: lo, probs: make([]float64, n), inf: d[n-1]}
	if n == 1 {
		p.probs[0] = 1 - d[0]
		return p
	}
	em1 := math.Expm1(interval)
	e := math.Exp(interval)
	p.probs[0] = 1 - d[0] + (d[1]-d[0])/em1
	for i := 1; i < n-1; i++ {
		p.probs[i] = ((d[i+1] - d[i]) - e*(d[i]-d[i-1])) / em1
	}
	p.probs[n-1] = (d[n-1] - d[n-2]) / math.Expm1(-interval)
	clean(p.probs)
	return p
}
