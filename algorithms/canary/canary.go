// Package canary builds the canary examples of an audit of DP-SGD's
// sample-level guarantee (privacy.audit with canary gradient or example).
// They sit in the audited client's dataset beside its real examples, each
// in or out of it:
//
//   - a gradient canary (gradient space) is an example whose per-example
//     gradient is C·u whatever the model, u a unit direction: on a
//     coordinate that none of the client's examples touch (a Dirac canary,
//     Nasr et al., USENIX Security 2023), or a sparse random direction;
//   - an example canary (input space) is an example (x, y) the loss takes
//     as any other: an input on a feature the client's data leave at zero,
//     or along a random direction of the features (out of distribution in
//     either case), with the label of a random real example, large enough
//     that its gradient is clipped at the initial model.
//
// A client that audits draws its Poisson batches over the N real examples
// and the m canaries alike, at the fixed rate q = B/(N + m) whether a canary
// is in or out — the rate of the dataset holding them all, of which the runs
// without a canary are the add/remove neighbours — and adds the drawn
// canaries' clipped gradients (Examples.AddClipped) to its sum before the
// noise. Federated averaging's agent 0 is the audited client
// (algorithms/fedavg, Local.Canaries); the auditor (families/fedavg) builds
// the canaries and knows them.
package canary

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/privacy/clip"
)

// Kind is the kind of the canary examples.
type Kind int

const (
	// Gradient is a gradient-space canary: its clipped gradient is
	// C·u at every model.
	Gradient Kind = iota
	// Example is an input-space canary: an example (x, y).
	Example
)

// Direction is a unit vector given by its non-zero coordinates, in
// increasing order of Index.
type Direction struct {
	Index []int
	Value []float64
}

// Dot returns ⟨u, v⟩.
func (u Direction) Dot(v []float64) float64 {
	var s float64
	for i, j := range u.Index {
		s += u.Value[i] * v[j]
	}
	return s
}

// AddScaledTo adds a·u to dst.
func (u Direction) AddScaledTo(dst []float64, a float64) {
	for i, j := range u.Index {
		dst[j] += a * u.Value[i]
	}
}

// Examples are the canary examples of the audited client's dataset.
type Examples struct {
	Kind Kind
	// Directions are the gradient canaries' directions u, and Set the
	// example canaries' inputs (dense) and labels.
	Directions []Direction
	Set        *data.Set
	// Dirac reports whether the canaries lie on coordinates (gradient) or
	// features (example) that none of the client's real examples touches.
	Dirac bool
	// Included says whether each canary is in the dataset.
	Included []bool
	// Opposite makes a gradient canary that is out an example whose
	// gradient is −C·u (its replace-one neighbour) rather than absent.
	Opposite bool
	// Observe makes the client record every step it takes (the white-box
	// view: fedavg.ObsAuditSteps).
	Observe bool
}

// Len returns the number of canaries m.
func (c *Examples) Len() int {
	if c == nil {
		return 0
	}
	return len(c.Included)
}

// AddClipped adds to dst the clipped gradients at the model w of the
// canaries drawn into a step's batch (indices in [0, m)), as the client adds
// its real examples' (clip norm C, loss l), and returns how many it added:
// C·u for a gradient canary that is in (−C·u for one that is out under
// Opposite, nothing otherwise), the clipped gradient of the example for an
// example canary that is in. tmp and scratch have the length of w.
func (c *Examples) AddClipped(dst, w []float64, l loss.Loss, drawn []int, C float64, tmp, scratch []float64) int {
	added := 0
	for _, i := range drawn {
		sign := 1.0
		switch {
		case c.Included[i]:
		case c.Opposite && c.Kind == Gradient:
			sign = -1
		default:
			continue
		}
		c.Gradient(tmp, w, l, i, C, scratch)
		floats.AddScaled(dst, sign, tmp)
		added++
	}
	return added
}

// Gradient sets dst to canary i's clipped gradient at w: C·u for a gradient
// canary — built as a vector and clipped to C by clip.L2, which leaves it
// as it is (NewGradients keeps its norm at most C) —, the data
// term's gradient of the example clipped to C for an example canary.
// scratch has the length of w; dst must alias neither.
func (c *Examples) Gradient(dst, w []float64, l loss.Loss, i int, C float64, scratch []float64) {
	if c.Kind == Gradient {
		clear(dst)
		c.Directions[i].AddScaledTo(dst, C)
		clip.L2(dst, C)
		return
	}
	l.ClippedGradSum(dst, w, c.Set, []int{i}, C, scratch)
}

// UntouchedFeatures returns, in increasing order, the features that are
// zero in every example of set.
func UntouchedFeatures(set *data.Set) []int {
	touched := make([]bool, set.Dim)
	row := make([]float64, set.Dim)
	for n := range set.Len() {
		set.DenseRow(row, n)
		for j, x := range row {
			if x != 0 {
				touched[j] = true
			}
		}
	}
	var free []int
	for j, t := range touched {
		if !t {
			free = append(free, j)
		}
	}
	return free
}

// RandomSupport is the number of non-zero coordinates of a random canary
// direction (at most the dimension): ±1/8 on 64 coordinates drawn at
// random. In d dimensions two such directions overlap on 64²/d coordinates
// on average, so m of them are nearly orthogonal for d well above 64, and
// they cost 64 numbers each rather than d.
const RandomSupport = 64

// NewGradients draws from r the directions of m gradient canaries
// in dim dimensions for the clip norm C: Dirac canaries on m distinct
// coordinates of free (the coordinates no real example's gradient
// touches) if it holds that many, random directions otherwise (±1/√k on k
// = min(dim, RandomSupport) coordinates, signs and coordinates uniform).
// Each direction is kept (by scaling it down by an ulp if rounding makes
// it longer) so that clip.L2 leaves C·u unchanged. It reports whether the
// canaries are Dirac.
func NewGradients(r *rand.Rand, m, dim int, free []int, C float64) (dirs []Direction, dirac bool) {
	dirs = make([]Direction, m)
	if len(free) >= m {
		for i, j := range distinct(r, len(free), m) {
			dirs[i] = Direction{Index: []int{free[j]}, Value: []float64{1}}
		}
		return dirs, true
	}
	k := min(dim, RandomSupport)
	v := make([]float64, dim)
	for i := range dirs {
		idx := distinct(r, dim, k)
		slices.Sort(idx)
		u := Direction{Index: idx, Value: make([]float64, k)}
		for j := range u.Value {
			u.Value[j] = 1 / math.Sqrt(float64(k))
			if r.IntN(2) == 1 {
				u.Value[j] = -u.Value[j]
			}
		}
		for {
			clear(v)
			u.AddScaledTo(v, C)
			if _, clipped := clip.L2(v, C); !clipped {
				break
			}
			floats.Scale(1-0x1p-52, u.Value)
		}
		dirs[i] = u
	}
	return dirs, false
}

// distinct returns k distinct integers of [0, n) drawn from r (Floyd's
// algorithm), in the order drawn.
func distinct(r *rand.Rand, n, k int) []int {
	seen := make(map[int]bool, k)
	out := make([]int, 0, k)
	for j := n - k; j < n; j++ {
		t := r.IntN(j + 1)
		if seen[t] {
			t = j
		}
		seen[t] = true
		out = append(out, t)
	}
	return out
}

// MaxScale bounds the amplitude of an example canary's input.
const MaxScale = 1 << 30

// NewExamples draws from r m example canaries for the audited client's dataset
// set under the loss l, for the clip norm C: canary i's input is a·e_j on a
// distinct feature j of free (the features zero in every real example) if
// free holds m of them, and a·v otherwise, v a random direction of the
// features as NewGradients draws them; its label is that of a real
// example drawn at random. The amplitude a is the least power of two (up to
// MaxScale) at which the canary's gradient at the model w0 reaches
// 2C, so that clipping bounds it while the model learns it. It reports
// whether the inputs are Dirac.
func NewExamples(r *rand.Rand, m int, set *data.Set, l loss.Loss, w0 []float64, free []int, C float64) (*data.Set, bool) {
	dirs, dirac := NewGradients(r, m, set.Dim, free, 1)
	out := &data.Set{Dim: set.Dim, X: make([]float64, m*set.Dim), Y: make([]float64, m)}
	g := make([]float64, len(w0))
	term := l
	term.Rho = 0
	for i, u := range dirs {
		out.Y[i] = set.Y[r.IntN(set.Len())]
		x := out.Row(i)
		for a := 1.0; ; a *= 2 {
			clear(x)
			u.AddScaledTo(x, a)
			term.Grad(g, w0, out, []int{i}, nil)
			if floats.Norm(g, 2) >= 2*C || a >= MaxScale {
				break
			}
		}
	}
	return out, dirac
}

// RandomDirection draws a direction uniform on the unit sphere of dimension
// dim from r.
func RandomDirection(r *rand.Rand, dim int) []float64 {
	u := make([]float64, dim)
	for j := range u {
		u[j] = r.NormFloat64()
	}
	floats.Scale(1/floats.Norm(u, 2), u)
	return u
}
