//go:build !amd64 || noasm || gccgo || safe

package loss

// useAVX2 is false where the assembly kernels are not built: the Go
// versions, which compute the same bits, run instead.
var useAVX2 = false

func lanes2x5(k4 int, a *float64, lda int, b *float64, ldb int, out *[ntRows * ntCols][4]float64) {
	panic("loss: no assembly kernels in this build")
}

func lanes1x5(k4 int, a *float64, b *float64, ldb int, out *[ntRows * ntCols][4]float64) {
	panic("loss: no assembly kernels in this build")
}

func axpyRowsAVX2(n int, c *float64, k int, coef *float64, off *int, b *float64) {
	panic("loss: no assembly kernels in this build")
}

func stepRowsAVX2(n int, w, th, th0 *float64, r, mu float64, k int, coef *float64, off *int, b *float64) {
	panic("loss: no assembly kernels in this build")
}

func addScaledAVX2(n int, dst *float64, alpha float64, s *float64) {
	panic("loss: no assembly kernels in this build")
}

func sqLanes4(m4, k int, x *[4]*float64, d *[4]*float64, out *[4][4]float64) {
	panic("loss: no assembly kernels in this build")
}

func axpyScaledAVX2(n int, c *float64, k int, a, s *float64, off *int, b *float64) {
	panic("loss: no assembly kernels in this build")
}
