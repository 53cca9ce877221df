package compress

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"
)

// The built-in compressions: top-k with error feedback, QSGD and signSGD.

// TopK is top-k sparsification (Aji & Heafield, "Sparse communication for
// distributed gradient descent", EMNLP 2017) with error feedback (Stich,
// Cordonnier & Jaggi, "Sparsified SGD with memory", NeurIPS 2018): an agent
// sends the k coordinates of largest magnitude of its reply plus its
// residual, and keeps the rest as its new residual, so that what it leaves
// out is sent in later rounds. The values travel as 32-bit floats, as in
// the papers' systems; the residual keeps what that rounding leaves out
// too, so that residual + sent = reply + old residual exactly.
type TopK struct {
	K        int  `yaml:"k" range:"[1, inf)" doc:"coordinates sent per reply (all of them when the model has fewer)"`
	Feedback bool `yaml:"feedback" doc:"error feedback: keep what a reply leaves out (its residual) and add it to the next one"`
}

// NewEncoder implements Compressor.
func (t TopK) NewEncoder(dim int) Encoder {
	e := &topKEncoder{k: min(t.K, dim)}
	if t.Feedback {
		e.residual = make([]float64, dim)
	}
	return e
}

// Decode implements Compressor: the k values at their indices, zero
// elsewhere.
func (t TopK) Decode(dst []float64, c *Compressed) error {
	k := min(t.K, len(dst))
	switch {
	case len(c.Index) != k || len(c.Values) != k:
		return fmt.Errorf("top-k: %d indices and %d values, want k = %d of each", len(c.Index), len(c.Values), k)
	case c.Scale != 0 || len(c.Packed) != 0:
		return errors.New("top-k: a scale or packed codes")
	}
	clear(dst)
	for i, j := range c.Index {
		if int(j) >= len(dst) || i > 0 && j <= c.Index[i-1] {
			return fmt.Errorf("top-k: index %d out of order or beyond the model's %d coordinates", j, len(dst))
		}
		dst[j] = float64(c.Values[i])
	}
	return nil
}

// topKEncoder is one agent's top-k encoder: its residual (nil without
// error feedback).
type topKEncoder struct {
	k        int
	residual []float64
}

// Encode implements Encoder.
func (e *topKEncoder) Encode(u []float64, _ func(string) *rand.Rand) Compressed {
	acc := u
	if e.residual != nil {
		for j, x := range u {
			e.residual[j] += x
		}
		acc = e.residual
	}
	index := TopIndices(acc, e.k)
	c := Compressed{Index: make([]uint32, len(index)), Values: make([]float32, len(index))}
	for i, j := range index {
		c.Index[i], c.Values[i] = uint32(j), float32(acc[j])
		if e.residual != nil {
			e.residual[j] -= float64(c.Values[i]) // exact: acc[j] and its float32 rounding are within a factor 2
		}
	}
	return c
}

// TopIndices returns, in ascending order, the indices of the k entries of
// x of largest magnitude, ties to the lower index (k ≤ len(x)).
func TopIndices(x []float64, k int) []int {
	order := make([]int, len(x))
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(math.Abs(x[b]), math.Abs(x[a])); c != 0 {
			return c
		}
		return a - b
	})
	top := order[:k]
	slices.Sort(top)
	return top
}

// QSGD is the stochastic quantization of Alistarh, Grubic, Li, Tomioka and
// Vojnovic ("QSGD: communication-efficient SGD via gradient quantization
// and encoding", NeurIPS 2017): coordinate j of v is sent as
// ‖v‖·sgn(v_j)·l_j/s, with l_j = ⌊s|v_j|/‖v‖⌋ + 1 with probability
// s|v_j|/‖v‖ − ⌊s|v_j|/‖v‖⌋ and ⌊s|v_j|/‖v‖⌋ otherwise, so that the
// quantized vector is unbiased with variance at most min(d/s², √d/s)‖v‖²
// (their Lemma 3.1). The norm travels as a 64-bit float (Scale) — the
// decoded vector is then exactly unbiased — and the signed levels
// sgn(v_j)·l_j + s as fixed-width codes of ⌈log₂(2s + 1)⌉ bits (Packed):
// the paper's simple encoding, not its Elias coding of the levels. Each
// coordinate draws one uniform number from the sender's Stream
// stream.
type QSGD struct {
	Levels int `yaml:"levels" range:"[1, 1048576]" doc:"quantization levels s of a coordinate's magnitude: each is sent in ⌈log₂(2s + 1)⌉ bits"`
}

// NewEncoder implements Compressor: QSGD keeps no state.
func (q QSGD) NewEncoder(int) Encoder { return q }

// Bits returns the width of a coordinate's code, ⌈log₂(2s + 1)⌉.
func (q QSGD) Bits() int { return bits.Len(uint(2 * q.Levels)) }

// Encode implements Encoder. A zero or non-finite norm sends level 0
// everywhere, without drawing (a non-finite one decodes to NaN: the run has
// diverged).
func (q QSGD) Encode(u []float64, stream func(string) *rand.Rand) Compressed {
	s := q.Levels
	norm := floats.Norm(u, 2)
	var levels func(j int) int
	if norm > 0 && !math.IsInf(norm, 1) {
		r := stream(Stream)
		lv := make([]int, len(u))
		for j, x := range u {
			a := math.Abs(x) / norm * float64(s)
			l := int(a)
			if r.Float64() < a-float64(l) {
				l++
			}
			l = min(l, s) // |x| ≤ ‖u‖ up to the rounding of the norm
			if x < 0 {
				l = -l
			}
			lv[j] = l
		}
		levels = func(j int) int { return lv[j] }
	} else {
		levels = func(int) int { return 0 }
	}
	return Compressed{Scale: norm, Packed: packCodes(len(u), q.Bits(), func(j int) uint32 { return uint32(levels(j) + s) })}
}

// Decode implements Compressor: ‖v‖·l_j/s for each signed level l_j.
func (q QSGD) Decode(dst []float64, c *Compressed) error {
	if len(c.Index) != 0 || len(c.Values) != 0 {
		return errors.New("qsgd: indices or values")
	}
	s := q.Levels
	bad := -1
	err := unpackCodes(c.Packed, len(dst), q.Bits(), func(j int, v uint32) {
		if int(v) > 2*s {
			bad = int(v)
		}
		dst[j] = c.Scale * (float64(int(v)-s) / float64(s))
	})
	switch {
	case err != nil:
		return fmt.Errorf("qsgd: %w", err)
	case bad >= 0:
		return fmt.Errorf("qsgd: code %d beyond 2s = %d", bad, 2*s)
	}
	return nil
}

// SignSGD is the compression of signSGD (Bernstein, Wang,
// Azizzadenesheli and Anandkumar, "signSGD: compressed optimisation for
// non-convex problems", ICML 2018): an agent sends the sign of every
// coordinate of its reply, one bit each (Packed; sign(0) = +1), which the
// server decodes to ±1. Its server is the majority vote (Voting,
// fedavg.MajorityRule): the mean of the signs is not the paper's algorithm.
type SignSGD struct{}

// NewEncoder implements Compressor: signSGD keeps no state.
func (s SignSGD) NewEncoder(int) Encoder { return s }

// Encode implements Encoder: bit j is set when u_j < 0.
func (SignSGD) Encode(u []float64, _ func(string) *rand.Rand) Compressed {
	return Compressed{Packed: packCodes(len(u), 1, func(j int) uint32 {
		if u[j] < 0 {
			return 1
		}
		return 0
	})}
}

// Decode implements Compressor: −1 where the bit is set, +1 elsewhere.
func (SignSGD) Decode(dst []float64, c *Compressed) error {
	if len(c.Index) != 0 || len(c.Values) != 0 || c.Scale != 0 {
		return errors.New("signsgd: indices, values or a scale")
	}
	err := unpackCodes(c.Packed, len(dst), 1, func(j int, v uint32) { dst[j] = 1 - 2*float64(v) })
	if err != nil {
		return fmt.Errorf("signsgd: %w", err)
	}
	return nil
}

// Votes implements Voting: signSGD's signs are combined by majority vote.
func (SignSGD) Votes() {}
