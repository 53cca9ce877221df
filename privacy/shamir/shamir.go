// Package shamir implements Shamir's t-of-n secret sharing (Shamir 1979,
// "How to share a secret") over the prime field GF(p), p = 2⁶¹ − 1, for
// secrets of any byte length.
//
// A secret is cut into limbs of 7 bytes (56 bits, below p); each limb is the
// constant term of its own random polynomial of degree t − 1, and a holder's
// share is the value of every limb's polynomial at the holder's nonzero
// x-coordinate. Any t shares determine the polynomials by Lagrange
// interpolation at 0 and so the secret; any t − 1 shares are consistent with
// every secret, each with the same number of polynomials, so they carry no
// information about it (TestFewerThanThresholdSharesFitEverySecret). Combine
// refuses fewer than t shares with *TooFewError, checks surplus shares
// against the interpolated polynomials, and refuses limbs that do not fit
// their byte width (a sign of shares from different secrets).
//
// # Why not a library
//
// Secure aggregation (Bonawitz et al. 2017) shares each client's keys among
// all n clients, n up to thousands, with randomness from the client's
// reproducible stream. hashicorp/vault's shamir works byte-wise over GF(2⁸),
// so it allows at most 255 shares, and draws its coefficients from
// crypto/rand, so runs could not be replayed; it also lives in Vault's large
// module. go.dedis.ch/kyber's share package takes a cipher.Stream and a
// prime-order group, but its shares are kyber.Scalar interface values (a
// heap allocation per evaluation, n·t of them per secret) and a secret must be
// a group scalar rather than an arbitrary 32-byte key. The arithmetic here is
// a Mersenne-prime multiply (math/bits.Mul64) and Horner's rule.
//
// # Randomness
//
// Split draws its coefficients from a caller's stream (math/rand/v2's
// Source, in maple a ChaCha8 stream of the owning actor), uniform on GF(p) by
// rejection. Shares and Combiner values hold secrets: they are plain values
// here, and the caller keeps them inside its actor.
package shamir

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Prime is the field modulus p = 2⁶¹ − 1 (a Mersenne prime).
const Prime = 1<<61 - 1

// LimbBytes is the number of secret bytes per field element.
const LimbBytes = 7

// MaxShares is the largest number of distinct x-coordinates, p − 1.
const MaxShares = Prime - 1

// Share is one holder's share of a secret: the holder's x-coordinate and the
// value at X of each limb's polynomial.
type Share struct {
	X uint64
	Y []uint64
}

// Limbs returns the number of field elements in a share of a secret of n
// bytes: ⌈n/7⌉.
func Limbs(n int) int { return (n + LimbBytes - 1) / LimbBytes }

// ShareBytes returns the encoded size of a share of an n-byte secret: 8 bytes
// per limb (the x-coordinate is the holder's identity, not sent).
func ShareBytes(n int) int { return 8 * Limbs(n) }

// TooFewError reports a reconstruction attempted with fewer shares than the
// threshold.
type TooFewError struct {
	Have, Need int
}

// Error reports the counts.
func (e *TooFewError) Error() string {
	return fmt.Sprintf("shamir: %d shares, %d needed", e.Have, e.Need)
}

// ErrInconsistent reports shares that do not lie on polynomials of degree
// below the threshold encoding a secret of the requested length.
var ErrInconsistent = errors.New("shamir: shares are inconsistent")

// Split returns the shares of secret for the holders at xs, any t of which
// reconstruct it. The x-coordinates must be distinct and in [1, p − 1];
// 1 ≤ t ≤ len(xs). The t − 1 random coefficients of each limb's polynomial
// come from r.
func Split(secret []byte, t int, xs []uint64, r rand.Source) ([]Share, error) {
	if len(secret) == 0 {
		return nil, errors.New("shamir: empty secret")
	}
	if t < 1 || t > len(xs) {
		return nil, fmt.Errorf("shamir: threshold %d outside [1, %d]", t, len(xs))
	}
	if err := checkXs(xs); err != nil {
		return nil, err
	}
	limbs := Limbs(len(secret))
	// coef[l*t+j] is the coefficient of x^j of limb l's polynomial.
	coef := make([]uint64, limbs*t)
	for l := range limbs {
		coef[l*t] = limbValue(secret, l)
		for j := 1; j < t; j++ {
			coef[l*t+j] = uniform(r)
		}
	}
	ys := make([]uint64, len(xs)*limbs)
	shares := make([]Share, len(xs))
	for i, x := range xs {
		y := ys[i*limbs : (i+1)*limbs : (i+1)*limbs]
		for l := range limbs {
			p := coef[l*t : (l+1)*t]
			acc := p[t-1]
			for j := t - 2; j >= 0; j-- {
				acc = add(mul(acc, x), p[j])
			}
			y[l] = acc
		}
		shares[i] = Share{X: x, Y: y}
	}
	clear(coef)
	return shares, nil
}

// Combine reconstructs a secret of secretLen bytes from shares, at least t of
// them with distinct x-coordinates. It interpolates from the first t and
// checks every further share against the result.
func Combine(shares []Share, t, secretLen int) ([]byte, error) {
	if t < 1 {
		return nil, fmt.Errorf("shamir: threshold %d", t)
	}
	if len(shares) < t {
		return nil, &TooFewError{Have: len(shares), Need: t}
	}
	xs := make([]uint64, t)
	for i := range xs {
		xs[i] = shares[i].X
	}
	c, err := NewCombiner(xs)
	if err != nil {
		return nil, err
	}
	secret, err := c.Combine(shares[:t], secretLen)
	if err != nil || len(shares) == t {
		return secret, err
	}
	for _, s := range shares[t:] {
		if !c.consistent(shares[:t], s) {
			return nil, ErrInconsistent
		}
	}
	return secret, nil
}

// Combiner interpolates at 0 from a fixed set of x-coordinates: the Lagrange
// coefficients λ_i = Π_{j≠i} x_j/(x_j − x_i) are computed once, so that each
// secret shared among the same holders costs one dot product per limb.
type Combiner struct {
	xs     []uint64
	lambda []uint64
}

// NewCombiner returns the combiner for the holders at xs (distinct, in
// [1, p − 1]); it reconstructs secrets shared with threshold len(xs).
func NewCombiner(xs []uint64) (*Combiner, error) {
	if len(xs) == 0 {
		return nil, errors.New("shamir: no x-coordinates")
	}
	if err := checkXs(xs); err != nil {
		return nil, err
	}
	lambda := make([]uint64, len(xs))
	for i, xi := range xs {
		num, den := uint64(1), uint64(1)
		for j, xj := range xs {
			if j != i {
				num = mul(num, xj)
				den = mul(den, sub(xj, xi))
			}
		}
		lambda[i] = mul(num, inverse(den))
	}
	return &Combiner{xs: append([]uint64(nil), xs...), lambda: lambda}, nil
}

// Combine reconstructs a secret of secretLen bytes from shares whose
// x-coordinates are the combiner's, in the same order.
func (c *Combiner) Combine(shares []Share, secretLen int) ([]byte, error) {
	if len(shares) != len(c.xs) {
		return nil, &TooFewError{Have: len(shares), Need: len(c.xs)}
	}
	limbs := Limbs(secretLen)
	for i, s := range shares {
		if s.X != c.xs[i] {
			return nil, fmt.Errorf("shamir: share %d is at x = %d, the combiner's at %d", i, s.X, c.xs[i])
		}
		if len(s.Y) != limbs {
			return nil, fmt.Errorf("shamir: share %d has %d limbs, a %d-byte secret %d", i, len(s.Y), secretLen, limbs)
		}
	}
	secret := make([]byte, secretLen)
	for l := range limbs {
		var v uint64
		for i, s := range shares {
			v = add(v, mul(c.lambda[i], s.Y[l]))
		}
		if !putLimb(secret, l, v) {
			return nil, ErrInconsistent
		}
	}
	return secret, nil
}

// consistent reports whether s lies on the polynomials through base.
func (c *Combiner) consistent(base []Share, s Share) bool {
	if len(s.Y) != len(base[0].Y) {
		return false
	}
	for i := range base {
		if base[i].X == s.X {
			return false // a duplicate holder
		}
	}
	// Lagrange basis at s.X: L_i(x) = Π_{j≠i} (x − x_j)/(x_i − x_j).
	for l := range s.Y {
		var v uint64
		for i, bi := range base {
			num, den := uint64(1), uint64(1)
			for j, bj := range base {
				if j != i {
					num = mul(num, sub(s.X, bj.X))
					den = mul(den, sub(bi.X, bj.X))
				}
			}
			v = add(v, mul(bi.Y[l], mul(num, inverse(den))))
		}
		if v != s.Y[l] {
			return false
		}
	}
	return true
}

func checkXs(xs []uint64) error {
	seen := make(map[uint64]struct{}, len(xs))
	for _, x := range xs {
		if x == 0 || x >= Prime {
			return fmt.Errorf("shamir: x-coordinate %d outside [1, p − 1]", x)
		}
		if _, dup := seen[x]; dup {
			return fmt.Errorf("shamir: x-coordinate %d repeated", x)
		}
		seen[x] = struct{}{}
	}
	return nil
}

// limbValue returns limb l of secret as a big-endian integer below 2⁵⁶.
func limbValue(secret []byte, l int) uint64 {
	var v uint64
	for _, b := range secret[l*LimbBytes : min((l+1)*LimbBytes, len(secret))] {
		v = v<<8 | uint64(b)
	}
	return v
}

// putLimb writes v as limb l of secret and reports whether it fits the limb's
// width.
func putLimb(secret []byte, l int, v uint64) bool {
	part := secret[l*LimbBytes : min((l+1)*LimbBytes, len(secret))]
	for i := len(part) - 1; i >= 0; i-- {
		part[i] = byte(v)
		v >>= 8
	}
	return v == 0
}

// uniform draws an element of GF(p) uniformly: 61 random bits, rejecting the
// single value p (probability 2⁻⁶¹).
func uniform(r rand.Source) uint64 {
	for {
		if v := r.Uint64() >> 3; v < Prime {
			return v
		}
	}
}

func add(a, b uint64) uint64 {
	s := a + b // a, b < 2⁶¹: no overflow
	if s >= Prime {
		s -= Prime
	}
	return s
}

func sub(a, b uint64) uint64 {
	if a >= b {
		return a - b
	}
	return a + Prime - b
}

// mul returns a·b mod p. With a·b = h·2⁶⁴ + l, and 2⁶¹ ≡ 1 (mod p), the
// product is ≡ (h·2³ + l>>61) + (l mod 2⁶¹), each term below 2⁶¹, and one
// folding of the carry bit plus a conditional subtraction reduce it.
func mul(a, b uint64) uint64 {
	h, l := bits.Mul64(a, b)
	r := (h<<3 | l>>61) + (l & Prime)
	r = (r & Prime) + (r >> 61)
	if r >= Prime {
		r -= Prime
	}
	return r
}

// inverse returns a⁻¹ = a^(p−2) mod p (Fermat), for a ≠ 0.
func inverse(a uint64) uint64 {
	result, base := uint64(1), a
	for e := uint64(Prime - 2); e > 0; e >>= 1 {
		if e&1 == 1 {
			result = mul(result, base)
		}
		base = mul(base, base)
	}
	return result
}
