package loss

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

// The multi-class models (Softmax, MLP) on a batch of n samples, as matrices:
//
//	Softmax: Z = X W₁ᵀ + 1b₁ᵀ                       (n×K)
//	MLP:     A = X W₁ᵀ + 1b₁ᵀ, H = σ(A),            (n×H)
//	         Z = H W₂ᵀ + 1b₂ᵀ                        (n×K)
//	P = softmax of each row of Z, ℓ_i = −ln P_{i,y_i}
//
// and backwards, with D = diag(a)(P − Y) for the sample weights a and the
// one-hot labels Y: ∇W₂ = Dᵀ H, ∇b₂ = Dᵀ1, D_A = (D W₂) ∘ σ'(A), ∇W₁ = D_Aᵀ X,
// ∇b₁ = D_Aᵀ1 (for Softmax ∇W₁ = Dᵀ X, ∇b₁ = Dᵀ1). Each product is one call
// of the dense kernels (kernels.go: gonum's order of operations, in AVX2
// where the processor has it) over the whole batch; sparse data fall back to
// loops over the stored entries for the products with X.
//
// The flat parameter vector θ stores, row-major, W₁ (K×M for Softmax, H×M for
// the MLP), b₁, and for the MLP W₂ (K×H) and b₂.

// chunkRows is how many samples the whole-dataset passes (FullGrad, Risk,
// Evaluate) push through the BLAS calls at once: large enough that the calls
// run at full speed, small enough that the work buffers stay in cache.
const chunkRows = 256

// work holds the buffers of one multi-class evaluation; they grow to the
// largest batch seen and are reused through workPool, so that a local step
// allocates nothing.
type work struct {
	x     []float64 // gathered or decoded dense samples, n×M
	z     []float64 // logits, then probabilities, then output deltas D: n×K
	a     []float64 // hidden pre-activations A: n×H
	h     []float64 // hidden activations H: n×H
	dh    []float64 // hidden deltas D_A: n×H
	theta []float64 // θ₀ + w, when the loss has an Origin
	idx   []int     // a copy of the batch's sample indices (see multiGrad)
	nll   []float64 // −ln p_y of every sample of an evaluation
	cw    *cnnWork  // a CNN's buffers (cnn_pass.go)
}

// workPool recycles work buffers. A pool rather than buffers owned by each
// agent keeps the Loss API of every protocol unchanged (Grad receives no
// workspace), is safe for concurrent runs, and in a single-threaded run hands
// the same warm buffers to every agent in turn. Which buffer a call gets
// never affects its result: every buffer is overwritten before it is read.
var workPool = sync.Pool{New: func() any { return new(work) }}

// grow returns b resized to n, reallocating only when its capacity is short.
func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}

// general views data as a row-major rows×cols matrix.
func general(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

// net is a view of a parameter (or gradient) vector as the model's layers.
type net struct {
	w1 blas64.General // K×M (Softmax) or H×M (MLP)
	b1 []float64
	w2 blas64.General // K×H (MLP only)
	b2 []float64
	// all is the whole vector, which a CNN's layers (Net) slice themselves.
	all []float64
}

// view returns the layers of theta for data with m features.
func (l Loss) view(theta []float64, m int) net {
	k := l.Classes
	switch l.Kind {
	case Softmax:
		return net{w1: general(k, m, theta[:k*m]), b1: theta[k*m : k*m+k]}
	case CNN:
		return net{all: theta}
	}
	h := l.Hidden
	o := h * m
	v := net{w1: general(h, m, theta[:o]), b1: theta[o : o+h]}
	o += h
	v.w2 = general(k, h, theta[o:o+k*h])
	o += k * h
	v.b2 = theta[o : o+k]
	return v
}

// params returns θ = θ₀ + w (in wk) or w itself without an Origin.
func (l Loss) params(wk *work, w []float64) []float64 {
	if l.Origin == nil {
		return w
	}
	wk.theta = grow(wk.theta, len(w))
	floats.AddTo(wk.theta, l.Origin, w)
	return wk.theta
}

// batch is the n samples one pass works on: samples idx of s, or the n
// consecutive samples from lo. Dense and coded samples are also an n×M
// matrix x: a view of s.X for consecutive dense samples, rows decoded into
// the work buffer otherwise.
type batch struct {
	s   *data.Set
	idx []int
	lo  int
	n   int
	x   blas64.General
}

// sample returns the index in s of the batch's i-th sample.
func (b *batch) sample(i int) int {
	if b.idx != nil {
		return b.idx[i]
	}
	return b.lo + i
}

// gather returns the batch of samples idx of s, copying (or decoding) dense
// and coded rows into wk.x.
func (wk *work) gather(s *data.Set, idx []int) batch {
	b := batch{s: s, idx: idx, n: len(idx)}
	if !s.Sparse() {
		m := s.Dim
		wk.x = grow(wk.x, len(idx)*m)
		for i, n := range idx {
			s.DenseRow(wk.x[i*m:(i+1)*m], n)
		}
		b.x = general(len(idx), m, wk.x)
	}
	return b
}

// span returns the batch of the n consecutive samples of s from lo: a view
// of dense rows, coded rows decoded into wk.x.
func (wk *work) span(s *data.Set, lo, n int) batch {
	b := batch{s: s, lo: lo, n: n}
	switch {
	case s.X != nil:
		b.x = general(n, s.Dim, s.X[lo*s.Dim:(lo+n)*s.Dim])
	case s.Coded != nil:
		m := s.Dim
		wk.x = grow(wk.x, n*m)
		for i := range n {
			s.DenseRow(wk.x[i*m:(i+1)*m], lo+i)
		}
		b.x = general(n, m, wk.x)
	}
	return b
}

// inputLayer sets dst (n×out) to X Wᵀ + 1bᵀ for the batch's samples X and the
// out×M weights w.
func inputLayer(dst blas64.General, b *batch, w blas64.General, bias []float64) {
	if !b.s.Sparse() {
		clearRows(dst)
		gemmNT(dst, b.x, w)
	} else {
		s := b.s
		for i := 0; i < b.n; i++ {
			row := dst.Data[i*dst.Stride : i*dst.Stride+dst.Cols]
			clear(row)
			n := b.sample(i)
			for p := s.RowPtr[n]; p < s.RowPtr[n+1]; p++ {
				c, v := int(s.Col[p]), s.Val[p]
				for j := range row {
					row[j] += v * w.Data[j*w.Stride+c]
				}
			}
		}
	}
	addRows(dst, bias)
}

// inputGrad adds Dᵀ X to g (out×M) and Dᵀ1 to gb for the n×out deltas d.
func inputGrad(g blas64.General, gb []float64, d blas64.General, b *batch) {
	if !b.s.Sparse() {
		gemmTN(g, d, b.x)
	} else {
		s := b.s
		for i := 0; i < b.n; i++ {
			drow := d.Data[i*d.Stride : i*d.Stride+d.Cols]
			n := b.sample(i)
			for p := s.RowPtr[n]; p < s.RowPtr[n+1]; p++ {
				c, v := int(s.Col[p]), s.Val[p]
				for j, dj := range drow {
					g.Data[j*g.Stride+c] += dj * v
				}
			}
		}
	}
	sumRows(gb, d)
}

// clearRows sets every entry of m to zero.
func clearRows(m blas64.General) {
	for i := 0; i < m.Rows; i++ {
		clear(m.Data[i*m.Stride : i*m.Stride+m.Cols])
	}
}

// addRows adds v to every row of m.
func addRows(m blas64.General, v []float64) {
	for i := 0; i < m.Rows; i++ {
		floats.Add(m.Data[i*m.Stride:i*m.Stride+m.Cols], v)
	}
}

// sumRows adds the rows of m to dst.
func sumRows(dst []float64, m blas64.General) {
	for i := 0; i < m.Rows; i++ {
		floats.Add(dst, m.Data[i*m.Stride:i*m.Stride+m.Cols])
	}
}

// forward computes the logits Z (n×K, in wk.z) of the batch, and for the MLP
// the hidden pre-activations and activations in wk.a and wk.h.
func (l Loss) forward(wk *work, v *net, b *batch) blas64.General {
	k := l.Classes
	if l.Kind == CNN {
		return general(b.n, k, l.Net.forward(wk.cnn(l.Net), v.all, b.x.Data, b.n))
	}
	wk.z = grow(wk.z, b.n*k)
	z := general(b.n, k, wk.z)
	if l.Kind == Softmax {
		inputLayer(z, b, v.w1, v.b1)
		return z
	}
	h := l.Hidden
	wk.a, wk.h = grow(wk.a, b.n*h), grow(wk.h, b.n*h)
	inputLayer(general(b.n, h, wk.a), b, v.w1, v.b1)
	if l.Activation == Tanh {
		for i, a := range wk.a {
			wk.h[i] = math.Tanh(a)
		}
	} else {
		for i, a := range wk.a {
			wk.h[i] = max(a, 0)
		}
	}
	clearRows(z)
	gemmNT(z, general(b.n, h, wk.h), v.w2)
	addRows(z, v.b2)
	return z
}

// backward adds to the gradient layers g the gradient of Σ_i ℓ_i weighted as
// in d, the output deltas D (n×K) that forward's logits were turned into.
func (l Loss) backward(wk *work, v, g *net, b *batch, d blas64.General) {
	if l.Kind == CNN {
		l.Net.backward(wk.cnn(l.Net), v.all, g.all, b.n)
		return
	}
	if l.Kind == MLP {
		d = l.hiddenDeltas(wk, v, g, b, d)
	}
	inputGrad(g.w1, g.b1, d, b)
}

// hiddenDeltas adds the output layer's gradient (∇W₂ = Dᵀ H, ∇b₂ = Dᵀ1) to
// g and returns the hidden deltas D_A = (D W₂) ∘ σ'(A) of the MLP.
func (l Loss) hiddenDeltas(wk *work, v, g *net, b *batch, d blas64.General) blas64.General {
	h := l.Hidden
	hm := general(b.n, h, wk.h)
	gemmTN(g.w2, d, hm)
	sumRows(g.b2, d)
	wk.dh = grow(wk.dh, b.n*h)
	dh := general(b.n, h, wk.dh)
	clear(wk.dh)
	gemmNN(dh, d, v.w2)
	if l.Activation == Tanh {
		for i, t := range wk.h {
			wk.dh[i] *= 1 - t*t
		}
	} else {
		for i, a := range wk.a {
			if a <= 0 {
				wk.dh[i] = 0
			}
		}
	}
	return dh
}

// softmaxRow replaces the logits z by the probabilities softmax(z) and
// returns nllRow(z, y).
func softmaxRow(z []float64, y int) (nll float64, argmax int) {
	lse, argmax := logSumExp(z)
	nll = lse - z[y]
	for c, v := range z {
		z[c] = math.Exp(v - lse)
	}
	return nll, argmax
}

// nllRow returns −ln softmax(z)_y and the arg max of the logits z (the lowest
// class on ties), leaving z as it is: what an evaluation needs, without the
// probabilities.
func nllRow(z []float64, y int) (nll float64, argmax int) {
	lse, argmax := logSumExp(z)
	return lse - z[y], argmax
}

// logSumExp returns ln Σ_c e^{z_c}, computed stably by shifting z by its
// maximum, and the arg max of z (the lowest class on ties).
func logSumExp(z []float64) (lse float64, argmax int) {
	top := z[0]
	for c, v := range z {
		if v > top {
			top, argmax = v, c
		}
	}
	var sum float64
	for _, v := range z {
		sum += math.Exp(v - top)
	}
	return top + math.Log(sum), argmax
}

// toDeltas turns row i of the probabilities into the output deltas
// a·(p − e_y).
func toDeltas(row []float64, y int, a float64) {
	row[y]--
	floats.Scale(a, row)
}

// multiGrad is Grad for the multi-class models.
func (l Loss) multiGrad(dst, w []float64, s *data.Set, idx []int, a []float64) {
	if l.Kind == CNN {
		l.cnnGrad(dst, w, s, idx, a)
		return
	}
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	theta := l.params(wk, w)
	v, g := l.view(theta, s.Dim), l.view(dst, s.Dim)
	clear(dst)
	// The batch holds a copy of idx: what the batch refers to escapes to
	// the heap (escape analysis follows it into the kernels' checks), and
	// idx itself would — a heap allocation in every caller that passes a
	// slice of a local array, such as one sample's gradient.
	wk.idx = append(wk.idx[:0], idx...)
	b := wk.gather(s, wk.idx)
	z := l.forward(wk, &v, &b)
	total := l.deltas(z, s, idx, a)
	l.backward(wk, &v, &g, &b, z)
	addScaled(dst, 2*l.Rho*total, theta)
}

// multiFullGrad is FullGrad for the multi-class models.
func (l Loss) multiFullGrad(dst, w []float64, s *data.Set) {
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	theta := l.params(wk, w)
	v, g := l.view(theta, s.Dim), l.view(dst, s.Dim)
	clear(dst)
	k, inv := l.Classes, 1/float64(s.Len())
	rows := l.rows()
	for lo := 0; lo < s.Len(); lo += rows {
		b := wk.span(s, lo, min(rows, s.Len()-lo))
		z := l.forward(wk, &v, &b)
		for i := 0; i < b.n; i++ {
			row := z.Data[i*k : (i+1)*k]
			y := int(s.Y[lo+i])
			softmaxRow(row, y)
			toDeltas(row, y, inv)
		}
		l.backward(wk, &v, &g, &b, z)
	}
	addScaled(dst, 2*l.Rho, theta)
}

// rows returns how many samples a whole-dataset pass takes at once:
// chunkRows, or cnnBlock for a CNN, whose activations are much larger.
func (l Loss) rows() int {
	if l.Kind == CNN {
		return cnnBlock
	}
	return chunkRows
}

// cnnGrad is Grad for a CNN: the batch in blocks of cnnBlock examples, each
// example's deltas weighted as multiGrad weights them.
func (l Loss) cnnGrad(dst, w []float64, s *data.Set, idx []int, a []float64) {
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	theta := l.params(wk, w)
	v, g := l.view(theta, s.Dim), l.view(dst, s.Dim)
	clear(dst)
	k := l.Classes
	uniform := 1 / float64(len(idx))
	var total float64
	for lo := 0; lo < len(idx); lo += cnnBlock {
		part := idx[lo:min(len(idx), lo+cnnBlock)]
		wk.idx = append(wk.idx[:0], part...)
		b := wk.gather(s, wk.idx)
		z := l.forward(wk, &v, &b)
		for i, n := range part {
			ai := uniform
			if a != nil {
				ai = a[lo+i]
			}
			total += ai
			row := z.Data[i*k : (i+1)*k]
			y := int(s.Y[n])
			softmaxRow(row, y)
			toDeltas(row, y, ai)
		}
		l.backward(wk, &v, &g, &b, z)
	}
	addScaled(dst, 2*l.Rho*total, theta)
}

// multiPass runs the forward pass over the samples [lo, hi) of s in chunks
// and returns the summed −ln p_y, taken in sample order, and the number of
// samples whose arg max is not their class. With nll not nil it also stores
// sample i's −ln p_y in nll[i−lo].
func (l Loss) multiPass(wk *work, theta []float64, s *data.Set, lo, hi int, nll []float64) (sum float64, wrong int) {
	v := l.view(theta, s.Dim)
	k, rows := l.Classes, l.rows()
	for start := lo; start < hi; start += rows {
		b := wk.span(s, start, min(rows, hi-start))
		z := l.forward(wk, &v, &b)
		for i := 0; i < b.n; i++ {
			y := int(s.Y[start+i])
			q, top := nllRow(z.Data[i*k:(i+1)*k], y)
			sum += q
			if nll != nil {
				nll[start+i-lo] = q
			}
			if top != y {
				wrong++
			}
		}
	}
	return sum, wrong
}

// multiValue is Value for the multi-class models.
func (l Loss) multiValue(w []float64, s *data.Set, n int) float64 {
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	theta := l.params(wk, w)
	nll, _ := l.multiPass(wk, theta, s, n, n+1, nil)
	return nll + l.Rho*floats.Dot(theta, theta)
}

// multiRisk is Risk for the multi-class models.
func (l Loss) multiRisk(w []float64, s *data.Set) float64 {
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	theta := l.params(wk, w)
	nll, _ := l.multiPass(wk, theta, s, 0, s.Len(), nil)
	return nll/float64(s.Len()) + l.Rho*floats.Dot(theta, theta)
}

// evalChunk is how many samples of an evaluation one core takes at a time.
// An evaluation of fewer samples runs on the calling goroutine alone.
const evalChunk = 1024

// multiEvaluate is Evaluate for the multi-class models: the runner's
// evaluation of every round, the largest cost of a run on a large test set
// (10 000 × 7850 multiply-adds for LR-MNIST). The samples are split into
// fixed chunks of evalChunk, evaluated on all cores; each sample's −ln p_y
// is kept, and they are summed afterwards in sample order, exactly as one
// pass over the samples sums them, so the result is the same bit for bit at
// any GOMAXPROCS. (A sample's logits do not depend on the chunk it is
// computed in: each is one laneDot, see gemmNT.)
func (l Loss) multiEvaluate(w []float64, s *data.Set) Evaluation {
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	theta := l.params(wk, w)
	n := s.Len()
	chunks := (n + evalChunk - 1) / evalChunk
	workers := min(runtime.GOMAXPROCS(0), chunks)
	if workers <= 1 {
		nll, wrong := l.multiPass(wk, theta, s, 0, n, nil)
		return evaluation(wrong, n, nll)
	}
	wk.nll = grow(wk.nll, n)
	rows := wk.nll
	var next, wrong atomic.Int64
	pass := func(wk *work) {
		for {
			c := int(next.Add(1)) - 1
			if c >= chunks {
				return
			}
			lo, hi := c*evalChunk, min(n, (c+1)*evalChunk)
			_, bad := l.multiPass(wk, theta, s, lo, hi, rows[lo:hi])
			wrong.Add(int64(bad))
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(func() {
			own := workPool.Get().(*work)
			defer workPool.Put(own)
			pass(own)
		})
	}
	pass(wk)
	wg.Wait()
	var nll float64
	for _, q := range rows {
		nll += q
	}
	return evaluation(int(wrong.Load()), n, nll)
}
