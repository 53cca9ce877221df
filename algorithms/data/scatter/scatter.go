// Package scatter computes the wavelet scattering transform of images
// (Bruna & Mallat 2013) as Kymatio's Scattering2D defines it, the fixed
// "ScatterNet" features of Oyallon & Mallat (2015) that Tramèr & Boneh
// (ICLR 2021) train private linear models on:
//
//	S₀x       = (x ⋆ φ_J)(2^J u)
//	S₁x[λ₁]   = (|x ⋆ ψ_λ₁| ⋆ φ_J)(2^J u)
//	S₂x[λ₁λ₂] = (||x ⋆ ψ_λ₁| ⋆ ψ_λ₂| ⋆ φ_J)(2^J u),   j₂ > j₁
//
// for the Morlet wavelets ψ_λ, λ = (j, θ), of scales 2^j, j = 0 … J−1, and
// L orientations θ over half a turn, and the Gaussian low-pass φ_J. An
// H×W image gives 1 + JL + L²J(J−1)/2 channels (order 2) of
// ⌊H/2^J⌋×⌊W/2^J⌋ coefficients: 81 channels of 7×7 for a 28×28 image at
// J = 2, L = 8.
//
// The filters are Kymatio's: Gabor functions g(u) = exp(−uᵀA u + i ξᵀu)
// with A = R_θ diag(1, s²) R_θᵀ / (2σ²), sampled on the padded image grid and
// periodized over 5×5 periods, divided by 2πσ²/s; the Morlet wavelet
// subtracts the multiple of the envelope that gives it zero mean, with
// σ = 0.8·2^j, ξ = (3π/4)/2^j, slant s = 4/L and θ = (L/2 − 1 − l)π/L; φ_J is
// the Gaussian of σ = 0.8·2^(J−1). Their discrete Fourier transforms are
// real up to round-off (each filter is conjugate-symmetric in space), and,
// as Kymatio does, only the real part is kept. Two details differ from
// Kymatio, both below 10⁻⁴ relative: the normalization uses π, not 3.1415,
// and φ̂ is divided by its value at 0, so that the low-pass has DC gain 1
// exactly (the periodized Gaussian sums to 1 within 2·10⁻⁵ at J = 1 and
// to round-off from J = 2 on).
//
// An image is padded by reflection (without repeating the edge) to the
// multiple of 2^J given by Kymatio's rule, P = (⌊H/2^J⌋ + 2)·2^J; every
// convolution is circular on that grid or on a grid subsampled by a power
// of two, computed in the Fourier domain: a filter on the grid subsampled
// by 2^r is its transform restricted to the frequencies that grid holds,
// and subsampling a signal by k averages its transform's k×k aliases, which
// is exactly keeping every k-th sample. The outputs at 2^J u for the
// positions u = 1 … ⌊H/2^J⌋ of the subsampled grid (dropping one on each
// side, as Kymatio's unpadding does) are the coefficients.
//
// Everything is float64 and a pure function of the image: the same bytes
// whatever the number of goroutines transforming a dataset.
package scatter

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"gonum.org/v1/gonum/dsp/fourier"
)

// The ranges a Config may take: 2^MaxJ pixels of averaging are more than
// any image the IDX readers hold is worth, and the cost grows as L².
const (
	MaxJ = 6
	MaxL = 16
)

// groupEpsilon is added to each group's variance before dividing by its
// square root, as PyTorch's GroupNorm does (eps 10⁻⁵), so that a blank
// image's constant group is divided by a finite number.
const groupEpsilon = 1e-5

// Config is the transform's parameters.
type Config struct {
	// J is the number of scales: wavelets of scales 2^0 … 2^(J−1), averaging
	// and subsampling by 2^J.
	J int
	// L is the number of orientations over half a turn.
	L int
	// Order is the largest order of the coefficients, 1 or 2.
	Order int
	// Groups, if not 0, normalizes every image's channels in Groups
	// consecutive groups of equal size (group normalization without a
	// learned affine map): each group's coefficients minus their mean,
	// divided by the square root of their variance plus 10⁻⁵. It uses one
	// image alone, so it costs no privacy. It must divide Channels().
	Groups int
}

// Validate checks the ranges of the parameters.
func (c Config) Validate() error {
	switch {
	case c.J < 1 || c.J > MaxJ:
		return fmt.Errorf("scatter: J must lie in 1 … %d, got %d", MaxJ, c.J)
	case c.L < 1 || c.L > MaxL:
		return fmt.Errorf("scatter: L must lie in 1 … %d, got %d", MaxL, c.L)
	case c.Order != 1 && c.Order != 2:
		return fmt.Errorf("scatter: the order must be 1 or 2, got %d", c.Order)
	case c.Groups < 0 || (c.Groups > 0 && c.Channels()%c.Groups != 0):
		return fmt.Errorf("scatter: %d groups do not divide the %d channels", c.Groups, c.Channels())
	}
	return nil
}

// Channels returns the number of channels: 1 + JL, plus L²J(J−1)/2 at
// order 2.
func (c Config) Channels() int {
	n := 1 + c.J*c.L
	if c.Order == 2 {
		n += c.L * c.L * c.J * (c.J - 1) / 2
	}
	return n
}

// OutputSize returns the side of the coefficients of an image side n,
// ⌊n/2^J⌋, or an error if the image is too small for the reflection
// padding (2^J must be smaller than n).
func (c Config) OutputSize(n int) (int, error) {
	if n <= 1<<c.J {
		return 0, fmt.Errorf("scatter: an image side of %d pixels needs 2^J < %d, got J = %d", n, n, c.J)
	}
	return n >> c.J, nil
}

// Ops estimates the operations of the transform of one h×w image (Apply),
// for the estimates of a run's time: 5·n·log₂n per two-dimensional
// transform of n points — one of the padded image, one inverse per wavelet
// and per second-order path, one per pair of first-order moduli filtered
// again — 1.9·10⁶ at J = 2, L = 8 on 28×28 images, for the 1.1 ms of CPU
// time BenchmarkApply measures: at the estimates' 1 ns per operation, an
// overestimate. A size OutputSize refuses costs 0.
func (c Config) Ops(h, w int) float64 {
	oh, err1 := c.OutputSize(h)
	ow, err2 := c.OutputSize(w)
	if err1 != nil || err2 != nil {
		return 0
	}
	fft := func(j int) float64 {
		n := float64(((oh + 2) << (c.J - j)) * ((ow + 2) << (c.J - j)))
		return 5 * n * math.Log2(n)
	}
	ops := fft(0)
	for j1 := range c.J {
		ops += float64(c.L) * fft(j1)
		if c.Order == 2 && j1 < c.J-1 {
			ops += float64(c.L+1) / 2 * fft(j1)
			for j2 := j1 + 1; j2 < c.J; j2++ {
				ops += float64(c.L*c.L) * fft(j2)
			}
		}
	}
	return ops
}

// wavelet is one Morlet wavelet ψ_{j,θ}: its transform on the grid of each
// resolution r = 0 … j (subsampled by 2^r), and the same scaled by what
// filtering on that grid and subsampling to the grid of resolution j
// divide by — 4^(j−r) aliases averaged, then the inverse transform's
// 1/n_j — so that band needs neither division.
type wavelet struct {
	j      int
	hat    [][]float64
	scaled [][]float64
}

// Transform is the scattering transform of H×W images. It is read-only once
// built: goroutines share it, each with its own Workspace.
type Transform struct {
	cfg        Config
	h, w       int
	p, q       int // the padded grid
	top, left  int // the padding before the image
	oh, ow     int // the side of the coefficients
	wavelets   []wavelet
	outChannel int
	// phiRows[r] and phiCols[r] are φ̂ on the grid of resolution r, which is
	// separable, φ̂(ω₁, ω₂) = a(ω₁)·b(ω₂): a along the rows' index, b along
	// the columns'. lowRows[r] (oh × p/2^r) and lowCols[r] (ow × q/2^r) are
	// the low-pass and subsampling in space: row a of lowRows[r] is the
	// filter a's inverse transform centred on the output position a.
	phiRows, phiCols [][]float64
	lowRows, lowCols [][]float64
}

// New builds the transform of h×w images: the filters, once.
func New(h, w int, cfg Config) (*Transform, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	oh, err := cfg.OutputSize(h)
	if err != nil {
		return nil, err
	}
	ow, err := cfg.OutputSize(w)
	if err != nil {
		return nil, err
	}
	t := &Transform{cfg: cfg, h: h, w: w, oh: oh, ow: ow, outChannel: oh * ow}
	t.p, t.q = (oh+2)<<cfg.J, (ow+2)<<cfg.J
	t.top, t.left = (t.p-h)/2, (t.q-w)/2
	sigma := 0.8 * math.Exp2(float64(cfg.J-1))
	rows, cols := lowPass1D(t.p, sigma), lowPass1D(t.q, sigma)
	for r := 0; r <= cfg.J; r++ {
		a, b := restrict1(rows, t.p, r), restrict1(cols, t.q, r)
		t.phiRows, t.phiCols = append(t.phiRows, a), append(t.phiCols, b)
		t.lowRows = append(t.lowRows, sampler(a, oh, 1<<(cfg.J-r)))
		t.lowCols = append(t.lowCols, sampler(b, ow, 1<<(cfg.J-r)))
	}
	for j := range cfg.J {
		for l := range cfg.L {
			theta := float64(cfg.L-cfg.L/2-1-l) * math.Pi / float64(cfg.L)
			psi := fourierReal(morlet(t.p, t.q, 0.8*math.Exp2(float64(j)), theta, 0.75*math.Pi/math.Exp2(float64(j)), 4/float64(cfg.L)), t.p, t.q)
			wv := wavelet{j: j}
			for r := 0; r <= j; r++ {
				hat := restrict(psi, t.p, t.q, r)
				scale := 1 / (math.Exp2(float64(2*(j-r))) * float64((t.p>>j)*(t.q>>j)))
				scaled := make([]float64, len(hat))
				for i, v := range hat {
					scaled[i] = v * scale
				}
				wv.hat, wv.scaled = append(wv.hat, hat), append(wv.scaled, scaled)
			}
			t.wavelets = append(t.wavelets, wv)
		}
	}
	return t, nil
}

// Features returns the number of coefficients of an image:
// Channels()·⌊H/2^J⌋·⌊W/2^J⌋.
func (t *Transform) Features() int { return t.cfg.Channels() * t.outChannel }

// Shape returns the channels and the side of the coefficients, in the
// order Apply writes them (channel, row, column).
func (t *Transform) Shape() (channels, rows, cols int) {
	return t.cfg.Channels(), t.oh, t.ow
}

// gabor returns the Gabor function of the package comment on a p×q grid,
// periodized over 5×5 periods, row-major.
func gabor(p, q int, sigma, theta, xi, slant float64) []complex128 {
	c, s := math.Cos(theta), math.Sin(theta)
	// A = R diag(1, s²) Rᵀ / (2σ²).
	s2 := slant * slant
	a00 := (c*c + s2*s*s) / (2 * sigma * sigma)
	a01 := (c*s - s2*s*c) / (2 * sigma * sigma)
	a11 := (s*s + s2*c*c) / (2 * sigma * sigma)
	g := make([]complex128, p*q)
	for ex := -2; ex <= 2; ex++ {
		for ey := -2; ey <= 2; ey++ {
			for i := range p {
				x := float64(i + ex*p)
				for k := range q {
					y := float64(k + ey*q)
					arg := complex(-(a00*x*x + 2*a01*x*y + a11*y*y), xi*(x*c+y*s))
					g[i*q+k] += cmplx.Exp(arg)
				}
			}
		}
	}
	norm := complex(2*math.Pi*sigma*sigma/slant, 0)
	for i := range g {
		g[i] /= norm
	}
	return g
}

// morlet returns the Morlet wavelet: the Gabor function minus the multiple
// of its envelope that gives it zero mean.
func morlet(p, q int, sigma, theta, xi, slant float64) []complex128 {
	wave := gabor(p, q, sigma, theta, xi, slant)
	env := gabor(p, q, sigma, theta, 0, slant)
	var sw, se complex128
	for i := range wave {
		sw += wave[i]
		se += env[i]
	}
	k := sw / se
	for i := range wave {
		wave[i] -= k * env[i]
	}
	return wave
}

// fourierReal returns the real part of the discrete Fourier transform of the
// p×q filter f, computed by gonum's FFT.
func fourierReal(f []complex128, p, q int) []float64 {
	rows, cols := fourier.NewCmplxFFT(q), fourier.NewCmplxFFT(p)
	for i := range p {
		rows.Coefficients(f[i*q:(i+1)*q], f[i*q:(i+1)*q])
	}
	col := make([]complex128, p)
	re := make([]float64, len(f))
	for k := range q {
		for i := range p {
			col[i] = f[i*q+k]
		}
		cols.Coefficients(col, col)
		for i := range p {
			re[i*q+k] = real(col[i])
		}
	}
	return re
}

// kept reports whether frequency index k of a grid of n points survives
// the restriction to the grid subsampled by 2^r: Kymatio's periodization
// masks out the band ⌊n/2^(r+1)⌋ … ⌊n/2^(r+1)⌋ + ⌊n(1 − 2^−r)⌋ − 1, the
// high frequencies, and the n/2^r others land on distinct points.
func kept(k, n, r int) bool {
	start, length := int(float64(n)*math.Exp2(float64(-r-1))), int(float64(n)*(1-math.Exp2(float64(-r))))
	return k < start || k >= start+length
}

// restrict returns the transform hat of a p×q filter on the grid
// subsampled by 2^r: the frequencies of the p/2^r × q/2^r grid, the others
// (the high band Kymatio's periodization masks out) dropped.
func restrict(hat []float64, p, q, r int) []float64 {
	pr, qr := p>>r, q>>r
	out := make([]float64, pr*qr)
	for i := range p {
		if !kept(i, p, r) {
			continue
		}
		for k := range q {
			if kept(k, q, r) {
				out[(i%pr)*qr+k%qr] += hat[i*q+k]
			}
		}
	}
	return out
}

// restrict1 is restrict for a one-dimensional transform of n points.
func restrict1(hat []float64, n, r int) []float64 {
	out := make([]float64, n>>r)
	for k := range n {
		if kept(k, n, r) {
			out[k%(n>>r)] += hat[k]
		}
	}
	return out
}

// lowPass1D returns the transform of the Gaussian of σ along one axis of n
// points, periodized over 5 periods like the Gabor functions: φ is the
// product of two of them, exp(−|u|²/(2σ²)) = exp(−u₁²/(2σ²))·exp(−u₂²/(2σ²)).
// It is made exactly even, the mean of the transform at ω and −ω (they
// differ by the far periods' asymmetry, below 10⁻³⁰⁰), so that the filter
// is real in space, and divided by its value at 0 (see the package
// comment).
func lowPass1D(n int, sigma float64) []float64 {
	g := make([]complex128, n)
	for e := -2; e <= 2; e++ {
		for x := range n {
			u := float64(x + e*n)
			g[x] += complex(math.Exp(-u*u/(2*sigma*sigma)), 0)
		}
	}
	fourier.NewCmplxFFT(n).Coefficients(g, g)
	hat := make([]float64, n)
	for k := range n {
		hat[k] = (real(g[k]) + real(g[(n-k)%n])) / 2
	}
	dc := hat[0]
	for k := range hat {
		hat[k] /= dc
	}
	return hat
}

// sampler returns the out × n matrix of the one-dimensional low-pass
// filter of transform hat (n points) followed by subsampling by step and
// Kymatio's unpadding: row a is the filter's inverse transform h, centred
// on the position step·(a+1), h((step·(a+1) − m) mod n) for m = 0 … n−1.
func sampler(hat []float64, out, step int) []float64 {
	n := len(hat)
	h := make([]float64, n)
	for m := range n {
		var s float64
		for k, v := range hat {
			s += v * math.Cos(2*math.Pi*float64(k*m%n)/float64(n))
		}
		h[m] = s / float64(n)
	}
	a := make([]float64, out*n)
	for i := range out {
		c := step * (i + 1)
		for m := range n {
			a[i*n+m] = h[((c-m)%n+n)%n]
		}
	}
	return a
}

// Workspace is one goroutine's plans and buffers.
type Workspace struct {
	rows, cols []*plan        // by resolution
	work, tr   []complex128   // a transform's other buffer, a transposed grid
	x, z       []complex128   // the image's transform, a band's inverse or a pair's transform
	img        []float64      // the padded image
	u1         [][]float64    // by wavelet: |x ⋆ ψ|
	u1hat      [][]complex128 // by wavelet of j < J−1: the transform of u1
	u          []float64      // |U₁ ⋆ ψ|
	tmp        []float64      // the low-pass's rows
}

// NewWorkspace returns a workspace for t.
func (t *Transform) NewWorkspace() *Workspace {
	ws := &Workspace{work: make([]complex128, t.p*t.q), tr: make([]complex128, t.p*t.q)}
	for r := 0; r <= t.cfg.J; r++ {
		ws.rows = append(ws.rows, newPlan(t.q>>r))
		ws.cols = append(ws.cols, newPlan(t.p>>r))
	}
	n := t.p * t.q
	ws.x, ws.z = make([]complex128, n), make([]complex128, n)
	ws.img, ws.u, ws.tmp = make([]float64, n), make([]float64, n), make([]float64, t.oh*t.q)
	for _, wv := range t.wavelets {
		size := (t.p >> wv.j) * (t.q >> wv.j)
		ws.u1 = append(ws.u1, make([]float64, size))
		if t.cfg.Order == 2 && wv.j < t.cfg.J-1 {
			ws.u1hat = append(ws.u1hat, make([]complex128, size))
		}
	}
	return ws
}

// fft2 transforms the grid a of resolution r in place: the discrete Fourier
// transform, or its inverse without the division by the number of points.
// Both passes run along contiguous rows: the columns' transforms
// interleaved, then, on the transposed grid, the rows'.
func (ws *Workspace) fft2(a []complex128, r int, inverse bool) {
	rp, cp := ws.rows[r], ws.cols[r]
	q, p := rp.n, cp.n
	cp.transform(a, ws.work, q, inverse)
	tr := ws.tr[:p*q]
	for i := range p {
		for k, v := range a[i*q : (i+1)*q] {
			tr[k*p+i] = v
		}
	}
	rp.transform(tr, ws.work, p, inverse)
	for k := range q {
		for i, v := range tr[k*p : (k+1)*p] {
			a[i*q+k] = v
		}
	}
}

// ErrSize is returned by Apply for an image or a destination of the wrong
// length.
var ErrSize = errors.New("scatter: wrong length of the image or of the coefficients")

// Apply writes the coefficients of the h×w image img (row-major) to dst
// (Features() long), channel by channel, each row-major: S₀, then S₁ by
// wavelet (j₁ major, then θ₁), then S₂ by wavelet pair (j₁, θ₁, j₂, θ₂) —
// Kymatio's order — and normalizes them by groups if the Config says so.
func (t *Transform) Apply(dst, img []float64, ws *Workspace) error {
	if len(img) != t.h*t.w || len(dst) != t.Features() {
		return ErrSize
	}
	x := ws.x
	for i := range t.p {
		si := reflect(i-t.top, t.h)
		for k := range t.q {
			v := img[si*t.w+reflect(k-t.left, t.w)]
			ws.img[i*t.q+k] = v
			x[i*t.q+k] = complex(v, 0)
		}
	}
	out := dst
	next := func() []float64 {
		c := out[:t.outChannel]
		out = out[t.outChannel:]
		return c
	}
	t.lowPass(next(), ws.img, 0, ws)
	ws.fft2(x, 0, false)
	for n1, w1 := range t.wavelets {
		t.band(ws.u1[n1], x, 0, w1, ws)
		t.lowPass(next(), ws.u1[n1], w1.j, ws)
	}
	if t.cfg.Order < 2 {
		t.normalize(dst)
		return nil
	}
	t.transformBands(ws)
	for n1, w1 := range t.wavelets {
		if w1.j >= t.cfg.J-1 {
			break // no wavelet of a larger scale
		}
		for _, w2 := range t.wavelets {
			if w2.j > w1.j {
				t.band(ws.u, ws.u1hat[n1], w1.j, w2, ws)
				t.lowPass(next(), ws.u, w2.j, ws)
			}
		}
	}
	t.normalize(dst)
	return nil
}

// normalize normalizes the coefficients f by groups, if the Config says so.
func (t *Transform) normalize(f []float64) {
	if t.cfg.Groups > 0 {
		normalizeGroups(f, t.cfg.Groups)
	}
}

// transformBands sets the transforms of the first-order moduli that the
// second order filters again (the wavelets of j < J−1), two at a time: the
// transform Z of u + iv gives û(ω) = (Z(ω) + Z̄(−ω))/2 and
// v̂(ω) = (Z(ω) − Z̄(−ω))/(2i), u and v being real.
func (t *Transform) transformBands(ws *Workspace) {
	n := len(ws.u1hat)
	for a := 0; a < n; a += 2 {
		j := t.wavelets[a].j
		p, q := t.p>>j, t.q>>j
		u := ws.u1[a]
		if a+1 == n || t.wavelets[a+1].j != j {
			z := ws.u1hat[a]
			for i, v := range u {
				z[i] = complex(v, 0)
			}
			ws.fft2(z, j, false)
			a-- // the next wavelet starts a pair
			continue
		}
		v := ws.u1[a+1]
		z := ws.z[:p*q]
		for i := range z {
			z[i] = complex(u[i], v[i])
		}
		ws.fft2(z, j, false)
		uh, vh := ws.u1hat[a], ws.u1hat[a+1]
		for i := range p {
			ni := (p - i) % p
			for k := range q {
				zp, zm := z[i*q+k], cmplx.Conj(z[ni*q+(q-k)%q])
				uh[i*q+k] = (zp + zm) * 0.5
				vh[i*q+k] = (zp - zm) * complex(0, -0.5)
			}
		}
	}
}

// band sets dst to |y ⋆ ψ| on the grid of ψ's resolution j, for the
// transform src of y on the grid of resolution r ≤ j.
func (t *Transform) band(dst []float64, src []complex128, r int, psi wavelet, ws *Workspace) {
	p, q := t.p>>r, t.q>>r
	j := psi.j
	z := ws.z[:(t.p>>j)*(t.q>>j)]
	aliasProduct(z, src, psi.scaled[r], p, q, j-r)
	ws.fft2(z, j, true)
	for i, v := range z {
		re, im := real(v), imag(v)
		dst[i] = math.Sqrt(re*re + im*im)
	}
}

// lowPass writes to dst the coefficients (u ⋆ φ_J)(2^J (a+1), 2^J (b+1)),
// a < oh, b < ow, of the real signal u on the grid of resolution r: the
// separable low-pass and subsampling in space, lowRows·u·lowColsᵀ.
func (t *Transform) lowPass(dst, u []float64, r int, ws *Workspace) {
	p, q := t.p>>r, t.q>>r
	rows, cols := t.lowRows[r], t.lowCols[r]
	tmp := ws.tmp[:t.oh*q]
	clear(tmp)
	for a := range t.oh {
		ta := tmp[a*q : (a+1)*q]
		for i, w := range rows[a*p : (a+1)*p] {
			for k, v := range u[i*q : (i+1)*q] {
				ta[k] += w * v
			}
		}
	}
	for a := range t.oh {
		ta := tmp[a*q : (a+1)*q]
		for b := range t.ow {
			var s float64
			for k, w := range cols[b*q : (b+1)*q] {
				s += w * ta[k]
			}
			dst[a*t.ow+b] = s
		}
	}
}

// aliasProduct sets dst (p/2^k × q/2^k) to the sum of the 2^k×2^k aliases
// of each frequency of src·hat (p×q): the transform of every 2^k-th sample
// of the signal whose transform is src·hat, times 4^k (which hat's scaling
// divides by).
func aliasProduct(dst, src []complex128, hat []float64, p, q, k int) {
	if k == 0 {
		for i, v := range src[:p*q] {
			dst[i] = v * complex(hat[i], 0)
		}
		return
	}
	pk, qk := p>>k, q>>k
	clear(dst[:pk*qk])
	for i0 := 0; i0 < p; i0 += pk {
		for i := range pk {
			row := dst[i*qk : (i+1)*qk]
			s, h := src[(i0+i)*q:(i0+i+1)*q], hat[(i0+i)*q:(i0+i+1)*q]
			for c0 := 0; c0 < q; c0 += qk {
				for c, v := range s[c0 : c0+qk] {
					row[c] += v * complex(h[c0+c], 0)
				}
			}
		}
	}
}

// reflect maps a position of the padded grid to the image's: reflection
// about the first and the last pixel, without repeating them.
func reflect(i, n int) int {
	if i < 0 {
		return -i
	}
	if i >= n {
		return 2*(n-1) - i
	}
	return i
}

// normalizeGroups normalizes the coefficients f in g groups of equal
// length.
func normalizeGroups(f []float64, g int) {
	size := len(f) / g
	for start := 0; start < len(f); start += size {
		grp := f[start : start+size]
		var mean float64
		for _, v := range grp {
			mean += v
		}
		mean /= float64(size)
		var v2 float64
		for _, v := range grp {
			d := v - mean
			v2 += d * d
		}
		scale := 1 / math.Sqrt(v2/float64(size)+groupEpsilon)
		for i, v := range grp {
			grp[i] = (v - mean) * scale
		}
	}
}
