package loss

import (
	"math"

	"maple/algorithms/data"
)

// DP-SGD's clipped sum for a CNN, at about the cost of one batched backward
// pass. One forward and one backward pass over a block of examples keep
// every layer's inputs and output deltas (the deltas of an example with
// weight 1: its own gradient). Each example's squared gradient norm is then
// summed layer by layer:
//
//   - a dense layer's gradient is the outer product d xᵀ (and d for its
//     biases), whose squared norm is ‖d‖²‖x‖² + ‖d‖² without forming it
//     (the "ghost norm" of Goodfellow 2015 and Li et al., ICLR 2022);
//   - a convolution's is ∆Y Xcol (Cout×K), formed per example (the direct
//     product; Li et al.'s layerwise rule prefers it to the ghost norm
//     ⟨Xcol Xcolᵀ, ∆Yᵀ∆Y⟩ when 2P² > Cout·K, as in every bundled
//     network), and kept; a group normalization's likewise.
//
// With the clipping factors s_e = min(1, c/‖g_e‖) known, the clipped sum of
// a dense layer is one product with the deltas scaled by s_e — gradients
// are linear in an example's deltas — and that of a convolution or group
// normalization the kept per-example gradients added with their factors.

// cnnClipped is ClippedGradSum for a CNN.
func (l Loss) cnnClipped(dst, w []float64, s *data.Set, idx []int, c float64) (clipped int) {
	wk := workPool.Get().(*work)
	defer workPool.Put(wk)
	theta := l.params(wk, w)
	nt := l.Net
	cw := wk.cnn(nt)
	k := l.Classes
	clear(dst)
	for lo := 0; lo < len(idx); lo += cnnBlock {
		part := idx[lo:min(len(idx), lo+cnnBlock)]
		n := len(part)
		wk.idx = append(wk.idx[:0], part...)
		b := wk.gather(s, wk.idx)
		z := nt.forward(cw, theta, b.x.Data, n)
		for i, smp := range part {
			row := z[i*k : (i+1)*k]
			y := int(s.Y[smp])
			softmaxRow(row, y)
			toDeltas(row, y, 1)
		}
		nt.backward(cw, theta, nil, n)
		cw.sq = grow(cw.sq, n)
		cw.scale = grow(cw.scale, n)
		nt.exampleNorms(cw, n)
		for e, q := range cw.sq {
			cw.scale[e] = 1
			if norm := math.Sqrt(q); norm > c {
				cw.scale[e] = c / norm
				clipped++
			}
		}
		nt.clippedSum(cw, dst, n)
	}
	return clipped
}

// exampleNorms sets cw.sq[e] to the squared norm of example e's gradient
// (of weight 1) from a backward pass without parameter gradients, keeping
// the per-example gradients of the convolutions and group normalizations in
// cw.per.
func (nt *Net) exampleNorms(cw *cnnWork, n int) {
	clear(cw.sq)
	cw.per = grow(cw.per, n*nt.perDim)
	clear(cw.per)
	for i, ly := range nt.layers {
		in, out := nt.in[i], nt.in[i+1]
		x, dy := cw.acts[i], cw.dacts[i+1]
		switch ly.Kind {
		case LayerDense:
			f, u := in.Size(), ly.Units
			for e := range n {
				d, xe := dy[e*u:(e+1)*u], x[e*f:(e+1)*f]
				dd := sumSquares(d)
				cw.sq[e] += float64(dd*sumSquares(xe)) + dd
			}
		case LayerConv:
			k := in.C * ly.Kernel * ly.Kernel
			pos := out.H * out.W
			cw.cols = grow(cw.cols, pos*k)
			for e := range n {
				gp := cw.per[e*nt.perDim+nt.perOff[i]:][:out.C*k+out.C]
				im2col(cw.cols, x[e*in.Size():(e+1)*in.Size()], in, out, ly)
				d := dy[e*out.Size() : (e+1)*out.Size()]
				gemmNN(general(out.C, k, gp[:out.C*k]), general(out.C, pos, d), general(pos, k, cw.cols))
				for ch := range out.C {
					var b float64
					for _, v := range d[ch*pos : (ch+1)*pos] {
						b += v
					}
					gp[out.C*k+ch] = b
				}
				cw.sq[e] += sumSquares(gp)
			}
		case LayerGroupNorm:
			for e := range n {
				gp := cw.per[e*nt.perDim+nt.perOff[i]:][:2*in.C]
				groupNormParamGrad(gp, dy, cw.xhat[i], in, e)
				cw.sq[e] += sumSquares(gp)
			}
		}
	}
}

// clippedSum adds Σ_e s_e·g_e over the block to dst, with s_e = cw.scale[e]:
// the dense layers by one product with their output deltas scaled, the
// convolutions and group normalizations from the kept per-example
// gradients, in the order of the examples.
func (nt *Net) clippedSum(cw *cnnWork, dst []float64, n int) {
	for i, ly := range nt.layers {
		switch {
		case ly.Kind == LayerDense:
			u := ly.Units
			dy := cw.dacts[i+1]
			for e, sc := range cw.scale[:n] {
				if sc != 1 {
					d := dy[e*u : (e+1)*u]
					for j := range d {
						d[j] *= sc
					}
				}
			}
			nt.paramGrad(cw, i, dst, n)
		case nt.perOff[i] >= 0:
			gp := dst[nt.off[i]:nt.off[i+1]]
			for e, sc := range cw.scale[:n] {
				addScaled(gp, sc, cw.per[e*nt.perDim+nt.perOff[i]:][:len(gp)])
			}
		}
	}
}

// sumSquares returns Σ v².
func sumSquares(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += float64(x * x)
	}
	return s
}
