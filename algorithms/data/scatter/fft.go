package scatter

import (
	"math"
	"math/cmplx"
)

// plan is the discrete Fourier transform of one short length n, the lengths
// of the scattering grids (36, 18 and 9 for 28×28 images at J = 2): a
// mixed-radix Stockham transform (Govindaraju et al., SC 2008), one pass per
// factor of n with radix-2, -3 and -4 butterflies written out and an O(R²)
// butterfly for any other prime factor R. It transforms w sequences at once,
// interleaved (element m of sequence c at m·w + c): w = 1 for a row of a
// grid, w = the row length for all the columns, whose butterflies then run
// along contiguous rows.
//
// gonum's dsp/fourier, which builds the filters and is this transform's
// oracle in the tests, computes the same numbers, but its general-length
// FFTPACK code (0.83 µs for n = 18), called once per row and per gathered
// column, made the transform of a 28×28 image at J = 2, L = 8 take 7.9 ms;
// with these plans (and the other savings of Apply) it takes 1.1 ms of CPU
// time (BenchmarkApply, on the 2-core machine of the measurements in
// docs/privacy.md).
type plan struct {
	n      int
	stages []stage
	in     []complex128 // the generic butterfly's inputs
}

// stage is one pass of radix r over blocks of ns points already
// transformed.
type stage struct {
	r, ns int
	// fwd[(j mod ns)·r + k] is exp(−2πi·k·(j mod ns)/(ns·r)), inv its
	// conjugate.
	fwd, inv []complex128
	// roots[k] is exp(−2πi·k/r), for the generic butterfly.
	roots []complex128
}

// newPlan returns the plan of length n ≥ 1.
func newPlan(n int) *plan {
	p := &plan{n: n}
	ns := 1
	for _, r := range factors(n) {
		p.in = make([]complex128, max(len(p.in), r))
		s := stage{r: r, ns: ns, fwd: make([]complex128, ns*r), inv: make([]complex128, ns*r)}
		for j := range ns {
			for k := range r {
				s.fwd[j*r+k] = cmplx.Rect(1, -2*math.Pi*float64(k*j)/float64(ns*r))
				s.inv[j*r+k] = cmplx.Conj(s.fwd[j*r+k])
			}
		}
		if r != 2 && r != 3 && r != 4 {
			s.roots = make([]complex128, r)
			for k := range r {
				s.roots[k] = cmplx.Rect(1, -2*math.Pi*float64(k)/float64(r))
			}
		}
		p.stages = append(p.stages, s)
		ns *= r
	}
	return p
}

// factors splits n into radices: fours first, then twos, threes and the
// other primes.
func factors(n int) []int {
	var f []int
	for n%4 == 0 {
		f = append(f, 4)
		n /= 4
	}
	for d := 2; n > 1; d++ {
		for n%d == 0 {
			f = append(f, d)
			n /= d
		}
	}
	return f
}

// transform replaces the w interleaved sequences of x (n·w values) by their
// discrete Fourier transforms, Σ_m x[m] exp(∓2πi·mk/n), with the minus
// sign unless inverse (which is not normalized). work holds n·w values.
func (p *plan) transform(x, work []complex128, w int, inverse bool) {
	src, dst := x[:p.n*w], work[:p.n*w]
	n := p.n
	// sign is the factor ∓i of the butterflies: −i forward, +i inverse.
	sign := complex(0, -1)
	if inverse {
		sign = complex(0, 1)
	}
	for _, s := range p.stages {
		r, ns := s.r, s.ns
		tws := s.fwd
		if inverse {
			tws = s.inv
		}
		m := n / r
		for base := 0; base < m; base += ns {
			for jm := range ns {
				j, out := base+jm, base*r+jm
				tw := tws[jm*r : jm*r+r]
				switch r {
				case 2:
					s0, s1 := src[j*w:(j+1)*w], src[(j+m)*w:(j+m+1)*w]
					d0, d1 := dst[out*w:(out+1)*w], dst[(out+ns)*w:(out+ns+1)*w]
					for c, a := range s0 {
						b := s1[c] * tw[1]
						d0[c], d1[c] = a+b, a-b
					}
				case 3:
					s0, s1, s2 := src[j*w:(j+1)*w], src[(j+m)*w:(j+m+1)*w], src[(j+2*m)*w:(j+2*m+1)*w]
					d0, d1, d2 := dst[out*w:(out+1)*w], dst[(out+ns)*w:(out+ns+1)*w], dst[(out+2*ns)*w:(out+2*ns+1)*w]
					rot := sign * sqrt3by2
					for c, a := range s0 {
						b, e := s1[c]*tw[1], s2[c]*tw[2]
						t1 := b + e
						t2 := a - t1*0.5
						t3 := (b - e) * rot
						d0[c], d1[c], d2[c] = a+t1, t2+t3, t2-t3
					}
				case 4:
					s0, s1 := src[j*w:(j+1)*w], src[(j+m)*w:(j+m+1)*w]
					s2, s3 := src[(j+2*m)*w:(j+2*m+1)*w], src[(j+3*m)*w:(j+3*m+1)*w]
					d0, d1 := dst[out*w:(out+1)*w], dst[(out+ns)*w:(out+ns+1)*w]
					d2, d3 := dst[(out+2*ns)*w:(out+2*ns+1)*w], dst[(out+3*ns)*w:(out+3*ns+1)*w]
					for c, a := range s0 {
						b, e, f := s1[c]*tw[1], s2[c]*tw[2], s3[c]*tw[3]
						t0, t1 := a+e, a-e
						t2, t3 := b+f, (b-f)*sign
						d0[c], d1[c], d2[c], d3[c] = t0+t2, t1+t3, t0-t2, t1-t3
					}
				default:
					in := p.in[:r]
					for c := range w {
						for k := range r {
							in[k] = src[(j+k*m)*w+c] * tw[k]
						}
						for k := range r {
							var sum complex128
							for l := range r {
								root := s.roots[(k*l)%r]
								if inverse {
									root = cmplx.Conj(root)
								}
								sum += in[l] * root
							}
							dst[(out+k*ns)*w+c] = sum
						}
					}
				}
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &x[0] {
		copy(x, src)
	}
}

// sqrt3by2 is √3/2, the sine of the radix-3 butterfly.
const sqrt3by2 = 0.8660254037844386467637231707529361834714026269051903140279034897
