package pld

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// DefaultMaxPoints bounds the length of every discretized distribution,
// composed or not, unless Options.MaxPoints says otherwise (2²¹ losses:
// 16 MiB, about 210 in loss at the default interval). What does not fit is
// moved pessimistically (see pmf.truncate and selfCompose), up to counting
// a whole composition at infinite loss, so the bound only costs tightness
// where ε is far beyond any meaningful value.
const DefaultMaxPoints = 1 << 21

// capLoss is the largest composed loss the accountant resolves: when all
// but a negligible mass of a composition lies above it, the composition is
// counted as infinite loss, and ε is reported as +Inf (any ε above it is a
// guarantee of nothing).
const capLoss = 500

// maxPower is the largest count composed by one power of the Fourier
// transform. Beyond it the phase k·arg F(f) loses digits (k·2⁻⁵² of a
// radian), so larger counts are composed by repeated squaring.
const maxPower = 1 << 16

// fastLen returns the smallest n ≥ m whose prime factors are 2, 3 and 5,
// the lengths gonum's FFT is fastest at.
func fastLen(m int) int {
	best := 1
	for best < m {
		best *= 2
	}
	for p5 := 1; p5 < best; p5 *= 5 {
		for p35 := p5; p35 < best; p35 *= 3 {
			n := p35
			for n < m {
				n *= 2
			}
			best = min(best, n)
		}
	}
	return best
}

// logMGF returns ln Σ_i probs[i]·e^{t·i} for |t|·len(probs) ≤ 32, where
// no term overflows: the powers e^{t·i} are accumulated by multiplication
// (relative error ≤ len·2⁻⁵², immaterial to a tail bound).
func logMGF(probs []float64, t float64) float64 {
	var s float64
	w, step := 1.0, math.Exp(t)
	for _, v := range probs {
		s += v * w
		w *= step
	}
	return math.Log(s)
}

// chernoffOrders are the t·len(probs) at which window evaluates the
// moment generating function: 2⁻⁴⁰ … 32 and their negatives (the best t
// shrinks as 1/√k for k compositions).
var chernoffOrders = func() []float64 {
	var ts []float64
	for e := -40; e <= 5; e++ {
		ts = append(ts, math.Ldexp(1, e), -math.Ldexp(1, e))
	}
	return ts
}()

// mgf returns ln M(t) at chernoffOrders, computed once per distribution.
func (p *pmf) mgf() []float64 {
	if p.logMGF == nil {
		n := float64(len(p.probs))
		for _, s := range chernoffOrders {
			p.logMGF = append(p.logMGF, logMGF(p.probs, s/n))
		}
	}
	return p.logMGF
}

// window returns losses lo ≤ hi, in units of the interval and relative to
// k·offset, between which the k-fold composition of p holds all but tail/2
// of its mass on each side, by the Chernoff bound P(S ≥ u) ≤ e^{−tu}·M(t)^k
// over a range of t (Google's dp_accounting does the same, supplementary
// material eq. 5). They are floats: for huge k they exceed any integer.
func window(p *pmf, k int64, tail float64) (lo, hi float64) {
	n := float64(len(p.probs))
	kf := float64(k)
	hi, lo = kf*(n-1), 0
	for i, lm := range p.mgf() {
		s := chernoffOrders[i] / n
		b := (kf*lm + math.Log(2/tail)) / s
		if math.IsNaN(b) || math.IsInf(b, 0) {
			continue
		}
		if s > 0 {
			hi = min(hi, math.Ceil(b))
		} else {
			lo = max(lo, math.Floor(b))
		}
	}
	return min(lo, hi), hi
}

// selfCompose returns the k-fold composition of p (k ≥ 1), truncated
// pessimistically to at most maxPoints losses.
func selfCompose(p *pmf, k int64, tail float64, maxPoints int64) *pmf {
	if k == 1 {
		return &pmf{interval: p.interval, offset: p.offset, probs: append([]float64(nil), p.probs...), inf: p.inf}
	}
	if len(p.probs) > 1 && p.inf < 1 {
		lo, hi := window(p, k, tail)
		base := float64(k) * float64(p.offset)
		switch {
		case (base+lo)*p.interval > capLoss || hi-lo+1 > float64(maxPoints):
			// All but tail/2 of the finite mass lies above capLoss, or it
			// spreads over more losses than the grid holds: count all of
			// it at +∞ (an upper bound; such a composition guarantees
			// nothing worth a number).
			return &pmf{interval: p.interval, probs: []float64{0}, inf: 1}
		case (base+hi)*p.interval <= 0 && k > maxPower:
			// All but tail/2 lies at losses ≤ 0, which no δ(ε ≥ 0) sees:
			// move it up to 0 and the rest to +∞.
			inf := -math.Expm1(float64(k) * math.Log1p(-p.inf))
			return &pmf{interval: p.interval, probs: []float64{max(0, 1-inf-tail/2)}, inf: min(1, inf+tail/2)}
		}
	}
	if k > maxPower {
		h := selfCompose(p, k/2, tail, maxPoints)
		r := convolve(h, h, tail, maxPoints)
		if k%2 == 1 {
			r = convolve(r, p, tail, maxPoints)
		}
		return r
	}
	inf := -math.Expm1(float64(k) * math.Log1p(-p.inf))
	if len(p.probs) == 1 || p.inf >= 1 {
		return &pmf{interval: p.interval, offset: k * p.offset, probs: []float64{math.Exp(float64(k) * math.Log(max(0, p.probs[0])))}, inf: inf}
	}
	lof, hif := window(p, k, tail) // within maxPoints of each other, see above
	lo, hi := int64(lof), int64(hif)
	n := fastLen(int(max(hi-lo+1, int64(len(p.probs)))))
	t := p.transform(n)
	n = t.fft.Len()
	coef := append([]complex128(nil), t.coef...)
	power(coef, float64(k))
	out := t.fft.Sequence(nil, coef)
	// The cyclic result holds every mass at its loss modulo n: take the n
	// losses from lo up. Mass below lo lands higher than it is
	// (pessimistic); mass above lo + n − 1 lands lower (optimistic), and it
	// lies above hi, so the Chernoff bound caps it at tail/2, added to +∞.
	probs := make([]float64, n)
	start := int(((lo % int64(n)) + int64(n)) % int64(n))
	for i := range probs {
		probs[i] = out[(start+i)%n] / float64(n)
	}
	clean(probs)
	r := &pmf{interval: p.interval, offset: k*p.offset + lo, probs: probs, inf: min(1, inf+tail/2)}
	r.truncate(0, int(maxPoints))
	return r
}

// transform is the Fourier transform of a distribution at one length.
type transform struct {
	fft  *fourier.FFT
	coef []complex128
}

// transform returns p's Fourier transform at length n, computed once per
// length: an accountant asked after every round transforms its round's
// distribution only when the composed length grows.
func (p *pmf) transform(n int) *transform {
	if p.fourier != nil && p.fourier.fft.Len() >= n && p.fourier.fft.Len() <= 2*n {
		return p.fourier
	}
	n = fastLen(n + n/4) // room to grow before the next transform
	fft := fourier.NewFFT(n)
	seq := make([]float64, n)
	copy(seq, p.probs)
	p.fourier = &transform{fft: fft, coef: fft.Coefficients(nil, seq)}
	return p.fourier
}

// power raises every coefficient to the k-th power in polar form,
// |c|^k·e^{ik·arg c}, flushing to zero the powers below 10⁻³⁰⁸.
func power(coef []complex128, k float64) {
	for i, c := range coef {
		r2 := real(c)*real(c) + imag(c)*imag(c)
		lr := k * math.Log(r2) / 2
		if r2 == 0 || lr < -708 {
			coef[i] = 0
			continue
		}
		sin, cos := math.Sincos(k * math.Atan2(imag(c), real(c)))
		m := math.Exp(lr)
		coef[i] = complex(m*cos, m*sin)
	}
}

// convolve returns the composition of a and b, truncated by tail and to
// maxPoints losses.
func convolve(a, b *pmf, tail float64, maxPoints int64) *pmf {
	m := len(a.probs) + len(b.probs) - 1
	var probs []float64
	if min(len(a.probs), len(b.probs)) <= 64 {
		probs = make([]float64, m)
		for i, x := range a.probs {
			if x == 0 {
				continue
			}
			for j, y := range b.probs {
				probs[i+j] += x * y
			}
		}
	} else {
		n := fastLen(m)
		fft := fourier.NewFFT(n)
		sa, sb := make([]float64, n), make([]float64, n)
		copy(sa, a.probs)
		copy(sb, b.probs)
		ca, cb := fft.Coefficients(nil, sa), fft.Coefficients(nil, sb)
		for i := range ca {
			ca[i] *= cb[i]
		}
		out := fft.Sequence(nil, ca)
		probs = out[:m]
		for i := range probs {
			probs[i] /= float64(n)
		}
		clean(probs)
	}
	r := &pmf{interval: a.interval, offset: a.offset + b.offset, probs: probs, inf: a.inf + b.inf - a.inf*b.inf}
	r.truncate(tail, int(maxPoints))
	return r
}
