package scatter

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// gaussianHat is the closed form of the transform of a Gabor function
// sampled on the integers: by Poisson's summation formula, the sum over the
// aliases ω + 2πk of the continuous transform exp(−(ω−ξ)ᵀA⁻¹(ω−ξ)/4) (the
// 2πσ²/s normalization makes its peak 1), A⁻¹ = 2σ² R diag(1, 1/s²) Rᵀ.
// Aliases beyond |k| = 3 weigh below exp(−(6π − π)²σ²/2) < 10⁻⁸⁵ at σ ≥ 0.8.
func gaussianHat(w1, w2, sigma, theta, xi, slant float64) float64 {
	c, s := math.Cos(theta), math.Sin(theta)
	var sum float64
	for k1 := -3; k1 <= 3; k1++ {
		for k2 := -3; k2 <= 3; k2++ {
			a := w1 + 2*math.Pi*float64(k1) - xi*c
			b := w2 + 2*math.Pi*float64(k2) - xi*s
			// Rotate into the filter's axes: u along θ, v across.
			u, v := c*a+s*b, -s*a+c*b
			sum += math.Exp(-2 * sigma * sigma * (u*u + v*v/(slant*slant)) / 4)
		}
	}
	return sum
}

// The filters' transforms equal their closed forms: φ̂ the aliased Gaussian
// of DC gain 1 and ψ̂ = Ĝ(ω − ξ) − K Ĝ(ω) with K = Ĝ(−ξ)/Ĝ(0), so that
// ψ̂(0) = 0. The sampled filters are periodized over 5 periods of a grid of
// 36, whose truncation weighs exp(−(2.5·36)²/(2·3.2²)) ≈ 0: the match is to
// round-off, 10⁻¹² absolute on values of order 1.
func TestFiltersMatchTheirClosedForms(t *testing.T) {
	tr, err := New(28, 28, Config{J: 2, L: 8, Order: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, q := tr.p, tr.q
	freq := func(i, n int) float64 {
		if i > n/2 {
			i -= n
		}
		return 2 * math.Pi * float64(i) / float64(n)
	}
	const tol = 1e-12
	for i := range p {
		for k := range q {
			w1, w2 := freq(i, p), freq(k, q)
			want := gaussianHat(w1, w2, 1.6, 0, 0, 1) / gaussianHat(0, 0, 1.6, 0, 0, 1)
			if got := tr.phiRows[0][i] * tr.phiCols[0][k]; math.Abs(got-want) > tol {
				t.Fatalf("φ̂(%d, %d) = %v, closed form %v", i, k, got, want)
			}
			for n, wv := range tr.wavelets {
				l := n % 8
				theta := float64(8-4-1-l) * math.Pi / 8
				sigma, xi := 0.8*math.Exp2(float64(wv.j)), 0.75*math.Pi/math.Exp2(float64(wv.j))
				K := gaussianHat(0, 0, sigma, theta, xi, 0.5) / gaussianHat(0, 0, sigma, theta, 0, 0.5)
				want := gaussianHat(w1, w2, sigma, theta, xi, 0.5) - K*gaussianHat(w1, w2, sigma, theta, 0, 0.5)
				if got := wv.hat[0][i*q+k]; math.Abs(got-want) > tol {
					t.Fatalf("ψ̂_%d(%d, %d) = %v, closed form %v", n, i, k, got, want)
				}
			}
		}
	}
	if dc := tr.phiRows[0][0] * tr.phiCols[0][0]; dc != 1 {
		t.Errorf("φ̂(0) = %v, want 1", dc)
	}
	for n, wv := range tr.wavelets {
		if math.Abs(wv.hat[0][0]) > tol {
			t.Errorf("ψ̂_%d(0) = %v, want 0 (zero mean)", n, wv.hat[0][0])
		}
	}
}

// The Littlewood–Paley sum A(ω) = |φ̂(ω)|² + ½ Σ_λ (|ψ̂_λ(ω)|² + |ψ̂_λ(−ω)|²)
// (the L orientations cover half a turn; ψ(−ω) covers the other half) is
// bounded: A ≤ 1 makes the wavelet transform contractive, and A bounded
// below on the band the filters cover makes it lose no frequency there.
// For J = 2, L = 8 the sum peaks at ω = 0 (φ̂ = 1, every ψ̂ = 0) and stays
// below it elsewhere; its minimum on the disc |ω| ≤ 3π/4, the finest
// wavelet's centre frequency, is 0.594 (between the two scales' bands). The
// test pins A ≤ 1 + 10⁻¹² everywhere and A ≥ 0.5 on that disc.
func TestLittlewoodPaleySumIsBounded(t *testing.T) {
	tr, err := New(28, 28, Config{J: 2, L: 8, Order: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, q := tr.p, tr.q
	lo, hi := math.Inf(1), 0.0
	for i := range p {
		for k := range q {
			neg := ((p-i)%p)*q + (q-k)%q
			phi := tr.phiRows[0][i] * tr.phiCols[0][k]
			a := phi * phi
			for _, wv := range tr.wavelets {
				a += (wv.hat[0][i*q+k]*wv.hat[0][i*q+k] + wv.hat[0][neg]*wv.hat[0][neg]) / 2
			}
			hi = max(hi, a)
			fi, fk := float64(min(i, p-i))/float64(p), float64(min(k, q-k))/float64(q)
			if 2*math.Pi*math.Hypot(fi, fk) <= 0.75*math.Pi {
				lo = min(lo, a)
			}
		}
	}
	t.Logf("Littlewood–Paley sum: max %.12f, min %.4f on |ω| ≤ 3π/4", hi, lo)
	if hi > 1+1e-12 || lo < 0.5 {
		t.Errorf("Littlewood–Paley sum: max %v (want ≤ 1), min %v on |ω| ≤ 3π/4 (want ≥ 0.5)", hi, lo)
	}
}

// reference computes the transform of img in the spatial domain, the
// definitions of the package comment with none of the Fourier-domain
// shortcuts: the filters of each resolution brought to space by a direct
// inverse DFT, circular convolutions as sums, subsampling by keeping every
// 2^k-th sample.
func reference(tr *Transform, img []float64) []float64 {
	J := tr.cfg.J
	size := func(r int) (int, int) { return tr.p >> r, tr.q >> r }
	spatial := func(hat []float64, r int) []complex128 {
		p, q := size(r)
		f := make([]complex128, p*q)
		for a := range p {
			for b := range q {
				var s complex128
				for i := range p {
					for k := range q {
						s += complex(hat[i*q+k], 0) * cmplx.Exp(complex(0, 2*math.Pi*(float64(i*a)/float64(p)+float64(k*b)/float64(q))))
					}
				}
				f[a*q+b] = s / complex(float64(p*q), 0)
			}
		}
		return f
	}
	conv := func(x, f []complex128, r int) []complex128 {
		p, q := size(r)
		y := make([]complex128, p*q)
		for a := range p {
			for b := range q {
				var s complex128
				for i := range p {
					for k := range q {
						s += x[i*q+k] * f[((a-i+p)%p)*q+(b-k+q)%q]
					}
				}
				y[a*q+b] = s
			}
		}
		return y
	}
	down := func(x []complex128, r, k int) []complex128 {
		p, q := size(r)
		y := make([]complex128, 0, p*q)
		for a := 0; a < p; a += 1 << k {
			for b := 0; b < q; b += 1 << k {
				y = append(y, x[a*q+b])
			}
		}
		return y
	}
	abs := func(x []complex128) []complex128 {
		for i, v := range x {
			x[i] = complex(cmplx.Abs(v), 0)
		}
		return x
	}
	var out []float64
	low := func(u []complex128, r int) {
		p, q := size(r)
		phi := make([]float64, p*q)
		for i := range p {
			for k := range q {
				phi[i*q+k] = tr.phiRows[r][i] * tr.phiCols[r][k]
			}
		}
		y := down(conv(u, spatial(phi, r), r), r, J-r)
		_, qj := size(J)
		for a := 1; a <= tr.oh; a++ {
			for b := 1; b <= tr.ow; b++ {
				out = append(out, real(y[a*qj+b]))
			}
		}
	}
	// Reflection padding, written as a fold: |i| mirrored at the far edge.
	x := make([]complex128, tr.p*tr.q)
	fold := func(i, n int) int {
		i = int(math.Abs(float64(i)))
		if i > n-1 {
			i = 2*(n-1) - i
		}
		return i
	}
	for a := range tr.p {
		for b := range tr.q {
			x[a*tr.q+b] = complex(img[fold(a-tr.top, tr.h)*tr.w+fold(b-tr.left, tr.w)], 0)
		}
	}
	low(x, 0)
	u1 := make([][]complex128, len(tr.wavelets))
	for n, wv := range tr.wavelets {
		u1[n] = abs(down(conv(x, spatial(wv.hat[0], 0), 0), 0, wv.j))
		low(u1[n], wv.j)
	}
	if tr.cfg.Order == 2 {
		for n1, w1 := range tr.wavelets {
			for _, w2 := range tr.wavelets {
				if w2.j > w1.j {
					u2 := abs(down(conv(u1[n1], spatial(w2.hat[w1.j], w1.j), w1.j), w1.j, w2.j-w1.j))
					low(u2, w2.j)
				}
			}
		}
	}
	return out
}

// On a tiny image the Fourier-domain transform equals the spatial-domain
// reference to 10⁻¹⁰ (the round-off of sums of a few hundred terms of order
// 1 is about 10⁻¹³), for both orders and with a non-square image.
func TestApplyMatchesTheSpatialReference(t *testing.T) {
	for _, c := range []struct {
		h, w int
		cfg  Config
	}{
		{8, 8, Config{J: 2, L: 4, Order: 2}},
		{6, 9, Config{J: 1, L: 3, Order: 1}},
		{9, 5, Config{J: 2, L: 2, Order: 2}},
	} {
		tr, err := New(c.h, c.w, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(1, 2))
		img := make([]float64, c.h*c.w)
		for i := range img {
			img[i] = r.Float64()
		}
		got := make([]float64, tr.Features())
		if err := tr.Apply(got, img, tr.NewWorkspace()); err != nil {
			t.Fatal(err)
		}
		want := reference(tr, img)
		if len(want) != len(got) {
			t.Fatalf("%dx%d %+v: reference has %d coefficients, Apply %d", c.h, c.w, c.cfg, len(want), len(got))
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-10 {
				t.Fatalf("%dx%d %+v: coefficient %d = %v, reference %v", c.h, c.w, c.cfg, i, got[i], want[i])
			}
		}
	}
}

// blob is a 28×28 test image: a bright ellipse with a texture, off the
// borders so that shifting it by a few pixels is a translation.
func blob(dx, dy int) []float64 {
	img := make([]float64, 28*28)
	for i := range 28 {
		for k := range 28 {
			y, x := float64(i-14-dy), float64(k-14-dx)
			if x*x/36+y*y/81 < 1 {
				img[i*28+k] = 0.5 + 0.5*math.Sin(x*1.3+y*0.7)
			}
		}
	}
	return img
}

func dist(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return math.Sqrt(s)
}

// A 28×28 image gives 81 channels of 7×7 at J = 2, L = 8; shifting it by
// one pixel, well within 2^J = 4, moves its scattering coefficients by a
// small fraction of their norm, while it moves the pixels by most of
// theirs. The scattering transform's deformation bound (Mallat 2012),
// ‖Sx − Sx(· − τ)‖ ≤ C 2^(−J)|τ| ‖x‖, gives a relative change of order
// |τ|/2^J = 1/4 with C of order 1; measured it is 0.22 for the
// coefficients against 0.80 for the pixels. The test asks for below 0.3
// and for at most half the pixels' change.
func TestShapeAndTranslationInvariance(t *testing.T) {
	tr, err := New(28, 28, Config{J: 2, L: 8, Order: 2})
	if err != nil {
		t.Fatal(err)
	}
	if c, oh, ow := tr.Shape(); c != 81 || oh != 7 || ow != 7 || tr.Features() != 3969 {
		t.Fatalf("shape %d×%d×%d (%d features), want 81×7×7 (3969)", c, oh, ow, tr.Features())
	}
	ws := tr.NewWorkspace()
	s0, s1 := make([]float64, tr.Features()), make([]float64, tr.Features())
	x0, x1 := blob(0, 0), blob(1, 0)
	if err := tr.Apply(s0, x0, ws); err != nil {
		t.Fatal(err)
	}
	if err := tr.Apply(s1, x1, ws); err != nil {
		t.Fatal(err)
	}
	var n0, p0 float64
	for i := range s0 {
		n0 += s0[i] * s0[i]
	}
	for i := range x0 {
		p0 += x0[i] * x0[i]
	}
	rs, rp := dist(s0, s1)/math.Sqrt(n0), dist(x0, x1)/math.Sqrt(p0)
	t.Logf("relative change under a 1-pixel shift: coefficients %.3f, pixels %.3f", rs, rp)
	if rs > 0.3 || 2*rs > rp {
		t.Errorf("relative change under a 1-pixel shift: coefficients %v, pixels %v", rs, rp)
	}
}

// Group normalization leaves every group of mean 0 and of variance
// v/(v + 10⁻⁵) for its variance v before.
func TestGroupNormalization(t *testing.T) {
	tr, err := New(28, 28, Config{J: 2, L: 8, Order: 2, Groups: 27})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := New(28, 28, Config{J: 2, L: 8, Order: 2})
	f, g := make([]float64, tr.Features()), make([]float64, tr.Features())
	ws := tr.NewWorkspace()
	if err := tr.Apply(f, blob(0, 0), ws); err != nil {
		t.Fatal(err)
	}
	if err := plain.Apply(g, blob(0, 0), plain.NewWorkspace()); err != nil {
		t.Fatal(err)
	}
	size := len(f) / 27
	for k := range 27 {
		var m, v, m0, v0 float64
		for _, x := range f[k*size : (k+1)*size] {
			m += x
		}
		for _, x := range g[k*size : (k+1)*size] {
			m0 += x
		}
		m, m0 = m/float64(size), m0/float64(size)
		for i := k * size; i < (k+1)*size; i++ {
			v += (f[i] - m) * (f[i] - m)
			v0 += (g[i] - m0) * (g[i] - m0)
		}
		v, v0 = v/float64(size), v0/float64(size)
		if want := v0 / (v0 + groupEpsilon); math.Abs(m) > 1e-12 || math.Abs(v-want) > 1e-12 {
			t.Errorf("group %d: mean %v, variance %v, want 0 and %v", k, m, v, want)
		}
	}
}

// Configurations out of range and images too small are errors, not panics.
func TestConfigErrors(t *testing.T) {
	for _, c := range []Config{
		{J: 0, L: 8, Order: 2}, {J: 7, L: 8, Order: 2}, {J: 2, L: 0, Order: 2}, {J: 2, L: 17, Order: 2},
		{J: 2, L: 8, Order: 3}, {J: 2, L: 8, Order: 0}, {J: 2, L: 8, Order: 2, Groups: 2}, {J: 2, L: 8, Order: 2, Groups: -1},
	} {
		if _, err := New(28, 28, c); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if _, err := New(4, 28, Config{J: 2, L: 8, Order: 2}); err == nil {
		t.Error("a 4-pixel side at J = 2: no error")
	}
	tr, _ := New(8, 8, Config{J: 1, L: 2, Order: 1})
	if err := tr.Apply(make([]float64, tr.Features()), make([]float64, 63), tr.NewWorkspace()); err != ErrSize {
		t.Errorf("a short image: %v", err)
	}
}

// BenchmarkApply is the transform of one 28×28 image at J = 2, L = 8.
func BenchmarkApply(b *testing.B) {
	tr, _ := New(28, 28, Config{J: 2, L: 8, Order: 2, Groups: 27})
	ws := tr.NewWorkspace()
	dst, img := make([]float64, tr.Features()), blob(0, 0)
	for b.Loop() {
		_ = tr.Apply(dst, img, ws)
	}
}

// The short transforms equal gonum's FFT, for every length to 64 (radices
// 2, 3, 4 and the generic prime butterfly), forward and inverse, one
// sequence or three interleaved, to 10⁻¹²·n (round-off of sums of n terms
// of order 1).
func TestPlanMatchesGonum(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 64; n++ {
		g := fourier.NewCmplxFFT(n)
		p := newPlan(n)
		for _, w := range []int{1, 3} {
			x := make([]complex128, n*w)
			for i := range x {
				x[i] = complex(r.NormFloat64(), r.NormFloat64())
			}
			for _, inverse := range []bool{false, true} {
				got := append([]complex128(nil), x...)
				p.transform(got, make([]complex128, n*w), w, inverse)
				for c := range w {
					seq := make([]complex128, n)
					for m := range n {
						seq[m] = x[m*w+c]
					}
					want := g.Coefficients(nil, seq)
					if inverse {
						want = g.Sequence(nil, seq)
					}
					for k := range n {
						if cmplx.Abs(got[k*w+c]-want[k]) > 1e-12*float64(n) {
							t.Fatalf("n = %d, w = %d, inverse %v: coefficient %d of sequence %d = %v, gonum %v", n, w, inverse, k, c, got[k*w+c], want[k])
						}
					}
				}
			}
		}
	}
}

// Ops counts the two-dimensional transforms of an image: at J = 2, L = 8 on
// 28×28 images, one of 36² points, 8 inverse and 4.5 paired of 36², 8 + 64
// inverse of 18², at 5·n·log₂n each.
func TestOps(t *testing.T) {
	f := func(n float64) float64 { return 5 * n * math.Log2(n) }
	want := 13.5*f(36*36) + 72*f(18*18)
	if got := (Config{J: 2, L: 8, Order: 2}).Ops(28, 28); math.Abs(got-want) > 1e-6*want {
		t.Errorf("Ops = %v, want %v", got, want)
	}
	if got := (Config{J: 2, L: 8, Order: 2}).Ops(4, 28); got != 0 {
		t.Errorf("Ops of a 4-pixel side = %v, want 0", got)
	}
}
