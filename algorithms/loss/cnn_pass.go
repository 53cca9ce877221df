package loss

import (
	"math"

	"gonum.org/v1/gonum/floats"
)

// The passes of a CNN over a block of n examples. A convolution is a matrix
// product (im2col): each example's input is unfolded into the P×K matrix
// whose row p holds the K = Cin·k·k inputs under the window of output
// position p (zeros where the window covers the padding), and
//
//	forward  Y = W Xcolᵀ          (Cout×P, gemmNT)
//	weights  ∇W += ∆Y Xcol         (Cout×K, gemmNN)
//	inputs   ∆Xcol = ∆Yᵀ W         (P×K, gemmTN), folded back (col2im)
//
// one example at a time, so that each example's outputs are the same
// numbers whatever block it is computed in (an evaluation's result does not
// depend on how its samples are split between cores). Dense layers are one
// product over the block. All of them run on the dense kernels of
// kernels.go, in their fixed order of operations; the loops here sum in
// index order and round every product before adding it, float64(x*y), so
// that no compiler fuses them (see kernels.go): the same bits on every
// platform.

// cnnBlock is how many examples a CNN pass takes at once: the stored
// activations and deltas of a block of the McMahan CNN (86 000 values per
// example) stay near 20 MB each.
const cnnBlock = 32

// cnnWork holds a CNN pass's buffers, grown to the largest block seen.
type cnnWork struct {
	acts  [][]float64 // acts[i]: layer i's input (n×in[i]); acts[L] the logits
	dacts [][]float64 // dacts[i]: the loss's gradient with respect to acts[i], i ≥ 1
	xhat  [][]float64 // a group normalization's normalized inputs
	inv   [][]float64 // a group normalization's 1/√(σ² + ε) per example and group
	arg   [][]int32   // a max pooling's chosen input per output
	cols  []float64   // one example's unfolded input, P×K
	dcols []float64   // its gradient
	per   []float64   // per-example gradients of the convolutions and group normalizations, n×perDim
	sq    []float64   // per-example squared gradient norms
	scale []float64   // per-example clipping factors
}

// cnn returns the CNN buffers of wk for the network nt.
func (wk *work) cnn(nt *Net) *cnnWork {
	if wk.cw == nil {
		wk.cw = new(cnnWork)
	}
	cw := wk.cw
	L := len(nt.layers)
	for len(cw.acts) < L+1 {
		cw.acts = append(cw.acts, nil)
		cw.dacts = append(cw.dacts, nil)
		cw.xhat = append(cw.xhat, nil)
		cw.inv = append(cw.inv, nil)
		cw.arg = append(cw.arg, nil)
	}
	return cw
}

// growInt32 returns b resized to n, reallocating only when its capacity is
// short.
func growInt32(b []int32, n int) []int32 {
	if cap(b) < n {
		return make([]int32, n)
	}
	return b[:n]
}

// params returns layer i's parameters in theta.
func (nt *Net) params(theta []float64, i int) []float64 {
	return theta[nt.off[i]:nt.off[i+1]]
}

// forward computes the logits (n×K, returned, in cw.acts[L]) of the n
// examples x (n×M), keeping every layer's input for the backward pass.
func (nt *Net) forward(cw *cnnWork, theta, x []float64, n int) []float64 {
	cw.acts[0] = x[:n*nt.input.Size()]
	for i, ly := range nt.layers {
		in, out := nt.in[i], nt.in[i+1]
		cw.acts[i+1] = grow(cw.acts[i+1], n*out.Size())
		src, dst := cw.acts[i], cw.acts[i+1]
		p := nt.params(theta, i)
		switch ly.Kind {
		case LayerConv:
			nt.convForward(cw, i, p, src, dst, n)
		case LayerMaxPool:
			cw.arg[i] = growInt32(cw.arg[i], n*out.Size())
			maxPool(dst, cw.arg[i], src, in, out, ly, n)
		case LayerAvgPool:
			avgPool(dst, src, in, out, ly, n)
		case LayerReLU:
			for j, v := range src {
				dst[j] = max(v, 0)
			}
		case LayerTanh:
			for j, v := range src {
				dst[j] = math.Tanh(v)
			}
		case LayerTemperedSigmoid:
			for j, v := range src {
				dst[j] = float64(ly.Scale*sigmoid(ly.Temperature*v)) - ly.Offset
			}
		case LayerGroupNorm:
			cw.xhat[i] = grow(cw.xhat[i], n*in.Size())
			cw.inv[i] = grow(cw.inv[i], n*ly.Groups)
			groupNorm(dst, cw.xhat[i], cw.inv[i], src, p, in, ly.Groups, n)
		case LayerDense:
			f, u := in.Size(), ly.Units
			z := general(n, u, dst)
			clearRows(z)
			gemmNT(z, general(n, f, src), general(u, f, p[:u*f]))
			addRows(z, p[u*f:])
		}
	}
	return cw.acts[len(nt.layers)]
}

// convForward is layer i's convolution of the n examples src into dst.
func (nt *Net) convForward(cw *cnnWork, i int, p, src, dst []float64, n int) {
	in, out, ly := nt.in[i], nt.in[i+1], nt.layers[i]
	k := in.C * ly.Kernel * ly.Kernel
	pos := out.H * out.W
	w, bias := general(out.C, k, p[:out.C*k]), p[out.C*k:]
	cw.cols = grow(cw.cols, pos*k)
	cols := general(pos, k, cw.cols)
	for e := range n {
		im2col(cw.cols, src[e*in.Size():(e+1)*in.Size()], in, out, ly)
		y := dst[e*out.Size() : (e+1)*out.Size()]
		clear(y)
		gemmNT(general(out.C, pos, y), w, cols)
		for c, b := range bias {
			floats.AddConst(b, y[c*pos:(c+1)*pos])
		}
	}
}

// im2col sets cols (P×K) to the windows of one example x: row oy·Wout + ox
// holds, for each input channel c and window offset (ki, kj), the input at
// (oy·stride − pad + ki, ox·stride − pad + kj), or 0 in the padding.
func im2col(cols, x []float64, in, out Shape, ly Layer) {
	k, st, pad := ly.Kernel, ly.Stride, ly.Padding
	t := 0
	for oy := range out.H {
		for ox := range out.W {
			for c := range in.C {
				plane := x[c*in.H*in.W : (c+1)*in.H*in.W]
				for ki := range k {
					iy := oy*st - pad + ki
					row := cols[t : t+k]
					t += k
					if iy < 0 || iy >= in.H {
						clear(row)
						continue
					}
					line := plane[iy*in.W : (iy+1)*in.W]
					if x0 := ox*st - pad; x0 >= 0 && x0+k <= in.W {
						copy(row, line[x0:x0+k])
						continue
					}
					for kj := range k {
						ix := ox*st - pad + kj
						if ix < 0 || ix >= in.W {
							row[kj] = 0
						} else {
							row[kj] = line[ix]
						}
					}
				}
			}
		}
	}
}

// col2im adds the unfolded gradient dcols (P×K) of one example to its input
// gradient dx: the transpose of im2col.
func col2im(dx, dcols []float64, in, out Shape, ly Layer) {
	k, st, pad := ly.Kernel, ly.Stride, ly.Padding
	t := 0
	for oy := range out.H {
		for ox := range out.W {
			for c := range in.C {
				plane := dx[c*in.H*in.W : (c+1)*in.H*in.W]
				for ki := range k {
					iy := oy*st - pad + ki
					row := dcols[t : t+k]
					t += k
					if iy < 0 || iy >= in.H {
						continue
					}
					line := plane[iy*in.W : (iy+1)*in.W]
					for kj, v := range row {
						if ix := ox*st - pad + kj; ix >= 0 && ix < in.W {
							line[ix] += v
						}
					}
				}
			}
		}
	}
}

// maxPool sets dst to the window maxima of src and arg to the index (within
// its example) of the input each maximum was taken from, the first on ties.
func maxPool(dst []float64, arg []int32, src []float64, in, out Shape, ly Layer, n int) {
	k, st := ly.Kernel, ly.Stride
	o := 0
	for e := range n {
		base := e * in.Size()
		for c := range in.C {
			plane := base + c*in.H*in.W
			for oy := range out.H {
				for ox := range out.W {
					best := plane + oy*st*in.W + ox*st
					top := src[best]
					for ki := range k {
						row := plane + (oy*st+ki)*in.W + ox*st
						for kj, v := range src[row : row+k] {
							if v > top {
								top, best = v, row+kj
							}
						}
					}
					dst[o], arg[o] = top, int32(best-base)
					o++
				}
			}
		}
	}
}

// avgPool sets dst to the window means of src.
func avgPool(dst, src []float64, in, out Shape, ly Layer, n int) {
	k, st := ly.Kernel, ly.Stride
	inv := 1 / float64(k*k)
	o := 0
	for e := range n {
		for c := range in.C {
			plane := e*in.Size() + c*in.H*in.W
			for oy := range out.H {
				for ox := range out.W {
					var sum float64
					for ki := range k {
						row := src[plane+(oy*st+ki)*in.W+ox*st:][:k]
						for _, v := range row {
							sum += v
						}
					}
					dst[o] = sum * inv
					o++
				}
			}
		}
	}
}

// groupNorm normalizes each example's groups of channels of src into xhat,
// keeping 1/√(σ² + ε) per group in inv, and sets dst = γ_c·x̂ + β_c.
func groupNorm(dst, xhat, inv, src, p []float64, in Shape, groups, n int) {
	size := in.Size()
	m := size / groups
	plane := in.H * in.W
	gamma, beta := p[:in.C], p[in.C:]
	for e := range n {
		for g := range groups {
			lo := e*size + g*m
			x, xh := src[lo:lo+m], xhat[lo:lo+m]
			var mean float64
			for _, v := range x {
				mean += v
			}
			mean /= float64(m)
			var v2 float64
			for _, v := range x {
				d := v - mean
				v2 += float64(d * d)
			}
			r := 1 / math.Sqrt(v2/float64(m)+groupNormEps)
			inv[e*groups+g] = r
			for j, v := range x {
				xh[j] = (v - mean) * r
			}
		}
		for c := range in.C {
			lo := e*size + c*plane
			for j := lo; j < lo+plane; j++ {
				dst[j] = float64(gamma[c]*xhat[j]) + beta[c]
			}
		}
	}
}

// backward propagates the output deltas in cw.acts[L] (n×K) back through
// the layers, setting cw.dacts[i] for every layer input i ≥ 1 (the deltas
// themselves are dacts[L]); with g not nil it also adds every layer's
// parameter gradient to g.
func (nt *Net) backward(cw *cnnWork, theta, g []float64, n int) {
	L := len(nt.layers)
	cw.dacts[L] = cw.acts[L]
	for i := L - 1; i >= 0; i-- {
		if g != nil {
			nt.paramGrad(cw, i, g, n)
		}
		if i == 0 {
			break
		}
		nt.inputGrad(cw, theta, i, n)
	}
}

// inputGrad sets cw.dacts[i] to the gradient with respect to layer i's
// input, from the gradient cw.dacts[i+1] with respect to its output.
func (nt *Net) inputGrad(cw *cnnWork, theta []float64, i, n int) {
	ly, in, out := nt.layers[i], nt.in[i], nt.in[i+1]
	cw.dacts[i] = grow(cw.dacts[i], n*in.Size())
	dx, dy := cw.dacts[i], cw.dacts[i+1]
	x, y := cw.acts[i], cw.acts[i+1]
	p := nt.params(theta, i)
	switch ly.Kind {
	case LayerConv:
		k := in.C * ly.Kernel * ly.Kernel
		pos := out.H * out.W
		w := general(out.C, k, p[:out.C*k])
		cw.dcols = grow(cw.dcols, pos*k)
		clear(dx)
		for e := range n {
			clear(cw.dcols)
			gemmTN(general(pos, k, cw.dcols), general(out.C, pos, dy[e*out.Size():(e+1)*out.Size()]), w)
			col2im(dx[e*in.Size():(e+1)*in.Size()], cw.dcols, in, out, ly)
		}
	case LayerMaxPool:
		clear(dx)
		arg := cw.arg[i]
		for e := range n {
			base := e * in.Size()
			for o := e * out.Size(); o < (e+1)*out.Size(); o++ {
				dx[base+int(arg[o])] += dy[o]
			}
		}
	case LayerAvgPool:
		clear(dx)
		k, st := ly.Kernel, ly.Stride
		inv := 1 / float64(k*k)
		o := 0
		for e := range n {
			for c := range in.C {
				plane := e*in.Size() + c*in.H*in.W
				for oy := range out.H {
					for ox := range out.W {
						d := dy[o] * inv
						o++
						for ki := range k {
							row := dx[plane+(oy*st+ki)*in.W+ox*st:][:k]
							for kj := range row {
								row[kj] += d
							}
						}
					}
				}
			}
		}
	case LayerReLU:
		for j, v := range x {
			if v > 0 {
				dx[j] = dy[j]
			} else {
				dx[j] = 0
			}
		}
	case LayerTanh:
		for j, t := range y {
			dx[j] = dy[j] * (1 - float64(t*t))
		}
	case LayerTemperedSigmoid:
		// σ = (y + o)/s, and d/dx s·σ(Tx) = s·T·σ(1 − σ).
		for j, t := range y {
			sg := (t + ly.Offset) / ly.Scale
			dx[j] = dy[j] * (ly.Scale * ly.Temperature * sg * (1 - sg))
		}
	case LayerGroupNorm:
		groupNormInputGrad(dx, dy, cw.xhat[i], cw.inv[i], p[:in.C], in, ly.Groups, n)
	case LayerDense:
		f, u := in.Size(), ly.Units
		clear(dx)
		gemmNN(general(n, f, dx), general(n, u, dy), general(u, f, p[:u*f]))
	}
}

// groupNormInputGrad sets dx from dy for a group normalization: with
// d = dy·γ_c, dx = (1/√(σ² + ε))·(d − mean(d) − x̂·mean(d·x̂)) over each
// group.
func groupNormInputGrad(dx, dy, xhat, inv, gamma []float64, in Shape, groups, n int) {
	size := in.Size()
	m := size / groups
	plane := in.H * in.W
	for e := range n {
		for c := range in.C {
			lo := e*size + c*plane
			for j := lo; j < lo+plane; j++ {
				dx[j] = dy[j] * gamma[c]
			}
		}
		for g := range groups {
			lo := e*size + g*m
			d, xh := dx[lo:lo+m], xhat[lo:lo+m]
			var a, b float64
			for j, v := range d {
				a += v
				b += float64(v * xh[j])
			}
			a /= float64(m)
			b /= float64(m)
			r := inv[e*groups+g]
			for j, v := range d {
				d[j] = r * (v - a - float64(xh[j]*b))
			}
		}
	}
}

// paramGrad adds layer i's parameter gradient over the block to g (the
// whole gradient vector), from its inputs and its output deltas.
func (nt *Net) paramGrad(cw *cnnWork, i int, g []float64, n int) {
	ly, in, out := nt.layers[i], nt.in[i], nt.in[i+1]
	x, dy := cw.acts[i], cw.dacts[i+1]
	gp := g[nt.off[i]:nt.off[i+1]]
	switch ly.Kind {
	case LayerConv:
		k := in.C * ly.Kernel * ly.Kernel
		pos := out.H * out.W
		gw, gb := general(out.C, k, gp[:out.C*k]), gp[out.C*k:]
		cw.cols = grow(cw.cols, pos*k)
		for e := range n {
			im2col(cw.cols, x[e*in.Size():(e+1)*in.Size()], in, out, ly)
			d := dy[e*out.Size() : (e+1)*out.Size()]
			gemmNN(gw, general(out.C, pos, d), general(pos, k, cw.cols))
			for c := range out.C {
				var sum float64
				for _, v := range d[c*pos : (c+1)*pos] {
					sum += v
				}
				gb[c] += sum
			}
		}
	case LayerGroupNorm:
		for e := range n {
			groupNormParamGrad(gp, dy, cw.xhat[i], in, e)
		}
	case LayerDense:
		f, u := in.Size(), ly.Units
		d := general(n, u, dy)
		gemmTN(general(u, f, gp[:u*f]), d, general(n, f, x))
		sumRows(gp[u*f:], d)
	}
}

// groupNormParamGrad adds example e's gradient of a group normalization's
// scales (Σ dy·x̂ per channel) and shifts (Σ dy) to gp.
func groupNormParamGrad(gp, dy, xhat []float64, in Shape, e int) {
	plane := in.H * in.W
	for c := range in.C {
		lo := e*in.Size() + c*plane
		var a, b float64
		for j := lo; j < lo+plane; j++ {
			a += float64(dy[j] * xhat[j])
			b += dy[j]
		}
		gp[c] += a
		gp[in.C+c] += b
	}
}
