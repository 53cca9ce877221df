package shamir

import (
	"bytes"
	"errors"
	"math/big"
	"math/rand/v2"
	"testing"
)

func stream(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 1)) }

// The field operations agree with math/big exactly, including at the edges
// 0, 1 and p − 1.
func TestFieldMatchesBigIntegers(t *testing.T) {
	p := big.NewInt(Prime)
	r := stream(1)
	vals := []uint64{0, 1, 2, Prime - 1, Prime - 2, 1 << 60}
	for range 2000 {
		vals = append(vals, r.Uint64N(Prime))
	}
	for i, a := range vals {
		b := vals[(i*7+3)%len(vals)]
		A, B := new(big.Int).SetUint64(a), new(big.Int).SetUint64(b)
		want := new(big.Int).Mod(new(big.Int).Mul(A, B), p).Uint64()
		if got := mul(a, b); got != want {
			t.Fatalf("%d·%d = %d, want %d", a, b, got, want)
		}
		if got, want := add(a, b), new(big.Int).Mod(new(big.Int).Add(A, B), p).Uint64(); got != want {
			t.Fatalf("%d+%d = %d, want %d", a, b, got, want)
		}
		if got, want := sub(a, b), new(big.Int).Mod(new(big.Int).Sub(A, B), p).Uint64(); got != want {
			t.Fatalf("%d−%d = %d, want %d", a, b, got, want)
		}
		if a != 0 && mul(a, inverse(a)) != 1 {
			t.Fatalf("%d·%d⁻¹ ≠ 1", a, a)
		}
	}
}

// subsets calls f with every k-subset of {0, …, n−1}.
func subsets(n, k int, f func([]int)) {
	idx := make([]int, k)
	var rec func(start, depth int)
	rec = func(start, depth int) {
		if depth == k {
			f(idx)
			return
		}
		for i := start; i < n; i++ {
			idx[depth] = i
			rec(i+1, depth+1)
		}
	}
	rec(0, 0)
}

// Every t-subset of the n shares, and every larger subset, reconstructs the
// secret exactly, for secret lengths that fill limbs exactly or leave a
// short last limb.
func TestAnyThresholdSubsetReconstructs(t *testing.T) {
	xs := []uint64{1, 2, 3, 17, 1000, Prime - 1}
	for _, n := range []int{1, 6, 7, 8, 32, 33} {
		secret := make([]byte, n)
		for i := range secret {
			secret[i] = byte(251 - 13*i)
		}
		for th := 1; th <= len(xs); th++ {
			shares, err := Split(secret, th, xs, stream(uint64(n*10+th)))
			if err != nil {
				t.Fatal(err)
			}
			for k := th; k <= len(xs); k++ {
				subsets(len(xs), k, func(idx []int) {
					pick := make([]Share, len(idx))
					for i, j := range idx {
						pick[i] = shares[j]
					}
					got, err := Combine(pick, th, n)
					if err != nil || !bytes.Equal(got, secret) {
						t.Fatalf("n=%d t=%d subset %v: %x, %v", n, th, idx, got, err)
					}
				})
			}
		}
	}
}

// Below the threshold Combine refuses with the counts.
func TestFewerThanThresholdSharesAreRefused(t *testing.T) {
	shares, err := Split([]byte("secret key"), 3, []uint64{1, 2, 3, 4}, stream(2))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Combine(shares[:2], 3, 10)
	var few *TooFewError
	if !errors.As(err, &few) || few.Have != 2 || few.Need != 3 {
		t.Fatalf("error %v, want 2 of 3 shares", err)
	}
}

// Any t − 1 shares are consistent with every secret: for an arbitrary other
// secret there is a polynomial through (0, other) and the t − 1 shares, and a
// t-th share on it makes Combine return the other secret. (Perfect secrecy:
// each candidate secret is explained by exactly one polynomial, so the
// shares are equally likely under all of them.)
func TestFewerThanThresholdSharesFitEverySecret(t *testing.T) {
	const th = 4
	xs := []uint64{5, 6, 7, 8, 9}
	secret := []byte("the real mask key, 32 bytes long")
	shares, err := Split(secret, th, xs, stream(3))
	if err != nil {
		t.Fatal(err)
	}
	known := shares[:th-1]
	for _, other := range [][]byte{make([]byte, 32), []byte("another secret of thirty-two b.."), bytes.Repeat([]byte{0xff}, 32)} {
		// The polynomial through (0, other_l) and the known shares, evaluated
		// at x = 42 by Lagrange interpolation.
		pts := append([]uint64{0}, xs[:th-1]...)
		forged := Share{X: 42, Y: make([]uint64, Limbs(32))}
		for l := range forged.Y {
			ys := []uint64{limbValue(other, l)}
			for _, s := range known {
				ys = append(ys, s.Y[l])
			}
			forged.Y[l] = lagrangeAt(42, pts, ys)
		}
		got, err := Combine(append(append([]Share(nil), known...), forged), th, 32)
		if err != nil || !bytes.Equal(got, other) {
			t.Fatalf("t−1 shares + forged share gave %q, %v; want %q", got, err, other)
		}
	}
}

func lagrangeAt(x uint64, xs, ys []uint64) uint64 {
	var v uint64
	for i := range xs {
		num, den := uint64(1), uint64(1)
		for j := range xs {
			if j != i {
				num = mul(num, sub(x, xs[j]))
				den = mul(den, sub(xs[i], xs[j]))
			}
		}
		v = add(v, mul(ys[i], mul(num, inverse(den))))
	}
	return v
}

// Surplus shares are checked: a share of another secret, or a corrupted
// share, beyond the first t makes Combine fail instead of answering.
func TestSurplusSharesAreChecked(t *testing.T) {
	xs := []uint64{1, 2, 3, 4}
	a, _ := Split([]byte("secret A"), 2, xs, stream(4))
	b, _ := Split([]byte("secret B"), 2, xs, stream(5))
	if _, err := Combine([]Share{a[0], a[1], b[2]}, 2, 8); !errors.Is(err, ErrInconsistent) {
		t.Errorf("mixed secrets: %v", err)
	}
	bad := Share{X: a[3].X, Y: append([]uint64(nil), a[3].Y...)}
	bad.Y[0] = add(bad.Y[0], 1)
	if _, err := Combine([]Share{a[0], a[1], bad}, 2, 8); !errors.Is(err, ErrInconsistent) {
		t.Errorf("corrupted share: %v", err)
	}
	if _, err := Combine([]Share{a[0], a[1], a[1]}, 2, 8); !errors.Is(err, ErrInconsistent) {
		t.Errorf("duplicate share: %v", err)
	}
}

// Shares of different secrets combined below their threshold give limbs
// that almost never fit their byte width: a 1-byte secret's limb is a random
// field element below 2⁸ with probability 2⁸/p ≈ 1e-16.
func TestWrongThresholdIsDetected(t *testing.T) {
	shares, _ := Split([]byte{7}, 3, []uint64{1, 2, 3}, stream(6))
	if _, err := Combine(shares[:2], 2, 1); !errors.Is(err, ErrInconsistent) {
		t.Errorf("t−1 shares read as threshold t−1: %v", err)
	}
}

// The same stream gives the same shares; another stream other shares.
func TestSplitIsReproducible(t *testing.T) {
	xs := []uint64{1, 2, 3}
	a, _ := Split([]byte("k"), 2, xs, stream(7))
	b, _ := Split([]byte("k"), 2, xs, stream(7))
	c, _ := Split([]byte("k"), 2, xs, stream(8))
	if a[0].Y[0] != b[0].Y[0] || a[2].Y[0] != b[2].Y[0] {
		t.Error("same stream, different shares")
	}
	if a[0].Y[0] == c[0].Y[0] {
		t.Error("different streams, same share")
	}
}

func TestBadArguments(t *testing.T) {
	r := stream(9)
	for name, f := range map[string]func() error{
		"empty secret": func() error { _, err := Split(nil, 1, []uint64{1}, r); return err },
		"t = 0":        func() error { _, err := Split([]byte{1}, 0, []uint64{1}, r); return err },
		"t > n":        func() error { _, err := Split([]byte{1}, 3, []uint64{1, 2}, r); return err },
		"x = 0":        func() error { _, err := Split([]byte{1}, 1, []uint64{0, 1}, r); return err },
		"x = p":        func() error { _, err := Split([]byte{1}, 1, []uint64{Prime}, r); return err },
		"repeated x":   func() error { _, err := Split([]byte{1}, 1, []uint64{3, 3}, r); return err },
		"no xs":        func() error { _, err := NewCombiner(nil); return err },
	} {
		if f() == nil {
			t.Errorf("%s accepted", name)
		}
	}
}

func BenchmarkSplit1000(b *testing.B) {
	xs := make([]uint64, 1000)
	for i := range xs {
		xs[i] = uint64(i + 1)
	}
	secret := make([]byte, 32)
	r := stream(10)
	for b.Loop() {
		if _, err := Split(secret, 667, xs, r); err != nil {
			b.Fatal(err)
		}
	}
}
