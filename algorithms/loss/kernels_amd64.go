//go:build !noasm && !gccgo && !safe

package loss

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels (kernels_amd64.s), which compute the
// same bits as their Go versions; tests switch it off to compare the two.
var useAVX2 = cpu.X86.HasAVX2

// lanes2x5 sets out[5i+j] to the four lane sums of the dot product of row
// i of a (stride lda) with row j of b (stride ldb) over the first k4
// coordinates, a multiple of four: what laneSums gives for each.
//
//go:noescape
func lanes2x5(k4 int, a *float64, lda int, b *float64, ldb int, out *[ntRows * ntCols][4]float64)

// lanes1x5 is lanes2x5 for one row of a (out[0:5]).
//
//go:noescape
func lanes1x5(k4 int, a *float64, b *float64, ldb int, out *[ntRows * ntCols][4]float64)

// axpyRowsAVX2 is axpyRows on n ≥ 1 values of c and k ≥ 1 terms.
//
//go:noescape
func axpyRowsAVX2(n int, c *float64, k int, coef *float64, off *int, b *float64)

// stepRowsAVX2 is stepRows on n ≥ 1 values of w; th0 is nil without an
// Origin, coef and off are nil when k = 0.
//
//go:noescape
func stepRowsAVX2(n int, w, th, th0 *float64, r, mu float64, k int, coef *float64, off *int, b *float64)

// addScaledAVX2 is addScaled on n ≥ 1 values.
//
//go:noescape
func addScaledAVX2(n int, dst *float64, alpha float64, s *float64)

// sqLanes4 sets out[e] to the lane sums of sqLanes for four examples e
// with rows x[e] of 4·m4 features (m4 ≥ 1) and deltas d[e] of k classes.
//
//go:noescape
func sqLanes4(m4, k int, x *[4]*float64, d *[4]*float64, out *[4][4]float64)

// axpyScaledAVX2 is axpyScaled on n ≥ 1 values of c and k ≥ 1 terms.
//
//go:noescape
func axpyScaledAVX2(n int, c *float64, k int, a, s *float64, off *int, b *float64)
