package fixedpoint

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// L = ⌊(2^{k−1} − 1)/n⌋ by hand: k = 16, n = 10 gives ⌊32767/10⌋ = 3276.
func TestLevelsByHand(t *testing.T) {
	e, err := New(16, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	if e.Levels() != 3276 || e.Step() != 2.0/3276 || e.Mask() != 0xffff {
		t.Errorf("levels %d step %v mask %x", e.Levels(), e.Step(), e.Mask())
	}
	if e, _ := New(64, 1, 1); e.Levels() != math.MaxInt64 || e.Mask() != math.MaxUint64 {
		t.Errorf("64 bits: levels %d mask %x", e.Levels(), e.Mask())
	}
}

// The decoded modular sum of n encoded vectors equals the integer sum of
// their quantized values times the step, exactly, even when every input
// sits at ±clip (the worst case for wrapping around).
func TestModularSumDecodesToQuantizedSum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{8, 12, 32, 64} {
		n := 1 << (k / 2)
		if k == 64 {
			n = 1000
		}
		e, err := New(k, 1.5, n)
		if err != nil {
			t.Fatal(err)
		}
		const m = 5
		sum := make([]uint64, m)
		want := make([]int64, m)
		enc := make([]uint64, m)
		for i := range n {
			x := make([]float64, m)
			for j := range x {
				switch i % 3 {
				case 0:
					x[j] = 1.5
				case 1:
					x[j] = -2 // clipped to −1.5
				default:
					x[j] = 3*r.Float64() - 1.5
				}
			}
			if _, err := e.Encode(enc, x); err != nil {
				t.Fatal(err)
			}
			for j := range x {
				q, _ := e.Quantize(x[j])
				want[j] += q
				sum[j] = (sum[j] + enc[j]) & e.Mask()
			}
		}
		got := make([]float64, m)
		e.Decode(got, sum)
		for j := range got {
			if e.Signed(sum[j]) != want[j] || got[j] != float64(want[j])*e.Step() {
				t.Errorf("k=%d coordinate %d: decoded %d (%v), want %d", k, j, e.Signed(sum[j]), got[j], want[j])
			}
		}
	}
}

// Clipped coordinates are counted, and the rounding error of the others is
// at most half a step.
func TestClippingIsCountedAndRoundingBounded(t *testing.T) {
	e, _ := New(20, 1, 100)
	x := []float64{0.3, -1.0000001, 7, -0.999, math.Inf(1), 1}
	enc := make([]uint64, len(x))
	clipped, err := e.Encode(enc, x)
	if err != nil || clipped != 3 {
		t.Fatalf("clipped %d, %v; want 3", clipped, err)
	}
	for i, v := range x {
		want := math.Max(-1, math.Min(1, v))
		got := float64(e.Signed(enc[i])) * e.Step()
		// Half a step plus the rounding of x·L/c (≤ 2u relative).
		if math.Abs(got-want) > e.Step()/2*(1+1e-12) {
			t.Errorf("x = %v: decoded %v", v, got)
		}
	}
	if _, err := e.Encode(enc[:1], []float64{math.NaN()}); err == nil {
		t.Error("NaN accepted")
	}
}

func TestBadParametersNameTheField(t *testing.T) {
	for _, tc := range []struct {
		bits  int
		clip  float64
		n     int
		field string
	}{
		{1, 1, 1, "bits:"}, {65, 1, 1, "bits:"}, {8, 0, 1, "clip:"}, {8, math.Inf(1), 1, "clip:"},
		{8, 1, 0, "summands:"}, {8, 1, 128, "bits:"}, {10, 1, 1000, "bits:"},
		{64, 1e-300, 2, "clip:"}, // a step of 2·10⁻³¹⁹, subnormal
	} {
		_, err := New(tc.bits, tc.clip, tc.n)
		if err == nil || !strings.HasPrefix(err.Error(), tc.field) {
			t.Errorf("New(%d, %v, %d) = %v, want an error naming %s", tc.bits, tc.clip, tc.n, err, tc.field)
		}
	}
	// MinBits is the boundary: it works, one bit fewer does not.
	for _, n := range []int{1, 2, 3, 127, 128, 1000, 10000} {
		k := MinBits(n)
		if _, err := New(k, 1, n); err != nil {
			t.Errorf("n = %d: MinBits %d refused: %v", n, k, err)
		}
		if _, err := New(k-1, 1, n); k > 2 && err == nil {
			t.Errorf("n = %d: %d bits accepted", n, k-1)
		}
	}
}

func TestPackRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{1, 3, 8, 13, 32, 63, 64} {
		for _, m := range []int{0, 1, 7, 100} {
			v := make([]uint64, m)
			for i := range v {
				v[i] = r.Uint64()
				if k < 64 {
					v[i] &= 1<<k - 1
				}
			}
			buf := Pack(make([]byte, PackedBytes(k, m)), v, k)
			if len(buf) != (k*m+7)/8 {
				t.Fatalf("k=%d m=%d: %d bytes", k, m, len(buf))
			}
			got := make([]uint64, m)
			if err := Unpack(got, buf, k); err != nil {
				t.Fatal(err)
			}
			for i := range v {
				if got[i] != v[i] {
					t.Fatalf("k=%d m=%d: value %d is %x, want %x", k, m, i, got[i], v[i])
				}
			}
		}
	}
	if err := Unpack(make([]uint64, 3), make([]byte, 2), 8); err == nil {
		t.Error("short buffer accepted")
	}
}

// Unbiased rounding, over a grid of N evenly spaced u, averages to x within
// step/N: ⌊s⌋ + 1 comes out for the #{i : (i + ½)/N < s − ⌊s⌋} values of u,
// which is (s − ⌊s⌋)·N to within one. This holds for inputs far below the
// step — the issue-30 grid of 4 bits, 5 clients and clip 10 (L = 1, step
// 10), where rounding to nearest gives 0 for every one of them — and
// between two levels of a fine grid; beyond the clip, the clipped value.
func TestRoundUnbiasedAveragesToX(t *testing.T) {
	const N = 1 << 16
	for _, tc := range []struct {
		bits, n int
		clip    float64
		xs      []float64
	}{
		{4, 5, 10, []float64{0.01, -0.01, 3e-7, 4.99, -9.5, 10, 0}},
		{20, 7, 1.5, []float64{1e-9, 0.123456789, -1.4999, 1.5, -0.7}},
		{4, 5, 10, []float64{25, -1e300}}, // clipped to ±10
	} {
		e, err := New(tc.bits, tc.clip, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range tc.xs {
			want := math.Max(-tc.clip, math.Min(tc.clip, x))
			var sum float64
			for i := range N {
				v, clipped := e.RoundUnbiased(x, (float64(i)+0.5)/N)
				if clipped != (x != want) {
					t.Errorf("bits %d, x = %v: clipped %v", tc.bits, x, clipped)
				}
				if q, _ := e.Quantize(v); e.Value(q) != v || math.Abs(v-want) >= e.Step() {
					t.Fatalf("bits %d, x = %v: %v is not a grid point within a step of %v", tc.bits, x, v, want)
				}
				sum += v
			}
			// Plus the rounding of x·L/c and of the float sum (N terms of
			// at most c, each sum rounding within 2⁻⁵³ of it: N·c·2⁻⁵³).
			tol := e.Step()/N + N*tc.clip*0x1p-53
			if mean := sum / N; math.Abs(mean-want) > tol {
				t.Errorf("bits %d, x = %v: mean of the unbiased rounding %v, want %v within %v", tc.bits, x, mean, want, tol)
			}
		}
		// Rounding to nearest loses what is below half a step.
		if q, _ := e.Quantize(e.Step() / 3); tc.bits == 4 && q != 0 {
			t.Errorf("to nearest, a third of a step is %d levels, want 0", q)
		}
	}
}

// A grid point Value(q) quantizes back to q exactly for every |q| ≤
// min(L, 2⁵⁰), at widths and clips where c/L is far from a power of two,
// up to 64 bits (L = 2⁶² − 1 for 2 summands), and ±c to ±L.
func TestValueQuantizesBackExactly(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		bits, n int
		clip    float64
	}{{4, 5, 10}, {16, 3, 0.7}, {24, 50, 40}, {32, 1000, 1e-3}, {53, 2, 3.3}, {64, 2, 1e300}, {64, 1000, 7e-290}} {
		e, err := New(tc.bits, tc.clip, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		// The ends of the range: x·L overflows for clip 10³⁰⁰ and must not
		// turn into −L.
		if hi, _ := e.Quantize(tc.clip); hi != e.Levels() {
			t.Errorf("bits %d, n %d, clip %v: the clip quantizes to %d, want L = %d", tc.bits, tc.n, tc.clip, hi, e.Levels())
		}
		if lo, _ := e.Quantize(-tc.clip); lo != -e.Levels() {
			t.Errorf("bits %d, n %d, clip %v: −clip quantizes to %d, want −L", tc.bits, tc.n, tc.clip, lo)
		}
		top := min(e.Levels(), 1<<50)
		for i := range 20000 {
			q := r.Int64N(2*top+1) - top
			switch i {
			case 0:
				q = top
			case 1:
				q = -top
			}
			if got, clipped := e.Quantize(e.Value(q)); got != q || clipped {
				t.Fatalf("bits %d, n %d, clip %v: Value(%d) = %v quantizes to %d (clipped %v)", tc.bits, tc.n, tc.clip, q, e.Value(q), got, clipped)
			}
		}
	}
}
