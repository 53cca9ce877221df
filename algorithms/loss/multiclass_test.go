package loss

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
)

// classSet returns n dense samples of dim standard normal features with
// class labels drawn uniformly from 0…k−1.
func classSet(r *rand.Rand, n, dim, k int) *data.Set {
	s := &data.Set{Dim: dim, X: make([]float64, n*dim), Y: make([]float64, n)}
	for i := range s.X {
		s.X[i] = r.NormFloat64()
	}
	for i := range s.Y {
		s.Y[i] = float64(r.IntN(k))
	}
	return s
}

// sparseCopy returns s in compressed sparse rows, dropping every other
// entry's value to zero first so that the rows really are sparse.
func sparseCopy(s *data.Set) *data.Set {
	out := &data.Set{Dim: s.Dim, RowPtr: []int{0}, Y: slices.Clone(s.Y)}
	for n := 0; n < s.Len(); n++ {
		for j, v := range s.Row(n) {
			if (n+j)%2 == 0 {
				out.Col = append(out.Col, int32(j))
				out.Val = append(out.Val, v)
			}
		}
		out.RowPtr = append(out.RowPtr, len(out.Col))
	}
	return out
}

// densify returns the dense form of a sparse set.
func densify(s *data.Set) *data.Set {
	out := &data.Set{Dim: s.Dim, X: make([]float64, s.Len()*s.Dim), Y: slices.Clone(s.Y)}
	for n := 0; n < s.Len(); n++ {
		for p := s.RowPtr[n]; p < s.RowPtr[n+1]; p++ {
			out.X[n*s.Dim+int(s.Col[p])] = s.Val[p]
		}
	}
	return out
}

// multiLosses are the multi-class models the tests exercise: softmax
// regression and both MLP activations, the tanh one measured from a random
// origin as the runner uses it.
func multiLosses(features int, r *rand.Rand) []Loss {
	tanh := Loss{Kind: MLP, Rho: 0.05, Classes: 3, Hidden: 4, Activation: Tanh}
	tanh.Origin = tanh.Init(features, r)
	return []Loss{
		{Kind: Softmax, Rho: 0.05, Classes: 3},
		{Kind: MLP, Rho: 0.05, Classes: 3, Hidden: 4, Activation: ReLU},
		tanh,
	}
}

func randomVector(r *rand.Rand, n int, scale float64) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = scale * r.NormFloat64()
	}
	return w
}

// relErr returns ‖a − b‖/max(‖a‖, ‖b‖).
func relErr(a, b []float64) float64 {
	return floats.Distance(a, b, 2) / max(floats.Norm(a, 2), floats.Norm(b, 2))
}

// The analytic gradients of the multi-class models must match central finite
// differences of the weighted sum Σ_b a_b Q(w; x_b) to a relative error of
// 1e-6 (the bound). With h = 1e-5 the truncation error h²/6·|Q”'|
// and the rounding error ε|Q|/h are both near 1e-10 for these O(1) losses, so
// the measured error is four orders of magnitude inside the bound. A ReLU
// kink within h of a pre-activation would break the difference quotient; with
// Gaussian data and weights that has probability of order 1e-5 per unit, and
// the seed is fixed.
func TestMultiClassGradMatchesFiniteDifferences(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const dim = 5
	dense := classSet(r, 6, dim, 3)
	for _, s := range []*data.Set{dense, sparseCopy(dense)} {
		for _, l := range multiLosses(dim, r) {
			w := randomVector(r, l.Dim(dim), 0.5)
			idx := []int{4, 1, 3}
			a := []float64{0.2, 0.7, 0.4}
			g := make([]float64, len(w))
			l.Grad(g, w, s, idx, a)
			fd := make([]float64, len(w))
			weighted := func(w []float64) float64 {
				var q float64
				for b, n := range idx {
					q += a[b] * l.Value(w, s, n)
				}
				return q
			}
			for j := range w {
				const h = 1e-5
				wp, wm := slices.Clone(w), slices.Clone(w)
				wp[j] += h
				wm[j] -= h
				fd[j] = (weighted(wp) - weighted(wm)) / (2 * h)
			}
			if e := relErr(g, fd); e > 1e-6 {
				t.Errorf("%v/%v sparse=%v: relative error %.3g between gradient and finite differences", l.Kind, l.Activation, s.Sparse(), e)
			}
			full := make([]float64, len(w))
			l.FullGrad(full, w, s)
			for j := range w {
				const h = 1e-5
				wp, wm := slices.Clone(w), slices.Clone(w)
				wp[j] += h
				wm[j] -= h
				fd[j] = (l.Risk(wp, s) - l.Risk(wm, s)) / (2 * h)
			}
			if e := relErr(full, fd); e > 1e-6 {
				t.Errorf("%v/%v sparse=%v: relative error %.3g between FullGrad and finite differences of Risk", l.Kind, l.Activation, s.Sparse(), e)
			}
		}
	}
}

// Dense and sparse storage of the same samples, full-data passes split into
// chunks and single mini-batches, must compute the same quantities. The sums
// run in different orders (BLAS kernels against loops over stored entries),
// so they agree to rounding: 1e-12 relative is a thousand times ε·(terms).
func TestMultiClassFormsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const dim = 6
	dense := classSet(r, 2*chunkRows+17, dim, 3) // three chunks, the last partial
	sparse := sparseCopy(dense)
	dense = densify(sparse)
	all := make([]int, dense.Len())
	for i := range all {
		all[i] = i
	}
	for _, l := range multiLosses(dim, r) {
		w := randomVector(r, l.Dim(dim), 0.5)
		gFull, gBatch, gSparse := make([]float64, len(w)), make([]float64, len(w)), make([]float64, len(w))
		l.FullGrad(gFull, w, dense)
		l.Grad(gBatch, w, dense, all, nil)
		l.FullGrad(gSparse, w, sparse)
		if e := relErr(gFull, gBatch); e > 1e-12 {
			t.Errorf("%v: FullGrad and Grad over all samples differ by %.3g", l.Kind, e)
		}
		if e := relErr(gFull, gSparse); e > 1e-12 {
			t.Errorf("%v: dense and sparse FullGrad differ by %.3g", l.Kind, e)
		}
		var mean float64
		for n := range all {
			mean += l.Value(w, dense, n)
		}
		mean /= float64(len(all))
		if risk := l.Risk(w, dense); math.Abs(risk-mean) > 1e-12*mean {
			t.Errorf("%v: Risk %v, mean of Value %v", l.Kind, risk, mean)
		}
		ed, es := l.Evaluate(w, dense), l.Evaluate(w, sparse)
		if ed.Error != es.Error || math.Abs(ed.CrossEntropy-es.CrossEntropy) > 1e-12*ed.CrossEntropy {
			t.Errorf("%v: dense evaluation %+v, sparse %+v", l.Kind, ed, es)
		}
		// SampleGradNorm is defined as √(gᵀg) with gᵀg summed by floats.Dot.
		g := gradOf(l, w, dense, 3)
		if got, want := l.SampleGradNorm(w, dense, 3, make([]float64, len(w))), math.Sqrt(floats.Dot(g, g)); got != want {
			t.Errorf("%v: SampleGradNorm = %v, want %v", l.Kind, got, want)
		}
	}
}

// With every parameter zero, softmax regression predicts the uniform
// distribution: cross-entropy ln K exactly, and every sample is assigned
// class 0 (ties go to the lowest class), so the error is the fraction of
// samples of another class.
func TestSoftmaxAtZero(t *testing.T) {
	s := &data.Set{Dim: 2, X: []float64{1, 2, 3, 4, 5, 6, 7, 8}, Y: []float64{0, 1, 2, 2}}
	l := Loss{Kind: Softmax, Classes: 3}
	e := l.Evaluate(make([]float64, l.Dim(2)), s)
	if e.Error != 0.75 || math.Abs(e.CrossEntropy-math.Log(3)) > 1e-15 {
		t.Errorf("evaluation at zero = %+v, want error 0.75 and cross-entropy ln 3", e)
	}
	if got := l.TestError(make([]float64, 9), s); got != 0.75 {
		t.Errorf("TestError = %v, want 0.75", got)
	}
}

// A Softmax model with logits far apart must not overflow: the probabilities
// are computed after shifting by the largest logit.
func TestSoftmaxIsStable(t *testing.T) {
	s := &data.Set{Dim: 1, X: []float64{1}, Y: []float64{1}}
	l := Loss{Kind: Softmax, Classes: 2}
	w := []float64{1000, -1000, 0, 0} // W = [1000; −1000], b = 0
	if v := l.Value(w, s, 0); v != 2000 {
		t.Errorf("Value = %v, want 2000", v)
	}
	g := make([]float64, 4)
	l.Grad(g, w, s, []int{0}, nil)
	if want := []float64{1, -1, 1, -1}; !floats.Equal(g, want) {
		t.Errorf("Grad = %v, want %v", g, want)
	}
}

func TestDim(t *testing.T) {
	for _, c := range []struct {
		l    Loss
		want int
	}{
		{Loss{Kind: LeastSquares}, 784},
		{Loss{Kind: Logistic}, 784},
		{Loss{Kind: Softmax, Classes: 10}, 7850},
		{Loss{Kind: MLP, Classes: 10, Hidden: 100}, 100*785 + 10*101},
	} {
		if got := c.l.Dim(784); got != c.want {
			t.Errorf("%v: Dim(784) = %d, want %d", c.l.Kind, got, c.want)
		}
	}
}

func TestCheckLabels(t *testing.T) {
	for _, c := range []struct {
		l  Loss
		y  []float64
		ok bool
	}{
		{Loss{Kind: LeastSquares}, []float64{0.5, -3}, true},
		{Loss{Kind: LeastSquares}, []float64{math.NaN()}, false},
		{Loss{Kind: Logistic}, []float64{1, -1}, true},
		{Loss{Kind: Logistic}, []float64{1, 0}, false},
		{Loss{Kind: Softmax, Classes: 3}, []float64{0, 1, 2}, true},
		{Loss{Kind: Softmax, Classes: 3}, []float64{3}, false},
		{Loss{Kind: MLP, Classes: 3, Hidden: 2}, []float64{1.5}, false},
		{Loss{Kind: MLP, Classes: 3, Hidden: 2}, []float64{-1}, false},
	} {
		err := c.l.CheckLabels(&data.Set{Dim: 1, X: make([]float64, len(c.y)), Y: c.y})
		if (err == nil) != c.ok {
			t.Errorf("%v labels %v: err = %v, want ok = %v", c.l.Kind, c.y, err, c.ok)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		l     Loss
		field string
	}{
		{Loss{Kind: Softmax, Classes: 1}, "classes"},
		{Loss{Kind: MLP, Classes: 3}, "hidden"},
		{Loss{Kind: Logistic, Rho: -1}, "rho"},
	} {
		err := c.l.Validate()
		if err == nil || err.Error()[:len(c.field)] != c.field {
			t.Errorf("%+v: Validate() = %v, want an error naming %s", c.l, err, c.field)
		}
	}
	if err := (Loss{Kind: MLP, Classes: 10, Hidden: 100}).Validate(); err != nil {
		t.Errorf("valid MLP refused: %v", err)
	}
}

// The MLP's initialization follows PyTorch's nn.Linear default: each layer's
// weights and biases within ±1/√fan-in, and not all zero.
func TestMLPInitBounds(t *testing.T) {
	l := Loss{Kind: MLP, Classes: 3, Hidden: 16}
	theta := l.Init(100, rand.New(rand.NewPCG(1, 1)))
	split := 16 * 101
	if len(theta) != l.Dim(100) {
		t.Fatalf("len = %d, want %d", len(theta), l.Dim(100))
	}
	if a := floats.Max(theta[:split]); a > 0.1 || a < 0.05 {
		t.Errorf("largest hidden-layer weight %v, want within (0.05, 1/√100]", a)
	}
	if a := floats.Max(theta[split:]); a > 0.25 || a < 0.1 {
		t.Errorf("largest output-layer weight %v, want within (0.1, 1/√16]", a)
	}
	if (Loss{Kind: Softmax, Classes: 3}).Init(100, nil) != nil {
		t.Error("softmax regression should start from 0")
	}
}

// A local step of the multi-class models must not allocate: the buffers come
// from the pool. (AllocsPerRun averages over the runs, so a rare refill of
// the pool after a garbage collection does not count.)
func TestMultiClassGradDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop buffers on purpose")
	}
	r := rand.New(rand.NewPCG(9, 10))
	s := classSet(r, 50, 20, 3)
	idx := []int{1, 5, 9, 20, 33}
	for _, l := range multiLosses(20, r) {
		w := randomVector(r, l.Dim(20), 0.1)
		g := make([]float64, len(w))
		if n := testing.AllocsPerRun(100, func() { l.Grad(g, w, s, idx, nil) }); n != 0 {
			t.Errorf("%v: %v allocations per Grad", l.Kind, n)
		}
	}
}

// The scalar derivatives of the linear losses do not exist for the
// multi-class models: calling one is a loud programming error, not a number.
func TestScalarMethodsRefuseMultiClassModels(t *testing.T) {
	l := Loss{Kind: MLP, Classes: 3, Hidden: 2}
	for name, f := range map[string]func(){
		"Term": func() { l.Term(0, 0) }, "Deriv": func() { l.Deriv(0, 0) }, "Curvature": func() { l.Curvature(0, 0) },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), name+" is defined for the generalized linear losses only") {
					t.Errorf("%s on the MLP: recovered %v", name, r)
				}
			}()
			f()
		}()
	}
}

// TestEvaluateIsTheSameOnAnyNumberOfCores checks that splitting an
// evaluation over cores changes no bit of it — the runner's metrics.csv must
// be the same at any GOMAXPROCS: with one core Evaluate is a single pass
// over the samples, with three the chunks (two full, one partial) finish in
// any order. Every multi-class model, dense and sparse data.
func TestEvaluateIsTheSameOnAnyNumberOfCores(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 4))
	const n, features, classes = 2*evalChunk + 300, 9, 3 // multiLosses have 3 classes
	dense := classSet(r, n, features, classes)
	sparse := sparseCopy(dense)
	for _, l := range multiLosses(features, r) {
		w := randomVector(r, l.Dim(features), 0.5)
		for _, s := range []*data.Set{dense, sparse} {
			old := runtime.GOMAXPROCS(1)
			serial := l.Evaluate(w, s)
			runtime.GOMAXPROCS(3)
			parallel := l.Evaluate(w, s)
			runtime.GOMAXPROCS(old)
			same := math.Float64bits(serial.CrossEntropy) == math.Float64bits(parallel.CrossEntropy) &&
				serial.Error == parallel.Error && serial.Accuracy == parallel.Accuracy
			if !same {
				t.Errorf("%v, sparse %v: GOMAXPROCS=1 %+v, GOMAXPROCS=3 %+v", l.Kind, s.Sparse(), serial, parallel)
			}
			if serial.Error == 0 || serial.CrossEntropy == 0 {
				t.Errorf("%v: degenerate evaluation %+v", l.Kind, serial)
			}
		}
	}
}

// pixelSets returns n samples of dim pixel-like features — half of them 0,
// the others b/255 — with classes 0…k−1, twice: as a dense set and as a
// coded set whose rows are those of a shared byte matrix in shuffled order,
// as data.IDXRows builds them.
func pixelSets(r *rand.Rand, n, dim, k int) (dense, coded *data.Set) {
	codes := make([]byte, n*dim)
	for i := range codes {
		if r.IntN(2) == 0 {
			codes[i] = byte(1 + r.IntN(255))
		}
	}
	var values [256]float64
	for b := range values {
		values[b] = float64(b) / 255
	}
	rows := r.Perm(n)
	dense = &data.Set{Dim: dim, X: make([]float64, n*dim), Y: make([]float64, n)}
	coded = &data.Set{Dim: dim, Coded: &data.CodedRows{Codes: codes, Rows: rows, Values: &values}, Y: dense.Y}
	for i, row := range rows {
		for j, b := range codes[row*dim : (row+1)*dim] {
			dense.X[i*dim+j] = values[b]
		}
		dense.Y[i] = float64(r.IntN(k))
	}
	return dense, coded
}

// Coded rows (one byte per feature, as the runner holds IDX images) are
// decoded to exactly the float64 values of the dense rows before any
// arithmetic, so every method gives the same numbers bit for bit: the
// metrics of a run must not change with the layout. Rows in shuffled order
// of a shared byte matrix, as data.IDXRows deals them out; more samples than
// one chunk of a full pass, the last chunk partial.
func TestCodedRowsGiveTheDenseResults(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 5))
	const dim, classes = 11, 3
	dense, coded := pixelSets(r, 2*chunkRows+5, dim, classes)
	idx := []int{4, 0, 511, 4, 17}
	for _, l := range multiLosses(dim, r) {
		w := randomVector(r, l.Dim(dim), 0.5)
		gd, gc := make([]float64, len(w)), make([]float64, len(w))
		l.Grad(gd, w, dense, idx, nil)
		l.Grad(gc, w, coded, idx, nil)
		if !slices.Equal(gd, gc) {
			t.Errorf("%v: Grad differs", l.Kind)
		}
		l.FullGrad(gd, w, dense)
		l.FullGrad(gc, w, coded)
		if !slices.Equal(gd, gc) {
			t.Errorf("%v: FullGrad differs", l.Kind)
		}
		if a, b := l.Risk(w, dense), l.Risk(w, coded); a != b {
			t.Errorf("%v: Risk %v (dense), %v (coded)", l.Kind, a, b)
		}
		if a, b := l.Value(w, dense, 7), l.Value(w, coded, 7); a != b {
			t.Errorf("%v: Value %v (dense), %v (coded)", l.Kind, a, b)
		}
		if a, b := l.Evaluate(w, dense), l.Evaluate(w, coded); a != b {
			t.Errorf("%v: Evaluate %+v (dense), %+v (coded)", l.Kind, a, b)
		}
		if a, b := l.SampleGradNorm(w, dense, 9, gd), l.SampleGradNorm(w, coded, 9, gc); a != b {
			t.Errorf("%v: SampleGradNorm %v (dense), %v (coded)", l.Kind, a, b)
		}
	}
}
