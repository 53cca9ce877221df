// Package loss implements the regularized losses of the seed papers and the
// multi-class models of the image benchmarks,
//
//	Q(w; x, y) = ℓ(f_w(x), y) + ρ‖w‖²,
//
// on a flat parameter vector w, so that every protocol (averaging, noise,
// masks, combination) treats all models alike.
//
// The seed papers' losses are generalized linear, f_w(x) = xᵀw: ℓ(z, y) =
// (y − z)² for least squares (thesis eq. 2.72, paper 001 eq. 56: no ½ factor)
// and ℓ(z, y) = ln(1 + e^{−yz}) for logistic regression with labels y ∈ {±1};
// ∇_w ℓ = ℓ'(xᵀw, y)·x, so one gradient kernel serves dense and sparse data.
//
// The multi-class models take class labels y ∈ {0, …, K−1} and the
// cross-entropy ℓ = −ln softmax(f_w(x))_y: Softmax is multinomial logistic
// regression, f(x) = Wx + b (K(M+1) parameters), and MLP a one-hidden-layer
// perceptron, f(x) = W₂ σ(W₁x + b₁) + b₂ with a ReLU or tanh σ
// (H(M+1) + K(H+1) parameters); CNN is a convolutional network of the
// layers of cnn.go (convolution, pooling, activations, group normalization,
// dense) with the same softmax output. Their gradients run the dense
// kernels (kernels.go) on the whole mini-batch, in work buffers reused
// across calls (see multiclass.go and cnn_pass.go).
package loss

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/internal/enum"
)

// Kind selects the data term ℓ.
type Kind int

const (
	// LeastSquares is ℓ(z, y) = (y − z)².
	LeastSquares Kind = iota
	// Logistic is ℓ(z, y) = ln(1 + e^{−yz}) with y ∈ {±1}.
	Logistic
	// Softmax is multinomial logistic regression over Classes classes.
	Softmax
	// MLP is a one-hidden-layer perceptron with a softmax output.
	MLP
	// CNN is a convolutional network (Net) with a softmax output.
	CNN
)

var kindNames = enum.Of[Kind]("loss", "least-squares", "logistic", "softmax", "mlp", "cnn")

// String returns the scenario-file name of the kind.
func (k Kind) String() string { return kindNames.String(k) }

// ParseKind returns the kind named s ("least-squares", "logistic",
// "softmax", "mlp" or "cnn").
func ParseKind(s string) (Kind, error) { return kindNames.Parse(s) }

// Activation is the hidden nonlinearity σ of the MLP.
type Activation int

const (
	// ReLU is σ(a) = max(a, 0), with σ'(0) = 0.
	ReLU Activation = iota
	// Tanh is σ(a) = tanh a.
	Tanh
)

var activationNames = enum.Of[Activation]("activation", "relu", "tanh")

// String returns the scenario-file name of the activation.
func (a Activation) String() string { return activationNames.String(a) }

// ParseActivation returns the activation named s ("relu" or "tanh").
func ParseActivation(s string) (Activation, error) { return activationNames.Parse(s) }

// Loss is a regularized loss on a flat parameter vector. It is a small value:
// copies share Origin, which is never modified.
type Loss struct {
	Kind Kind
	// Rho is the weight ρ of the regularizer ρ‖θ‖² on all parameters,
	// biases included.
	Rho float64
	// Classes is the number of classes K of Softmax and MLP.
	Classes int
	// Hidden is the MLP's hidden width H.
	Hidden int
	// Activation is the MLP's hidden nonlinearity.
	Activation Activation
	// Net is the CNN's network, shared (read-only) by copies of the loss.
	Net *Net
	// Origin, when not nil, is the point θ₀ the model vector is measured
	// from: the parameters are θ = θ₀ + w, and the regularizer is ρ‖θ‖². The
	// MLP needs it because w = 0 (every weight zero) is a stationary point
	// of its loss where every hidden unit stays identical: with θ₀ a random
	// initialization (Init), the protocols still start from w = 0 and
	// average, perturb and combine w as before — a translation that commutes
	// with all of them — while the network trains from θ₀. Its length is
	// Dim(features).
	Origin []float64
}

// Dim returns the length of the parameter vector of the model on data with
// the given number of features: the features themselves for the generalized
// linear losses, K(M+1) for Softmax, H(M+1) + K(H+1) for MLP, and the
// network's parameters for CNN (whose input size must be M).
func (l Loss) Dim(features int) int {
	switch l.Kind {
	case CNN:
		return l.Net.Dim()
	case Softmax:
		return l.Classes * (features + 1)
	case MLP:
		return l.Hidden*(features+1) + l.Classes*(l.Hidden+1)
	}
	return features
}

// Init returns a random starting point θ₀ for a model on data with the given
// number of features, drawn from r, or nil for the convex models, which start
// from 0. For the MLP it is PyTorch's nn.Linear default: every weight and bias
// of a layer with fan-in F uniform on [−1/√F, 1/√F] (F = M for the hidden
// layer, H for the output layer), and for the CNN PyTorch's defaults of
// every layer (Net.init); use it as the loss's Origin.
func (l Loss) Init(features int, r *rand.Rand) []float64 {
	if l.Kind == CNN {
		return l.Net.init(r)
	}
	if l.Kind != MLP {
		return nil
	}
	theta := make([]float64, l.Dim(features))
	split := l.Hidden * (features + 1)
	for i := range theta {
		fanIn := features
		if i >= split {
			fanIn = l.Hidden
		}
		bound := 1 / math.Sqrt(float64(fanIn))
		theta[i] = bound * (2*r.Float64() - 1)
	}
	return theta
}

// GLM reports whether the loss is generalized linear, ℓ(xᵀw, y): only then
// are Term, Deriv and Curvature defined and is the model dimension the
// feature dimension.
func (l Loss) GLM() bool { return l.Kind == LeastSquares || l.Kind == Logistic }

// Convex reports whether the regularized risk is convex (strongly, for
// ρ > 0), so that it has the unique minimizer w^o MSD curves are measured
// against. Only the MLP and the CNN are not.
func (l Loss) Convex() bool { return l.Kind != MLP && l.Kind != CNN }

// Classification reports whether the labels are classes (±1 or 0…K−1) rather
// than real targets.
func (l Loss) Classification() bool { return l.Kind != LeastSquares }

// Validate reports the first impossible field of l, named as in the scenario
// file's loss section.
func (l Loss) Validate() error {
	switch {
	case l.Kind < LeastSquares || l.Kind > CNN:
		return fmt.Errorf("kind: %v", l.Kind)
	case !(l.Rho >= 0) || math.IsInf(l.Rho, 1):
		return fmt.Errorf("rho: must be finite and non-negative, got %v", l.Rho)
	case l.GLM():
		return nil
	case l.Classes < 2:
		return fmt.Errorf("classes: %v needs at least 2 classes, got %d", l.Kind, l.Classes)
	case l.Kind == MLP && l.Hidden < 1:
		return fmt.Errorf("hidden: the MLP needs at least 1 hidden unit, got %d", l.Hidden)
	case l.Kind == MLP && (l.Activation < ReLU || l.Activation > Tanh):
		return fmt.Errorf("activation: %v", l.Activation)
	case l.Kind == CNN && l.Net == nil:
		return fmt.Errorf("layers: the cnn needs its network")
	case l.Kind == CNN && l.Net.Classes() != l.Classes:
		return fmt.Errorf("layers: the network has %d outputs but there are %d classes", l.Net.Classes(), l.Classes)
	}
	return nil
}

// CheckLabels reports the first label of s the loss cannot use, naming its
// sample: finite targets for least squares, ±1 for logistic regression,
// integers 0…K−1 for the multi-class models.
func (l Loss) CheckLabels(s *data.Set) error {
	for n, y := range s.Y {
		switch {
		case math.IsNaN(y) || math.IsInf(y, 0):
			return fmt.Errorf("sample %d: target %v is not finite", n, y)
		case l.Kind == Logistic && y != 1 && y != -1:
			return fmt.Errorf("sample %d: logistic regression needs labels ±1, got %v", n, y)
		case !l.GLM() && (y != math.Trunc(y) || y < 0 || y >= float64(l.Classes)):
			return fmt.Errorf("sample %d: %v needs class labels 0…%d (loss.classes = %d), got %v", n, l.Kind, l.Classes-1, l.Classes, y)
		}
	}
	return nil
}

// Term returns ℓ(z, y). Only generalized linear losses (GLM) have it.
func (l Loss) Term(z, y float64) float64 {
	switch l.Kind {
	case Logistic:
		return softplus(-y * z)
	case LeastSquares:
		r := y - z
		return r * r
	}
	panic(notGLM("Term", l.Kind))
}

// Deriv returns ∂ℓ(z, y)/∂z. Only generalized linear losses (GLM) have it.
func (l Loss) Deriv(z, y float64) float64 {
	switch l.Kind {
	case Logistic:
		return -y * sigmoid(-y*z)
	case LeastSquares:
		return -2 * (y - z)
	}
	panic(notGLM("Deriv", l.Kind))
}

// Curvature returns ∂²ℓ(z, y)/∂z², used by Newton solvers and Lipschitz
// bounds. Only generalized linear losses (GLM) have it: callers check GLM
// and refuse the other models.
func (l Loss) Curvature(z, y float64) float64 {
	switch l.Kind {
	case Logistic:
		s := sigmoid(z)
		return s * (1 - s)
	case LeastSquares:
		return 2
	}
	panic(notGLM("Curvature", l.Kind))
}

// deriv is Deriv for a loss the caller has checked is generalized linear:
// small enough to be inlined into the per-sample loops.
func (l *Loss) deriv(z, y float64) float64 {
	if l.Kind == Logistic {
		return -y * sigmoid(-y*z)
	}
	return -2 * (y - z)
}

// notGLM is the panic value of a scalar method of the generalized linear
// losses called on a multi-class model: a programming error (the caller
// should have refused the model, checking GLM, before running), never a
// wrong number. It is a function of its own so that the scalar methods stay
// small enough to be inlined into the per-sample loops.
func notGLM(method string, k Kind) string {
	return fmt.Sprintf("loss: %s is defined for the generalized linear losses only, not %v (check Loss.GLM and refuse the model)", method, k)
}

// Value returns Q(w; x_n, y_n) for sample n of s.
func (l Loss) Value(w []float64, s *data.Set, n int) float64 {
	if !l.GLM() {
		return l.multiValue(w, s, n)
	}
	return l.Term(s.Dot(n, w), s.Y[n]) + l.Rho*floats.Dot(w, w)
}

// Risk returns the local empirical risk J(w) = (1/N) Σ_n Q(w; x_n, y_n).
func (l Loss) Risk(w []float64, s *data.Set) float64 {
	if !l.GLM() {
		return l.multiRisk(w, s)
	}
	var sum float64
	for n := 0; n < s.Len(); n++ {
		sum += l.Term(s.Dot(n, w), s.Y[n])
	}
	return sum/float64(s.Len()) + l.Rho*floats.Dot(w, w)
}

// Grad sets dst to the weighted gradient Σ_b a_b ∇Q(w; x_{idx[b]}) over the
// samples idx. With a == nil every weight is 1/len(idx), the plain mini-batch
// average. Importance-weighted estimators pass a_b = 1/(B·N·p_b). dst must not
// alias w. It does not allocate (the multi-class models take their work
// buffers from a pool).
func (l Loss) Grad(dst, w []float64, s *data.Set, idx []int, a []float64) {
	if !l.GLM() {
		l.multiGrad(dst, w, s, idx, a)
		return
	}
	clear(dst)
	var total float64
	uniform := 1 / float64(len(idx))
	weight := func(b int) float64 {
		if a != nil {
			return a[b]
		}
		return uniform
	}
	for b := range idx {
		total += weight(b)
	}
	b := 0
	if s.X != nil {
		for ; b+4 <= len(idx); b += 4 {
			n := idx[b : b+4]
			l.addDenseTerms4(dst, w, [4][]float64{s.Row(n[0]), s.Row(n[1]), s.Row(n[2]), s.Row(n[3])},
				[4]float64{s.Y[n[0]], s.Y[n[1]], s.Y[n[2]], s.Y[n[3]]},
				[4]float64{weight(b), weight(b + 1), weight(b + 2), weight(b + 3)})
		}
	}
	for ; b < len(idx); b++ {
		n := idx[b]
		if s.X != nil {
			l.addDenseTerm(dst, w, s.Row(n), s.Y[n], weight(b))
		} else {
			s.AddScaledRow(dst, n, weight(b)*l.deriv(s.Dot(n, w), s.Y[n]))
		}
	}
	floats.AddScaled(dst, 2*l.Rho*total, w)
}

// FullGrad sets dst to ∇J(w) = (1/N) Σ_n ∇Q(w; x_n, y_n). dst must not alias w.
func (l Loss) FullGrad(dst, w []float64, s *data.Set) {
	if !l.GLM() {
		l.multiFullGrad(dst, w, s)
		return
	}
	clear(dst)
	inv := 1 / float64(s.Len())
	n := 0
	if s.X != nil {
		for ; n+4 <= s.Len(); n += 4 {
			l.addDenseTerms4(dst, w, [4][]float64{s.Row(n), s.Row(n + 1), s.Row(n + 2), s.Row(n + 3)},
				[4]float64(s.Y[n:n+4]), [4]float64{inv, inv, inv, inv})
		}
	}
	for ; n < s.Len(); n++ {
		if s.X != nil {
			l.addDenseTerm(dst, w, s.Row(n), s.Y[n], inv)
		} else {
			s.AddScaledRow(dst, n, inv*l.deriv(s.Dot(n, w), s.Y[n]))
		}
	}
	floats.AddScaled(dst, 2*l.Rho, w)
}

// dot4 returns the dot products of w with four rows of its length, run
// interleaved, each summed from the first feature to the last: what four
// calls of a plain loop give, but four independent chains of additions.
func dot4(x0, x1, x2, x3, w []float64) (z0, z1, z2, z3 float64) {
	x1, x2, x3, w = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)], w[:len(x0)]
	for j, v := range x0 {
		wj := w[j]
		z0 += v * wj
		z1 += x1[j] * wj
		z2 += x2[j] * wj
		z3 += x3[j] * wj
	}
	return z0, z1, z2, z3
}

// addDenseTerms4 is addDenseTerm for four rows, in order: the four dot
// products run interleaved, each still summed from the first feature to the
// last, and each dst[j] receives the four terms in row order — the
// operations of four calls of addDenseTerm, each sum in the same order, but
// four independent chains of additions where one call has a single chain
// whose latency bounds it.
func (l *Loss) addDenseTerms4(dst, w []float64, x [4][]float64, y, scale [4]float64) {
	x0 := x[0]
	m := len(x0)
	x1, x2, x3 := x[1][:m], x[2][:m], x[3][:m]
	z0, z1, z2, z3 := dot4(x0, x1, x2, x3, w)
	a0 := scale[0] * l.deriv(z0, y[0])
	a1 := scale[1] * l.deriv(z1, y[1])
	a2 := scale[2] * l.deriv(z2, y[2])
	a3 := scale[3] * l.deriv(z3, y[3])
	dst = dst[:m]
	for j, v := range x0 {
		d := dst[j] + a0*v
		d += a1 * x1[j]
		d += a2 * x2[j]
		dst[j] = d + a3*x3[j]
	}
}

// addDenseTerm adds scale·ℓ'(xᵀw, y)·x to dst for a dense row x: what
// s.AddScaledRow(dst, n, scale·ℓ'(s.Dot(n, w), y)) does, the same operations
// in the same order, written out so that a sample costs one call rather
// than two — the calls cost as much as the arithmetic of a low-dimensional
// model.
func (l *Loss) addDenseTerm(dst, w, x []float64, y, scale float64) {
	var z float64
	for j, v := range x {
		z += v * w[j]
	}
	a := scale * l.deriv(z, y)
	for j, v := range x {
		dst[j] += a * v
	}
}

// SampleGradNorm returns ‖∇Q(w; x_n, y_n)‖ = √(gᵀg), the quantity optimal
// importance sampling probabilities are proportional to. The gradient g is
// the one Grad computes for the single sample n, and gᵀg is summed as
// floats.Dot sums it (for dense rows without storing g: smallNorm and
// laneNorm); the plain square root is used rather than the overflow-safe
// scaling of floats.Norm, which costs several times more, since gradients
// are far from overflow. scratch, of length len(w), is work space whose
// contents are unspecified afterwards. It does not allocate.
func (l Loss) SampleGradNorm(w []float64, s *data.Set, n int, scratch []float64) float64 {
	switch {
	case !l.GLM():
		idx := [1]int{n}
		l.multiGrad(scratch, w, s, idx[:], nil)
		return math.Sqrt(floats.Dot(scratch, scratch))
	case s.X != nil:
		x := s.Row(n)
		var z float64
		for j, v := range x {
			z += v * w[j]
		}
		d := l.deriv(z, s.Y[n])
		if len(x) < 4 {
			return l.smallNorm(x, w, d)
		}
		return l.laneNorm(x, w, d)
	}
	return l.rowNorm(w, s, n, l.deriv(s.Dot(n, w), s.Y[n]), scratch)
}

// The gradient of a generalized linear loss at a sample with ℓ' = d is, as
// Grad computes it for idx = [n] (the weight 1/1), g_j = (0 + (1·d)·x_j) +
// (2ρ·1)·w_j: clear, the row's term, then floats.AddScaled — whose assembly
// on amd64 adds 2ρ·w_j to the stored coordinate, the same sum since
// addition commutes. floats.Dot(g, g) then sums g_j² in dotLanes lanes:
// gonum's amd64 assembly keeps four sums, lane j mod 4 for the j below the
// last multiple of four, adds the remaining one to three products to lane 0
// and returns (s₀ + s₂) + (s₁ + s₃); its pure-Go version (other platforms,
// or the noasm, safe and gccgo builds) sums in coordinate order. smallNorm,
// laneNorm and sparseNorm compute that sum without storing g; the tests
// compare them with floats.Dot of Grad's gradient.

// smallNorm is the norm of g at a dense row x of fewer than four features,
// with g in registers: both of floats.Dot's orders are then the coordinate
// order from 0. It is small enough to be inlined into the per-sample loops.
func (l *Loss) smallNorm(x, w []float64, d float64) float64 {
	r := 2 * l.Rho
	w = w[:len(x)]
	var sq float64
	for j, v := range x {
		g := 0.0
		g += d * v
		g += r * w[j]
		sq += g * g
	}
	return math.Sqrt(sq)
}

// laneNorm is the norm of g at a dense row x, in floats.Dot's lanes.
func (l *Loss) laneNorm(x, w []float64, d float64) float64 {
	r := 2 * l.Rho
	w = w[:len(x)]
	var s0, s1, s2, s3 float64
	j := 0
	if dotLanes == 4 {
		for ; j+4 <= len(x); j += 4 {
			x, w := x[j:j+4], w[j:j+4]
			g0, g1, g2, g3 := 0.0, 0.0, 0.0, 0.0
			g0 += d * x[0]
			g1 += d * x[1]
			g2 += d * x[2]
			g3 += d * x[3]
			g0 += r * w[0]
			g1 += r * w[1]
			g2 += r * w[2]
			g3 += r * w[3]
			s0 += g0 * g0
			s1 += g1 * g1
			s2 += g2 * g2
			s3 += g3 * g3
		}
	}
	for ; j < len(x); j++ {
		g := 0.0
		g += d * x[j]
		g += r * w[j]
		s0 += g * g
	}
	return math.Sqrt((s0 + s2) + (s1 + s3))
}

// rowNorm is the norm of g at a sparse or coded row n of s, computed in
// scratch (of length len(w)) as Grad computes it and summed by floats.Dot.
func (l *Loss) rowNorm(w []float64, s *data.Set, n int, d float64, scratch []float64) float64 {
	clear(scratch)
	s.AddScaledRow(scratch, n, d)
	floats.AddScaled(scratch, 2*l.Rho, w)
	return math.Sqrt(floats.Dot(scratch, scratch))
}

// offSupport sets q_j = (2ρ·w_j)², the square of g_j at every coordinate
// off a sparse row's support, for sparseNorm.
func (l *Loss) offSupport(q, w []float64) {
	r := 2 * l.Rho
	w = w[:len(q)]
	for j, v := range w {
		u := r * v
		q[j] = u * u
	}
}

// sparseNorm is rowNorm for a sparse row n of s with strictly increasing
// columns (increasingColumns), from q as offSupport leaves it: it writes the
// squares of g on the row's support into q, sums q in floats.Dot's lanes and
// restores q. (0 + 2ρ·w_j)² is (2ρ·w_j)², a zero's sign aside.
func (l *Loss) sparseNorm(q, w []float64, s *data.Set, n int, d float64) float64 {
	r := 2 * l.Rho
	lo, hi := s.RowPtr[n], s.RowPtr[n+1]
	cols, vals := s.Col[lo:hi], s.Val[lo:hi]
	vals = vals[:len(cols)]
	for k, c := range cols {
		g := 0.0
		g += d * vals[k]
		g += r * w[c]
		q[c] = g * g
	}
	var s0, s1, s2, s3 float64
	j := 0
	if dotLanes == 4 {
		for ; j+4 <= len(q); j += 4 {
			q := q[j : j+4]
			s0 += q[0]
			s1 += q[1]
			s2 += q[2]
			s3 += q[3]
		}
	}
	for ; j < len(q); j++ {
		s0 += q[j]
	}
	for _, c := range cols {
		u := r * w[c]
		q[c] = u * u
	}
	return math.Sqrt((s0 + s2) + (s1 + s3))
}

// increasingColumns reports whether s is sparse with strictly increasing
// columns in every row, as sparseNorm needs (the data package's readers and
// generators make them so; a repeated column would add two terms to one
// coordinate of g before its square).
func increasingColumns(s *data.Set) bool {
	if !s.Sparse() {
		return false
	}
	for n := range s.Len() {
		cols := s.Col[s.RowPtr[n]:s.RowPtr[n+1]]
		for k := 1; k < len(cols); k++ {
			if cols[k] <= cols[k-1] {
				return false
			}
		}
	}
	return true
}

// SampleGradNorms sets norms[n] = SampleGradNorm(w, s, n, scratch) for
// every sample n of s, bit for bit; on sparse data, scratch holds
// offSupport's squares for sparseNorm.
func (l Loss) SampleGradNorms(norms, w []float64, s *data.Set, scratch []float64) {
	switch {
	case l.GLM() && s.X != nil:
		m := s.Dim
		w = w[:m]
		for n := range norms {
			x := s.X[n*m : (n+1)*m]
			var z float64
			for j, v := range x {
				z += v * w[j]
			}
			d := l.deriv(z, s.Y[n])
			if m < 4 {
				norms[n] = l.smallNorm(x, w, d)
			} else {
				norms[n] = l.laneNorm(x, w, d)
			}
		}
	case l.GLM() && increasingColumns(s):
		l.offSupport(scratch, w)
		for n := range norms {
			norms[n] = l.sparseNorm(scratch, w, s, n, l.deriv(s.Dot(n, w), s.Y[n]))
		}
	default:
		for n := range norms {
			norms[n] = l.SampleGradNorm(w, s, n, scratch)
		}
	}
}

// NormsAndFullGrad sets norms[n] = SampleGradNorm(w, s, n, scratch) for every
// sample n of s and dst to FullGrad(w, s), bit for bit what the two calls
// give, in one pass over the samples: for the generalized linear losses each
// sample's xᵀw and ℓ' are computed once and serve both — the dense rows four
// at a time, their dot products interleaved and their terms added to each
// dst[j] in sample order, as FullGrad does. dst must not alias w; scratch has
// the length of w.
func (l Loss) NormsAndFullGrad(norms, dst, w []float64, s *data.Set, scratch []float64) {
	if !l.GLM() {
		l.SampleGradNorms(norms, w, s, scratch)
		l.FullGrad(dst, w, s)
		return
	}
	clear(dst)
	inv := 1 / float64(s.Len())
	if s.X == nil {
		increasing := increasingColumns(s)
		if increasing {
			l.offSupport(scratch, w)
		}
		for n := range s.Len() {
			d := l.deriv(s.Dot(n, w), s.Y[n])
			if increasing {
				norms[n] = l.sparseNorm(scratch, w, s, n, d)
			} else {
				norms[n] = l.rowNorm(w, s, n, d, scratch)
			}
			s.AddScaledRow(dst, n, inv*d)
		}
		floats.AddScaled(dst, 2*l.Rho, w)
		return
	}
	m, N := s.Dim, s.Len()
	w, dst, norms = w[:m], dst[:m], norms[:N]
	y := s.Y[:N]
	n := 0
	for ; n+4 <= N; n += 4 {
		x := s.X[n*m : (n+4)*m]
		x0, x1, x2, x3 := x[:m], x[m:2*m], x[2*m:3*m], x[3*m:]
		x1, x2, x3 = x1[:len(x0)], x2[:len(x0)], x3[:len(x0)]
		z0, z1, z2, z3 := dot4(x0, x1, x2, x3, w)
		d0, d1, d2, d3 := l.deriv(z0, y[n]), l.deriv(z1, y[n+1]), l.deriv(z2, y[n+2]), l.deriv(z3, y[n+3])
		if m < 4 {
			norms[n], norms[n+1] = l.smallNorm(x0, w, d0), l.smallNorm(x1, w, d1)
			norms[n+2], norms[n+3] = l.smallNorm(x2, w, d2), l.smallNorm(x3, w, d3)
		} else {
			norms[n], norms[n+1] = l.laneNorm(x0, w, d0), l.laneNorm(x1, w, d1)
			norms[n+2], norms[n+3] = l.laneNorm(x2, w, d2), l.laneNorm(x3, w, d3)
		}
		a0, a1, a2, a3 := inv*d0, inv*d1, inv*d2, inv*d3
		dst := dst[:len(x0)]
		for j, v := range x0 {
			g := dst[j] + a0*v
			g += a1 * x1[j]
			g += a2 * x2[j]
			dst[j] = g + a3*x3[j]
		}
	}
	for ; n < N; n++ {
		x := s.X[n*m : (n+1)*m]
		var z float64
		for j, v := range x {
			z += v * w[j]
		}
		d := l.deriv(z, y[n])
		if m < 4 {
			norms[n] = l.smallNorm(x, w, d)
		} else {
			norms[n] = l.laneNorm(x, w, d)
		}
		a := inv * d
		for j, v := range x {
			dst[j] += a * v
		}
	}
	floats.AddScaled(dst, 2*l.Rho, w)
}

// TestError returns the fraction of samples of s that w misclassifies: a sign
// of x_nᵀw other than the ±1 label for the generalized linear losses (a zero
// score counts as an error, so an all-zero model scores 100% error), an arg
// max other than the class for the multi-class models (ties go to the lower
// class).
func (l Loss) TestError(w []float64, s *data.Set) float64 {
	return l.Evaluate(w, s).Error
}

// Evaluation is how well a model classifies a (test) set.
type Evaluation struct {
	// Error is the fraction of misclassified samples and Accuracy the
	// fraction of the others (each computed from its own count, so that
	// neither carries the rounding of 1 − the other).
	Error, Accuracy float64
	// CrossEntropy is the mean data term ℓ without the regularizer: the
	// binary cross-entropy ln(1 + e^{−yz}) for logistic regression,
	// −ln softmax(f(x))_y for the multi-class models, the squared error for
	// least squares.
	CrossEntropy float64
}

// Evaluate returns the test error and the mean cross-entropy of w on s, in
// one pass over the samples.
func (l Loss) Evaluate(w []float64, s *data.Set) Evaluation {
	if !l.GLM() {
		return l.multiEvaluate(w, s)
	}
	wrong := 0
	var sum float64
	for n := 0; n < s.Len(); n++ {
		z := s.Dot(n, w)
		if z*s.Y[n] <= 0 {
			wrong++
		}
		sum += l.Term(z, s.Y[n])
	}
	return evaluation(wrong, s.Len(), sum)
}

// evaluation returns the Evaluation of wrong misclassified samples out of n
// with summed cross-entropy nll.
func evaluation(wrong, n int, nll float64) Evaluation {
	return Evaluation{Error: float64(wrong) / float64(n), Accuracy: float64(n-wrong) / float64(n), CrossEntropy: nll / float64(n)}
}

// sigmoid returns 1/(1 + e^{−z}) without overflow for large |z|.
func sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// softplus returns ln(1 + e^z) without overflow for large z.
func softplus(z float64) float64 {
	if z > 0 {
		return z + math.Log1p(math.Exp(-z))
	}
	return math.Log1p(math.Exp(z))
}
