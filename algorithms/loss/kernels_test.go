package loss

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	gonumfloats "gonum.org/v1/gonum/floats"

	"maple/internal/cputime"
)

// withKernels runs f with the assembly kernels (when the machine has them)
// and with the Go ones, returning the two results.
func withKernels[T any](f func() T) (asm, plain T) {
	old := useAVX2
	defer func() { useAVX2 = old }()
	asm = f()
	useAVX2 = false
	plain = f()
	return asm, plain
}

// kernelMatrix returns a rows×cols matrix with stride cols+pad whose
// entries are random, a fifth of them zero (as ReLU's deltas are) and a few
// negative zeros, the padding NaN so that a kernel reading it shows.
func kernelMatrix(r *rand.Rand, rows, cols, pad int) blas64.General {
	g := blas64.General{Rows: rows, Cols: cols, Stride: cols + pad, Data: make([]float64, max(0, (rows-1)*(cols+pad)+cols))}
	for i := range g.Data {
		switch {
		case i%g.Stride >= cols:
			g.Data[i] = math.NaN()
		case r.IntN(5) == 0:
			g.Data[i] = 0
		case r.IntN(50) == 0:
			g.Data[i] = math.Copysign(0, -1)
		default:
			g.Data[i] = r.NormFloat64() * math.Exp(3*r.NormFloat64())
		}
	}
	return g
}

func sameBitsMatrix(t *testing.T, what string, got, want blas64.General) {
	t.Helper()
	for i := range got.Rows {
		for j := range got.Cols {
			g, w := got.Data[i*got.Stride+j], want.Data[i*want.Stride+j]
			if math.Float64bits(g) != math.Float64bits(w) {
				t.Fatalf("%s: entry (%d, %d) = %v (%#x), want %v (%#x)", what, i, j, g, math.Float64bits(g), w, math.Float64bits(w))
			}
		}
	}
}

func cloneGeneral(g blas64.General) blas64.General {
	g.Data = slices.Clone(g.Data)
	return g
}

// The shapes the tests run the products on: every remainder of the tiles
// (2 rows × 5 columns) and of the vector blocks (48, 16, 4, 1 values), the
// inner dimension with every remainder modulo 4 and longer than termBlock,
// and the models' own (784 features, 100 hidden units, 10 classes).
var kernelShapes = [][3]int{ // m, n, k
	{1, 1, 1}, {1, 1, 3}, {2, 5, 4}, {3, 7, 5}, {4, 10, 8}, {5, 11, 6}, {7, 13, 17}, {2, 1, 9},
	{1, 5, 2}, {6, 53, 19}, {9, 67, 3}, {3, 4, termBlock + 7}, {10, 100, 784}, {10, 10, 100}, {13, 10, 784},
}

// Each product equals gonum's blas64.Gemm with α = β = 1 bit for bit where
// gonum's dot product sums in four lanes (amd64; dotLanes), and the
// assembly kernels equal the Go ones everywhere — on random entries with
// zeros, negative zeros and magnitudes spread over many binades, so that
// any change in the order of the operations shows.
func TestKernelsAreGonumsProducts(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 1))
	for _, sh := range kernelShapes {
		m, n, k := sh[0], sh[1], sh[2]
		for _, c := range []struct {
			name   string
			tA, tB blas.Transpose
			f      func(c, a, b blas64.General)
		}{
			{"NT", blas.NoTrans, blas.Trans, gemmNT},
			{"TN", blas.Trans, blas.NoTrans, gemmTN},
			{"NN", blas.NoTrans, blas.NoTrans, gemmNN},
		} {
			ar, ac := m, k
			if c.tA == blas.Trans {
				ar, ac = k, m
			}
			br, bc := k, n
			if c.tB == blas.Trans {
				br, bc = n, k
			}
			a, b := kernelMatrix(r, ar, ac, r.IntN(3)), kernelMatrix(r, br, bc, r.IntN(3))
			c0 := kernelMatrix(r, m, n, r.IntN(3))
			what := fmt.Sprintf("%s %d×%d×%d", c.name, m, n, k)
			asm, plain := withKernels(func() blas64.General {
				got := cloneGeneral(c0)
				c.f(got, a, b)
				return got
			})
			sameBitsMatrix(t, what+": assembly against Go", asm, plain)
			if dotLanes == 4 || c.tB == blas.NoTrans {
				want := cloneGeneral(c0)
				blas64.Gemm(c.tA, c.tB, 1, a, b, 1, want)
				sameBitsMatrix(t, what+": against blas64.Gemm", plain, want)
			}
		}
	}
}

// stepRows is, bit for bit, the unfused step: the data terms summed into a
// zeroed gradient by axpyRows, then g + r·θ, w − μ·g and θ₀ + w as three
// passes — with and without an Origin, on every block remainder.
func TestStepRowsIsTheUnfusedStep(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 2))
	for _, n := range []int{1, 3, 4, 5, 16, 21, 48, 53, 100, 784} {
		for _, terms := range []int{0, 1, 7, 10} {
			for _, origin := range []bool{false, true} {
				b := kernelMatrix(r, terms+2, n+3, 0)
				coef := randomVector(r, terms, 1)
				off := make([]int, terms)
				for t := range off {
					off[t] = r.IntN(b.Rows)*b.Stride + r.IntN(4)
				}
				w0 := randomVector(r, n, 1)
				var th0, theta0 []float64
				if origin {
					th0 = randomVector(r, n, 1)
					theta0 = make([]float64, n)
					for j := range n {
						theta0[j] = th0[j] + w0[j]
					}
				}
				rr, mu := 0.25*r.Float64(), r.Float64()
				if terms == 7 {
					rr = 0
				}
				type pair struct{ w, th []float64 }
				asm, plain := withKernels(func() pair {
					w := slices.Clone(w0)
					th := w
					if origin {
						th = slices.Clone(theta0)
					}
					stepRows(w, th, th0, rr, mu, coef, off, b.Data)
					return pair{w, th}
				})
				// The unfused step.
				g := make([]float64, n)
				axpyRowsGo(g, coef, off, b.Data)
				w := slices.Clone(w0)
				th := w
				if origin {
					th = slices.Clone(theta0)
				}
				for j := range g {
					g[j] += float64(rr * th[j])
				}
				for j := range w {
					w[j] -= float64(mu * g[j])
				}
				if origin {
					for j := range th {
						th[j] = th0[j] + w[j]
					}
				}
				what := fmt.Sprintf("n=%d terms=%d origin=%v", n, terms, origin)
				sameBits(t, what+": assembly w", asm.w, plain.w)
				sameBits(t, what+": Go w", plain.w, w)
				if origin {
					sameBits(t, what+": assembly θ", asm.th, plain.th)
					sameBits(t, what+": Go θ", plain.th, th)
				}
			}
		}
	}
}

// BenchmarkKernels times each product on the MLP's shapes (a mini-batch of
// 10, 784 features, 100 hidden units), the assembly and the Go kernels and
// gonum's blas64.Gemm, in CPU nanoseconds per multiply-add.
func BenchmarkKernels(b *testing.B) {
	r := rand.New(rand.NewPCG(32, 3))
	const batch, features, hidden = 10, 784, 100
	x := kernelMatrix(r, batch, features, 0)
	w1 := kernelMatrix(r, hidden, features, 0)
	d := kernelMatrix(r, batch, hidden, 0)
	for _, c := range []struct {
		name    string
		c, a, b blas64.General
		tA, tB  blas.Transpose
		f       func(c, a, b blas64.General)
	}{
		{"forward-NT", blas64.General{Rows: batch, Cols: hidden, Stride: hidden, Data: make([]float64, batch*hidden)}, x, w1, blas.NoTrans, blas.Trans, gemmNT},
		{"gradient-TN", blas64.General{Rows: hidden, Cols: features, Stride: features, Data: make([]float64, hidden*features)}, d, x, blas.Trans, blas.NoTrans, gemmTN},
	} {
		macs := batch * features * hidden
		for _, k := range []string{"asm", "go", "gonum"} {
			if k == "asm" && !useAVX2 {
				continue
			}
			b.Run(c.name+"/"+k, func(b *testing.B) {
				old := useAVX2
				defer func() { useAVX2 = old }()
				useAVX2 = k == "asm"
				start := cputime.Process()
				for b.Loop() {
					if k == "gonum" {
						blas64.Gemm(c.tA, c.tB, 1, c.a, c.b, 1, c.c)
					} else {
						c.f(c.c, c.a, c.b)
					}
				}
				reportCPU(b, start, macs, "MAC")
			})
		}
	}
}

// addScaled is floats.AddScaled's operations, in assembly and in Go.
func TestAddScaled(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 6))
	for _, n := range []int{0, 1, 3, 4, 5, 15, 16, 17, 21, 100, 7850} {
		y0, x := randomVector(r, n, 1), randomVector(r, n, 1)
		alpha := r.NormFloat64()
		asm, plain := withKernels(func() []float64 {
			y := slices.Clone(y0)
			addScaled(y, alpha, x)
			return y
		})
		want := slices.Clone(y0)
		for j := range want {
			want[j] += float64(alpha * x[j])
		}
		sameBits(t, fmt.Sprintf("n=%d assembly", n), asm, want)
		sameBits(t, fmt.Sprintf("n=%d Go", n), plain, want)
		if dotLanes == 4 {
			floats := slices.Clone(y0)
			gonumfloats.AddScaled(floats, alpha, x)
			sameBits(t, fmt.Sprintf("n=%d floats.AddScaled", n), asm, floats)
		}
	}
}
