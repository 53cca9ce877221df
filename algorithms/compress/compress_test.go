package compress

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
)

// stream returns a func giving one fixed stream whatever the purpose, as an
// encoder's stream argument.
func stream(seed uint64) func(string) *rand.Rand {
	r := rand.New(rand.NewPCG(seed, 1))
	return func(string) *rand.Rand { return r }
}

// Codes of every width from 1 to 32 bits come back as they were packed, and
// a packing with the wrong length or a nonzero padding is refused.
func TestPackedCodesRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for bits := 1; bits <= 32; bits++ {
		for _, n := range []int{0, 1, 7, 8, 9, 31, 100} {
			codes := make([]uint32, n)
			for j := range codes {
				codes[j] = uint32(r.Uint64() & (1<<bits - 1))
			}
			packed := packCodes(n, bits, func(j int) uint32 { return codes[j] })
			if len(packed) != (n*bits+7)/8 {
				t.Fatalf("%d codes of %d bits: %d bytes", n, bits, len(packed))
			}
			got := make([]uint32, n)
			if err := unpackCodes(packed, n, bits, func(j int, v uint32) { got[j] = v }); err != nil {
				t.Fatalf("%d codes of %d bits: %v", n, bits, err)
			}
			if !slices.Equal(got, codes) {
				t.Fatalf("%d codes of %d bits: %v, packed %v", n, bits, got, codes)
			}
			if (n*bits)%8 != 0 {
				packed[len(packed)-1] |= 0x80
				if err := unpackCodes(packed, n, bits, func(int, uint32) {}); err == nil {
					t.Errorf("%d codes of %d bits: a nonzero padding bit was accepted", n, bits)
				}
			}
			if err := unpackCodes(append(packed, 0), n, bits, func(int, uint32) {}); err == nil {
				t.Errorf("%d codes of %d bits: a byte too many was accepted", n, bits)
			}
		}
	}
}

// Top-k keeps the k entries of largest magnitude, ties to the lower index:
// by hand, and against the definition (sort by magnitude, then index) on
// vectors of small integers, which tie often.
func TestTopIndices(t *testing.T) {
	x := []float64{1, -3, 3, 2, -2, 0}
	for k, want := range [][]int{1: {1}, 2: {1, 2}, 3: {1, 2, 3}, 4: {1, 2, 3, 4}, 6: {0, 1, 2, 3, 4, 5}} {
		if want == nil {
			continue
		}
		if got := TopIndices(x, k); !slices.Equal(got, want) {
			t.Errorf("k = %d: %v, want %v", k, got, want)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		x := make([]float64, 1+r.IntN(40))
		for j := range x {
			x[j] = float64(r.IntN(7) - 3)
		}
		k := 1 + r.IntN(len(x))
		order := make([]int, len(x))
		for j := range order {
			order[j] = j
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(math.Abs(x[b]), math.Abs(x[a])) })
		want := slices.Clone(order[:k])
		slices.Sort(want)
		if got := TopIndices(x, k); !slices.Equal(got, want) {
			t.Fatalf("%v, k = %d: %v, want %v", x, k, got, want)
		}
	}
}

// Error feedback: after every reply, the new residual plus what was sent
// is the reply plus the old residual, exactly (the float32 rounding of the
// sent values included); and the decoder gives back what was sent.
func TestTopKErrorFeedbackIsExact(t *testing.T) {
	const dim = 50
	tk := TopK{K: 5, Feedback: true}
	e := tk.NewEncoder(dim).(*topKEncoder)
	r := rand.New(rand.NewPCG(5, 6))
	sent := make([]float64, dim)
	for round := range 20 {
		u := make([]float64, dim)
		for j := range u {
			u[j] = r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4))
		}
		old := slices.Clone(e.residual)
		c := e.Encode(u, nil)
		if len(c.Index) != 5 {
			t.Fatalf("round %d: %d values sent", round, len(c.Index))
		}
		if err := tk.Decode(sent, &c); err != nil {
			t.Fatal(err)
		}
		for j := range u {
			if e.residual[j]+sent[j] != u[j]+old[j] {
				t.Fatalf("round %d, coordinate %d: residual %v + sent %v ≠ update %v + old residual %v",
					round, j, e.residual[j], sent[j], u[j], old[j])
			}
		}
		// The sent coordinates are the largest of update + old residual.
		acc := make([]float64, dim)
		floats.AddTo(acc, u, old)
		if !slices.Equal(c.Index, toUint32(TopIndices(acc, 5))) {
			t.Fatalf("round %d: sent %v, the largest are %v", round, c.Index, TopIndices(acc, 5))
		}
	}
	// Without feedback the encoder keeps nothing and sends the update's own
	// largest.
	plain := TopK{K: 2}.NewEncoder(4)
	c := plain.Encode([]float64{0.5, -4, 3, 1}, nil)
	if !slices.Equal(c.Index, []uint32{1, 2}) || !slices.Equal(c.Values, []float32{-4, 3}) {
		t.Errorf("top-2 of (0.5, −4, 3, 1): %v %v", c.Index, c.Values)
	}
}

func toUint32(x []int) []uint32 {
	out := make([]uint32, len(x))
	for i, v := range x {
		out[i] = uint32(v)
	}
	return out
}

// QSGD is unbiased, E[Q(v)] = v, and its variance is the paper's:
// E‖Q(v) − v‖² = Σ_j (‖v‖/s)² p_j(1 − p_j) ≤ min(d/s², √d/s)‖v‖²
// (Alistarh et al., Lemma 3.1), where p_j is the fractional part of
// s|v_j|/‖v‖. Both are measured over n draws. Coordinate j of Q(v) takes
// two values ‖v‖/s apart, so its standard deviation is at most ‖v‖/(2s),
// and the mean of n draws is within 5 standard errors, 5‖v‖/(2s√n), of
// v_j with probability 1 − 6·10⁻⁷ (normal approximation, n large): the
// tolerance. Rounding down instead — a biased quantizer — misses v by
// p_j‖v‖/s, far beyond it for the v chosen, which the test checks too.
// The squared error of one draw is a sum of d independent terms of which
// the mean is measured within 5 of its own standard errors.
func TestQSGDIsUnbiasedWithThePapersVariance(t *testing.T) {
	v := []float64{0.3, -1.7, 0.05, 2.2, -0.9, 0, 1.1, -0.4}
	const n = 200000
	d := float64(len(v))
	norm := floats.Norm(v, 2)
	for _, s := range []int{1, 2, 4, 16} {
		q := QSGD{Levels: s}
		mean := make([]float64, len(v))
		dec := make([]float64, len(v))
		var sq, sq2 float64
		next := stream(uint64(s))
		for range n {
			c := q.Encode(v, next)
			if err := q.Decode(dec, &c); err != nil {
				t.Fatal(err)
			}
			e := 0.0
			for j := range v {
				mean[j] += dec[j] / n
				e += (dec[j] - v[j]) * (dec[j] - v[j])
			}
			sq += e / n
			sq2 += e * e / n
		}
		tol := 5 * norm / (2 * float64(s) * math.Sqrt(n))
		var want float64
		for j := range v {
			a := float64(s) * math.Abs(v[j]) / norm
			p := a - math.Floor(a)
			want += norm * norm / float64(s*s) * p * (1 - p)
			if math.Abs(mean[j]-v[j]) > tol {
				t.Errorf("s = %d: E[Q(v)_%d] = %v, v_%d = %v (tolerance %.2g)", s, j, mean[j], j, v[j], tol)
			}
			if bias := p * norm / float64(s); p > 0.05 && bias < 10*tol {
				t.Fatalf("s = %d, coordinate %d: rounding down's bias %.2g is not far beyond the tolerance %.2g: the test could not fail", s, j, bias, tol)
			}
		}
		bound := math.Min(d/float64(s*s), math.Sqrt(d)/float64(s)) * norm * norm
		se := math.Sqrt((sq2 - sq*sq) / n)
		if want > bound {
			t.Errorf("s = %d: the exact variance %v exceeds the paper's bound %v", s, want, bound)
		}
		if math.Abs(sq-want) > 5*se {
			t.Errorf("s = %d: E‖Q(v) − v‖² measured %v, exact %v (5 standard errors %.2g)", s, sq, want, 5*se)
		}
	}
}

// QSGD's encoding: ⌈log₂(2s + 1)⌉ bits per coordinate, the norm as scale,
// and a vector whose levels s|v_j|/‖v‖ are whole numbers comes back exactly
// (no rounding is drawn). A zero vector sends level 0 everywhere.
func TestQSGDEncoding(t *testing.T) {
	for s, bits := range map[int]int{1: 2, 2: 3, 3: 3, 4: 4, 7: 4, 8: 5, 1 << 20: 22} {
		if got := (QSGD{Levels: s}).Bits(); got != bits {
			t.Errorf("s = %d: %d bits, want %d", s, got, bits)
		}
	}
	q := QSGD{Levels: 5}
	v := []float64{3, -4, 0}
	c := q.Encode(v, stream(1))
	if c.Scale != 5 || len(c.Packed) != 2 || len(c.Index) != 0 {
		t.Fatalf("Q(3, −4, 0) with s = 5: %+v", c)
	}
	got := make([]float64, 3)
	if err := q.Decode(got, &c); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, v) {
		t.Errorf("Q(3, −4, 0) with s = 5 decodes to %v", got)
	}
	zero := q.Encode([]float64{0, 0, 0}, func(string) *rand.Rand { t.Fatal("a zero vector drew"); return nil })
	if err := q.Decode(got, &zero); err != nil || zero.Scale != 0 || !slices.Equal(got, []float64{0, 0, 0}) {
		t.Errorf("Q(0): %+v decodes to %v, %v", zero, got, err)
	}
}

// signSGD sends one bit per coordinate, sign(0) = +1, and decodes to ±1.
func TestSignSGDRoundTrip(t *testing.T) {
	u := []float64{0.5, -2, 0, -1e-300, 7, -3, 1, 1, -1}
	c := SignSGD{}.Encode(u, nil)
	if len(c.Packed) != 2 || c.Packed[0] != 0b00101010 || c.Packed[1] != 0b1 {
		t.Fatalf("signs of %v packed as %08b", u, c.Packed)
	}
	got := make([]float64, len(u))
	if err := (SignSGD{}).Decode(got, &c); err != nil {
		t.Fatal(err)
	}
	if want := []float64{1, -1, 1, -1, 1, -1, 1, 1, -1}; !slices.Equal(got, want) {
		t.Errorf("decoded %v, want %v", got, want)
	}
}

// Every decoder refuses what its encoder never writes.
func TestDecodersRefuseMalformedReplies(t *testing.T) {
	dst := make([]float64, 4)
	for _, c := range []struct {
		what string
		dec  Compressor
		c    Compressed
	}{
		{"top-k, too few", TopK{K: 2}, Compressed{Index: []uint32{1}, Values: []float32{1}}},
		{"top-k, values ≠ indices", TopK{K: 2}, Compressed{Index: []uint32{1, 2}, Values: []float32{1}}},
		{"top-k, out of order", TopK{K: 2}, Compressed{Index: []uint32{2, 1}, Values: []float32{1, 1}}},
		{"top-k, repeated", TopK{K: 2}, Compressed{Index: []uint32{1, 1}, Values: []float32{1, 1}}},
		{"top-k, beyond the model", TopK{K: 2}, Compressed{Index: []uint32{1, 4}, Values: []float32{1, 1}}},
		{"top-k, a scale", TopK{K: 2}, Compressed{Index: []uint32{1, 2}, Values: []float32{1, 1}, Scale: 1}},
		{"top-k, dense", TopK{K: 2}, Compressed{}},
		{"qsgd, short", QSGD{Levels: 4}, Compressed{Scale: 1, Packed: []byte{0}}},
		{"qsgd, code beyond 2s", QSGD{Levels: 4}, Compressed{Scale: 1, Packed: []byte{0x99, 0x9f}}},
		{"qsgd, indices", QSGD{Levels: 4}, Compressed{Index: []uint32{0}, Packed: []byte{0x44, 0x44}}},
		{"signsgd, long", SignSGD{}, Compressed{Packed: []byte{0, 0}}},
		{"signsgd, padding", SignSGD{}, Compressed{Packed: []byte{0x10}}},
		{"signsgd, a scale", SignSGD{}, Compressed{Scale: 1, Packed: []byte{0}}},
		{"none", Dense{}, Compressed{}},
	} {
		if err := c.dec.Decode(dst, &c.c); err == nil {
			t.Errorf("%s: %+v accepted", c.what, c.c)
		}
	}
}
