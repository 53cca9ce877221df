package loss

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

// ClippedGradSum sets dst to Σ_b clip_c(∇ℓ(w; x_{idx[b]}, y_{idx[b]})), the
// sum of the per-example gradients of the data term, each scaled to ℓ2 norm
// at most c, and returns how many were scaled: the clipped sum of DP-SGD
// (Abadi et al., CCS 2016, Algorithm 1), to which the caller adds
// N(0, (zc)²I) noise. The regularizer's gradient 2ρθ is left out: it does
// not depend on the data, so DP-SGD adds it after the noise without
// spending privacy. Every model maple has (least squares, logistic,
// softmax, MLP, CNN) works; the first four one example at a time, except
// softmax regression on dense or coded data, which takes a batched path
// with the same result bit for bit (softmaxClipped). A CNN takes a batched
// path with per-example norms (cnnClipped), equal to the one-example sums
// to rounding. scratch must have length len(w); dst must not alias w or
// scratch.
func (l Loss) ClippedGradSum(dst, w []float64, s *data.Set, idx []int, c float64, scratch []float64) (clipped int) {
	if !(c > 0) {
		panic(fmt.Sprintf("loss: clipping norm %v must be positive", c))
	}
	if l.Kind == CNN {
		return l.cnnClipped(dst, w, s, idx, c)
	}
	if l.Kind == Softmax && !s.Sparse() {
		if n, ok := l.softmaxClipped(dst, w, s, idx, c); ok {
			return n
		}
	}
	dataTerm := l
	dataTerm.Rho = 0
	clear(dst)
	var one [1]int
	for _, n := range idx {
		one[0] = n
		dataTerm.Grad(scratch, w, s, one[:], nil)
		if norm := math.Sqrt(laneDot(scratch, scratch)); norm > c {
			addScaled(dst, c/norm, scratch)
			clipped++
		} else {
			floats.Add(dst, scratch)
		}
	}
	return clipped
}

// softmaxClipped is ClippedGradSum for softmax regression on dense or coded
// data, computed by blocks of examples instead of one gradient at a time:
// the logits of a block are one product (each example's the same dot
// products as alone), and each example's gradient g = (p − e_y) ⊗ [x; 1]
// is never stored — its squared norm is summed in laneDot's lanes from the
// deltas and the features (sqLanes), and its clipped multiple added to dst
// by axpyScaled, in the order of the examples. The one-example path stores
// g_i = 0 + d_c·x_j (+ 0·θ_i, its zero regularizer) where this one uses
// d_c·x_j: they differ at most in the sign of a zero, which neither the
// square nor the sum into dst sees (dst starts at +0, and a sum that starts
// at +0 never becomes −0) — as long as θ is finite, which ok = false
// reports otherwise, to take the one-example path.
func (l Loss) softmaxClipped(dst, w []float64, s *data.Set, idx []int, c float64) (clipped int, ok bool) {
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	theta := l.params(wk, w)
	for _, v := range theta {
		if v-v != 0 { // NaN or ±Inf
			return 0, false
		}
	}
	k, m := l.Classes, s.Dim
	v := l.view(theta, m)
	clear(dst)
	gw, gb := dst[:k*m], dst[k*m:k*m+k]
	dim := k * (m + 1)
	var coef, scale [chunkRows]float64
	var off [chunkRows]int
	var lanes [4][4]float64
	for lo := 0; lo < len(idx); lo += chunkRows {
		part := idx[lo:min(len(idx), lo+chunkRows)]
		n := len(part)
		wk.idx = append(wk.idx[:0], part...)
		b := wk.gather(s, wk.idx)
		z := l.forward(wk, &v, &b)
		for i, smp := range part {
			row := z.Data[i*k : (i+1)*k]
			y := int(s.Y[smp])
			softmaxRow(row, y)
			toDeltas(row, y, 1) // one example's weight, 1/1
		}
		x := b.x.Data
		for t0 := 0; t0 < n; t0 += 4 {
			if useAVX2 && m%4 == 0 {
				var xs, ds [4]*float64
				for e := range 4 {
					t := min(t0+e, n-1) // a short group repeats its last example
					xs[e], ds[e] = &x[t*m], &z.Data[t*k]
				}
				sqLanes4(m/4, k, &xs, &ds, &lanes)
			} else {
				for e := range min(4, n-t0) {
					t := t0 + e
					sqLanes(&lanes[e], x[t*m:(t+1)*m], z.Data[t*k:(t+1)*k])
				}
			}
			for e := range min(4, n-t0) {
				t := t0 + e
				s := &lanes[e]
				// The biases, entries k·m + c: their lanes, and lane 0 from
				// the last multiple of four.
				for cl, d := range z.Data[t*k : (t+1)*k] {
					i := k*m + cl
					if i < dim&^3 {
						s[i&3] += float64(d * d)
					} else {
						s[0] += float64(d * d)
					}
				}
				scale[t] = 1
				if norm := math.Sqrt((s[0] + s[2]) + (s[1] + s[3])); norm > c {
					scale[t] = c / norm
					clipped++
				}
			}
		}
		for t := range n {
			off[t] = t * m
		}
		for cl := range k {
			for t := range n {
				coef[t] = z.Data[t*k+cl]
			}
			axpyScaled(gw[cl*m:(cl+1)*m], coef[:n], scale[:n], off[:n], x)
		}
		for t := range n {
			for cl, d := range z.Data[t*k : (t+1)*k] {
				gb[cl] += float64(scale[t] * d)
			}
		}
	}
	return clipped, true
}
