package loss

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
)

// The dense kernels of the multi-class models: the three matrix products of
// a forward and backward pass, the fused SGD update, and the per-example
// pieces of DP-SGD's clipped sums. Each is written twice — in Go
// (kernels.go) and in AVX2 assembly (kernels_amd64.s), chosen at run time —
// and both compute every output with the same floating-point operations in
// the same order, so that a result does not depend on the processor, on
// GOMAXPROCS or on the engine:
//
//   - a product C += A Bᵀ sums each entry as gonum's amd64 dot product
//     (DotUnitary) does: four partial sums, lane j mod 4 taking the products
//     of coordinates j below the last multiple of four, the remaining one
//     to three added to lane 0, and the result (s₀ + s₂) + (s₁ + s₃).
//     Register tiling computes ten such dot products at once (two rows of A
//     against five of B), each in a vector of four lanes;
//   - products C += Aᵀ B and C += A B sum each entry over the inner index
//     in order, skipping the zero coefficients of A, as gonum's serial
//     kernels do (dgemmSerialTransNot, dgemmSerialNotNot: one AxpyUnitary
//     per nonzero coefficient). The vectors run along the rows of C, whose
//     entries are independent, and a block of a row of C stays in registers
//     over all the terms;
//   - no fused multiply-add anywhere: every product is rounded before it is
//     added (the Go code converts each product explicitly, float64(x*y),
//     which the language guarantees is rounded, so that a compiler allowed
//     to fuse — GOAMD64=v3, arm64 — does not). With FMA the results would
//     differ between processors with and without it; without it they are
//     the same bits everywhere.
//
// On amd64 the products therefore equal gonum's blas64.Gemm bit for bit,
// which is what the multi-class models called before these kernels (tests
// pin both). Elsewhere gonum's pure-Go dot product sums in coordinate order;
// these kernels keep the four lanes there too, so that a run gives the same
// bits on every platform.

// laneDot returns Σ_j x_j·y_j for j < len(x), summed as gonum's amd64
// DotUnitary sums it (see above).
func laneDot(x, y []float64) float64 {
	var s [4]float64
	laneSums(&s, x, y)
	return laneTotal(&s, x, y)
}

// laneSums sets s to the four partial sums of x·y over the coordinates
// below the last multiple of four, lane j mod 4 for coordinate j.
func laneSums(s *[4]float64, x, y []float64) {
	k4 := len(x) &^ 3
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	for j := 0; j < k4; j += 4 {
		s0 += float64(x[j] * y[j])
		s1 += float64(x[j+1] * y[j+1])
		s2 += float64(x[j+2] * y[j+2])
		s3 += float64(x[j+3] * y[j+3])
	}
	*s = [4]float64{s0, s1, s2, s3}
}

// laneTotal adds the products of the coordinates from the last multiple of
// four to lane 0 of s and returns (s₀ + s₂) + (s₁ + s₃).
func laneTotal(s *[4]float64, x, y []float64) float64 {
	s0 := s[0]
	y = y[:len(x)]
	for j := len(x) &^ 3; j < len(x); j++ {
		s0 += float64(x[j] * y[j])
	}
	return (s0 + s[2]) + (s[1] + s[3])
}

// Tiles of gemmNT: ntRows rows of A against ntCols rows of B.
const ntRows, ntCols = 2, 5

// gemmNT adds A Bᵀ to C (m×n), A m×k and B n×k: c_ij += laneDot(a_i, b_j),
// what blas64.Gemm(NoTrans, Trans, 1, A, B, 1, C) computes on amd64.
func gemmNT(c, a, b blas64.General) {
	m, n, k := c.Rows, c.Cols, a.Cols
	if a.Rows != m || b.Rows != n || b.Cols != k {
		panic(fmt.Sprintf("loss: gemmNT shapes %d×%d += %d×%d · (%d×%d)ᵀ", m, n, a.Rows, a.Cols, b.Rows, b.Cols))
	}
	if m == 0 || n == 0 {
		return
	}
	checkGeneral(a)
	checkGeneral(b)
	checkGeneral(c)
	k4 := k &^ 3
	var lanes [ntRows * ntCols][4]float64
	// Column blocks outside, so that the ntCols rows of B stay in the first
	// level of cache while the rows of A stream past them.
	for j := 0; j < n; j += ntCols {
		nj := min(ntCols, n-j)
		for i := 0; i < m; i += ntRows {
			mi := min(ntRows, m-i)
			ai := a.Data[i*a.Stride:]
			bj := b.Data[j*b.Stride:]
			switch {
			case useAVX2 && nj == ntCols && mi == 2 && k4 > 0:
				lanes2x5(k4, &ai[0], a.Stride, &bj[0], b.Stride, &lanes)
			case useAVX2 && nj == ntCols && mi == 1 && k4 > 0:
				lanes1x5(k4, &ai[0], &bj[0], b.Stride, &lanes)
			default:
				for ii := range mi {
					for jj := range nj {
						laneSums(&lanes[ii*ntCols+jj], ai[ii*a.Stride:ii*a.Stride+k], bj[jj*b.Stride:jj*b.Stride+k])
					}
				}
			}
			for ii := range mi {
				arow := ai[ii*a.Stride : ii*a.Stride+k]
				crow := c.Data[(i+ii)*c.Stride+j:]
				for jj := range nj {
					crow[jj] += laneTotal(&lanes[ii*ntCols+jj], arow, bj[jj*b.Stride:jj*b.Stride+k])
				}
			}
		}
	}
}

// checkGeneral panics unless the matrix's storage holds all its entries:
// the assembly kernels read it without bounds checks.
func checkGeneral(g blas64.General) {
	if g.Rows > 0 && g.Cols > 0 && (g.Stride < g.Cols || len(g.Data) < (g.Rows-1)*g.Stride+g.Cols) {
		panic(fmt.Sprintf("loss: a %d×%d matrix with stride %d in %d values", g.Rows, g.Cols, g.Stride, len(g.Data)))
	}
}

// termBlock is how many terms (nonzero coefficients) a row of gemmTN and
// gemmNN hands to axpyRows at once; longer sums are split into blocks added
// to C one after the other, which keeps their order.
const termBlock = 256

// gemmTN adds Aᵀ B to C (m×n), A k×m and B k×n: c_i += Σ_l a_li·b_l in
// order of l, skipping a_li = 0, what blas64.Gemm(Trans, NoTrans, 1, A, B,
// 1, C) computes.
func gemmTN(c, a, b blas64.General) {
	if a.Cols != c.Rows || b.Cols != c.Cols || a.Rows != b.Rows {
		panic(fmt.Sprintf("loss: gemmTN shapes %d×%d += (%d×%d)ᵀ · %d×%d", c.Rows, c.Cols, a.Rows, a.Cols, b.Rows, b.Cols))
	}
	gemmAcc(c, a.Data, a.Stride, 1, a.Rows, b)
}

// gemmNN adds A B to C (m×n), A m×k and B k×n: c_i += Σ_l a_il·b_l in order
// of l, skipping a_il = 0, what blas64.Gemm(NoTrans, NoTrans, 1, A, B, 1, C)
// computes.
func gemmNN(c, a, b blas64.General) {
	if a.Rows != c.Rows || b.Cols != c.Cols || a.Cols != b.Rows {
		panic(fmt.Sprintf("loss: gemmNN shapes %d×%d += %d×%d · %d×%d", c.Rows, c.Cols, a.Rows, a.Cols, b.Rows, b.Cols))
	}
	gemmAcc(c, a.Data, 1, a.Stride, a.Cols, b)
}

// gemmAcc adds Σ_l coef(i, l)·b_l to each row i of C, coef(i, l) =
// a[l·incL + i·incI], in order of l, skipping the zero coefficients.
func gemmAcc(c blas64.General, a []float64, incL, incI, k int, b blas64.General) {
	m, n := c.Rows, c.Cols
	if m == 0 || n == 0 || k == 0 {
		return
	}
	if last := (k-1)*incL + (m-1)*incI; last >= len(a) {
		panic(fmt.Sprintf("loss: gemm coefficients reach %d of %d", last, len(a)))
	}
	checkGeneral(b)
	checkGeneral(c)
	var coef [termBlock]float64
	var off [termBlock]int
	for l0 := 0; l0 < k; l0 += termBlock {
		lk := min(termBlock, k-l0)
		for i := range m {
			t := 0
			for l := l0; l < l0+lk; l++ {
				if v := a[l*incL+i*incI]; v != 0 {
					coef[t], off[t] = v, l*b.Stride
					t++
				}
			}
			axpyRows(c.Data[i*c.Stride:i*c.Stride+n], coef[:t], off[:t], b.Data)
		}
	}
}

// axpyRows adds Σ_t coef_t·b[off_t : off_t+len(c)] to c, the terms in order.
func axpyRows(c, coef []float64, off []int, b []float64) {
	if len(c) == 0 || len(coef) == 0 {
		return
	}
	off = off[:len(coef)]
	for _, o := range off {
		if o < 0 || o+len(c) > len(b) {
			panic(fmt.Sprintf("loss: axpyRows row at %d of %d values beyond %d", o, len(c), len(b)))
		}
	}
	if useAVX2 {
		axpyRowsAVX2(len(c), &c[0], len(coef), &coef[0], &off[0], &b[0])
		return
	}
	axpyRowsGo(c, coef, off, b)
}

// axpyRowsGo is axpyRows in Go.
func axpyRowsGo(c, coef []float64, off []int, b []float64) {
	for t, v := range coef {
		row := b[off[t] : off[t]+len(c)]
		for j, x := range row {
			c[j] += float64(v * x)
		}
	}
}

// stepRows takes one SGD step on the block w of the model from the data
// terms Σ_t coef_t·b[off_t : off_t+len(w)] of its gradient, summed from
// zero in order as axpyRows sums them: with g that sum plus r·th (the
// regularizer's gradient, th = θ), w ← w − μ·g, and when th0 is not nil
// (the loss has an Origin and th is θ = θ₀ + w) th ← th0 + w. Without an
// Origin th is w itself. Each line is the operation of the unfused path:
// floats.AddScaled(g, r, θ), Local.Descend, floats.AddTo(θ, θ₀, w).
func stepRows(w, th, th0 []float64, r, mu float64, coef []float64, off []int, b []float64) {
	n := len(w)
	if n == 0 {
		return
	}
	th = th[:n]
	if th0 != nil {
		th0 = th0[:n]
	}
	off = off[:len(coef)]
	for _, o := range off {
		if o < 0 || o+n > len(b) {
			panic(fmt.Sprintf("loss: stepRows row at %d of %d values beyond %d", o, n, len(b)))
		}
	}
	if useAVX2 {
		var c, o *float64
		var f *int
		if len(coef) > 0 {
			c, f = &coef[0], &off[0]
		}
		if th0 != nil {
			o = &th0[0]
		}
		stepRowsAVX2(n, &w[0], &th[0], o, r, mu, len(coef), c, f, &b[0])
		return
	}
	stepRowsGo(w, th, th0, r, mu, coef, off, b)
}

// stepRowsGo is stepRows in Go.
func stepRowsGo(w, th, th0 []float64, r, mu float64, coef []float64, off []int, b []float64) {
	var acc [64]float64
	for j0 := 0; j0 < len(w); j0 += len(acc) {
		nj := min(len(acc), len(w)-j0)
		a := acc[:nj]
		clear(a)
		for t, v := range coef {
			row := b[off[t]+j0 : off[t]+j0+nj]
			for j, x := range row {
				a[j] += float64(v * x)
			}
		}
		for j, g := range a {
			g += float64(r * th[j0+j])
			w[j0+j] -= float64(mu * g)
			if th0 != nil {
				th[j0+j] = th0[j0+j] + w[j0+j]
			}
		}
	}
}

// stepRest applies the SGD step to the part w of the model whose gradient's
// data terms are in g: g + r·th, then w and th as stepRows does.
func stepRest(w, th, th0, g []float64, r, mu float64) {
	th, g = th[:len(w)], g[:len(w)]
	if th0 != nil {
		th0 = th0[:len(w)]
	}
	for j := range w {
		gj := g[j] + float64(r*th[j])
		w[j] -= float64(mu * gj)
		if th0 != nil {
			th[j] = th0[j] + w[j]
		}
	}
}

// addScaled adds alpha·s to dst, each product rounded: floats.AddScaled's
// operations, which its amd64 assembly performs so but its Go version
// leaves to a compiler that may fuse them (arm64).
func addScaled(dst []float64, alpha float64, s []float64) {
	s = s[:len(dst)]
	if useAVX2 && len(dst) > 0 {
		addScaledAVX2(len(dst), &dst[0], alpha, &s[0])
		return
	}
	for j, v := range s {
		dst[j] += float64(alpha * v)
	}
}

// sqLanes sets s to the lane sums of the squared gradient entries of one
// example of softmax regression with deltas d (K classes) and features x
// (M): entry c·M + j is g = d_c·x_j, and g² goes to lane (c·M + j) mod 4,
// in order of the entries — what laneDot(g, g) sums before its tail, for
// entries below the last multiple of four (all the K·M weights are, for
// K ≥ 2).
func sqLanes(s *[4]float64, x, d []float64) {
	*s = [4]float64{}
	i := 0
	for _, dc := range d {
		for _, xj := range x {
			e := float64(dc * xj)
			s[i&3] += float64(e * e)
			i++
		}
	}
}

// axpyScaled adds Σ_t sc_t·(a_t·b[off_t : off_t+len(c)]) to c, the terms in
// order, each product rounded: a clipped per-example gradient a_t·x_t scaled
// by sc_t, as ClippedGradSum adds it.
func axpyScaled(c, a, sc []float64, off []int, b []float64) {
	if len(c) == 0 || len(a) == 0 {
		return
	}
	sc, off = sc[:len(a)], off[:len(a)]
	for _, o := range off {
		if o < 0 || o+len(c) > len(b) {
			panic(fmt.Sprintf("loss: axpyScaled row at %d of %d values beyond %d", o, len(c), len(b)))
		}
	}
	if useAVX2 {
		axpyScaledAVX2(len(c), &c[0], len(a), &a[0], &sc[0], &off[0], &b[0])
		return
	}
	for t, v := range a {
		row := b[off[t] : off[t]+len(c)]
		for j, x := range row {
			c[j] += float64(sc[t] * float64(v*x))
		}
	}
}
