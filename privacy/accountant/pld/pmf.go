package pld

import (
	"math"
)

// pmf is a discretized privacy loss distribution: mass probs[i] at the loss
// (offset + i)·Δ, and mass inf at +∞ (outcomes P has and Q has not, and
// everything the truncations moved there). Its hockey-stick divergence is
//
//	δ(ε) = inf + Σ_i probs[i]·(1 − e^{ε − l_i})₊.
type pmf struct {
	interval float64
	offset   int64
	probs    []float64
	inf      float64
	fourier  *transform // cached by selfCompose
	logMGF   []float64  // cached by window
}

// loss returns the loss of probs[i].
func (p *pmf) loss(i int) float64 { return float64(p.offset+int64(i)) * p.interval }

// delta returns δ(ε), summing from the largest loss down.
func (p *pmf) delta(eps float64) float64 {
	if math.IsNaN(eps) {
		return 1
	}
	d := p.inf
	for i := len(p.probs) - 1; i >= 0; i-- {
		l := p.loss(i)
		if l <= eps {
			break
		}
		d += p.probs[i] * -math.Expm1(eps-l)
	}
	return min(1, d)
}

// epsilon returns the smallest ε ≥ 0 with δ(ε) ≤ delta: +Inf when the mass
// at +∞ alone exceeds delta. Scanning the losses l_j from the largest down,
// with U_j = inf + Σ_{i≥j} p_i and S_j = Σ_{i≥j} p_i·e^{l_j − l_i}
// (S_j = p_j + e^{−Δ}·S_{j+1}, which neither overflows nor underflows at
// large losses), δ(ε) = U_{j+1} − e^{ε − l_{j+1}}·S_{j+1} on [l_j, l_{j+1}].
func (p *pmf) epsilon(delta float64) float64 {
	if p.inf > delta {
		return math.Inf(1)
	}
	u, s := p.inf, 0.0
	decay := math.Exp(-p.interval)
	for j := len(p.probs) - 1; j >= 0; j-- {
		// δ at l_j uses the masses above it: U_{j+1}, S_{j+1}·e^{−Δ}.
		if u-decay*s > delta {
			return max(0, p.loss(j+1)+math.Log((u-delta)/s))
		}
		u += p.probs[j]
		s = p.probs[j] + decay*s
	}
	if u <= delta || s == 0 {
		return 0
	}
	return max(0, p.loss(0)+math.Log((u-delta)/s))
}

// clean clamps the small negative values an FFT leaves to 0.
func clean(xs []float64) {
	for i, v := range xs {
		if !(v > 0) {
			xs[i] = 0
		}
	}
}

// truncate drops a prefix and a suffix of p.probs, each of mass at most
// tail/2, and trims it to at most maxLen entries: the prefix's mass moves
// up to the first entry kept (a loss raised: δ can only grow), the suffix's
// to +∞. Both moves keep δ(ε) an upper bound at every ε.
func (p *pmf) truncate(tail float64, maxLen int) {
	first, last := 0, len(p.probs)-1
	var low, high float64
	for first < last && low+p.probs[first] <= tail/2 {
		low += p.probs[first]
		first++
	}
	for last > first && high+p.probs[last] <= tail/2 {
		high += p.probs[last]
		last--
	}
	for last-first+1 > maxLen {
		low += p.probs[first]
		first++
	}
	kept := p.probs[first : last+1]
	kept[0] += low
	p.probs = append([]float64(nil), kept...)
	p.offset += int64(first)
	p.inf = min(1, p.inf+high)
}
