package homomorphic

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"maple/internal/enum"
)

// Form selects how a sender scales its GH noise on each outgoing edge.
type Form int

const (
	// RatioFree sends the same y_p + g_p to every neighbour (thesis eq. 3.51).
	// It cancels for every left-stochastic A.
	RatioFree Form = iota
	// Ratio sends y_p + (a_mp/a_pm)·g_p to neighbour m (paper 001 eq. 44 with
	// its weight indices read as in eqs. 50–51; see the package comment). It
	// cancels only for doubly-stochastic A with symmetric support.
	Ratio
)

var formNames = enum.Of[Form]("graph-homomorphic form", "ratio-free", "ratio")

// String returns the scenario-file name of the form.
func (f Form) String() string { return formNames.String(f) }

// ParseForm returns the form named s ("ratio-free" or "ratio").
func ParseForm(s string) (Form, error) { return formNames.Parse(s) }

// CheckForm reports whether GH noise of the given form cancels in the
// Perron-weighted network sum for the combination matrix A. Sums of weights are
// compared with 1 to within the absolute tolerance tol. Every form needs a
// square, nonnegative, left-stochastic A with a positive self-weight at every
// agent; Ratio also needs A doubly stochastic with symmetric support. The error
// says which condition fails and where.
func CheckForm(A mat.Matrix, form Form, tol float64) error {
	if err := checkLeftStochastic(A, tol); err != nil {
		return err
	}
	if err := checkSelfWeights(A); err != nil {
		return err
	}
	switch form {
	case RatioFree:
		return nil
	case Ratio:
		if err := checkSymmetricSupport(A); err != nil {
			return err
		}
		return checkRowSums(A, tol)
	}
	return fmt.Errorf("unknown graph-homomorphic form %v", form)
}

func checkLeftStochastic(A mat.Matrix, tol float64) error {
	r, c := A.Dims()
	if r != c {
		return fmt.Errorf("combination matrix is %d×%d, not square", r, c)
	}
	for p := range c {
		var sum float64
		for m := range r {
			a := A.At(m, p)
			if a < 0 || math.IsNaN(a) {
				return fmt.Errorf("combination weight a[%d][%d] = %g is not a nonnegative number", m, p, a)
			}
			sum += a
		}
		if math.Abs(sum-1) > tol {
			return fmt.Errorf("column %d of the combination matrix sums to %.6g, not 1: A is not left-stochastic", p, sum)
		}
	}
	return nil
}

func checkSelfWeights(A mat.Matrix) error {
	p, _ := A.Dims()
	for k := range p {
		if A.At(k, k) == 0 {
			return fmt.Errorf("agent %d has self-weight a[%d][%d] = 0; graph-homomorphic noise needs a positive self-weight at every agent, since the self-correction −(1 − a_pp)/a_pp divides by it", k, k, k)
		}
	}
	return nil
}

func checkSymmetricSupport(A mat.Matrix) error {
	p, _ := A.Dims()
	for m := range p {
		for k := range p {
			if A.At(m, k) > 0 && A.At(k, m) == 0 {
				return fmt.Errorf("the printed ratio form (paper 001 eq. 44) needs symmetric support, but a[%d][%d] > 0 and a[%d][%d] = 0, so the ratio is undefined; use form: ratio-free", m, k, k, m)
			}
		}
	}
	return nil
}

func checkRowSums(A mat.Matrix, tol float64) error {
	p, _ := A.Dims()
	for m := range p {
		var sum float64
		for k := range p {
			sum += A.At(m, k)
		}
		if math.Abs(sum-1) > tol {
			return fmt.Errorf("the printed ratio form (paper 001 eq. 44) cancels only for doubly-stochastic A; column sums are fine but row %d sums to %.6g; use form: ratio-free", m, sum)
		}
	}
	return nil
}

// EdgeCoefficient returns the multiplier c of the sender's draw g_sender in the
// message sender → receiver, an edge with a_{sender,receiver} > 0: 1 for
// RatioFree, and a_{receiver,sender}/a_{sender,receiver} =
// A.At(receiver, sender)/A.At(sender, receiver) for Ratio (the sender's weight
// on the receiver over the receiver's weight on the sender). For
// sender == receiver it returns SelfCoefficient(A, sender).
func EdgeCoefficient(A mat.Matrix, form Form, sender, receiver int) float64 {
	if sender == receiver {
		return SelfCoefficient(A, sender)
	}
	switch form {
	case RatioFree:
		return 1
	case Ratio:
		return A.At(receiver, sender) / A.At(sender, receiver)
	}
	panic(fmt.Sprintf("homomorphic: invalid %v", form))
}

// SelfCoefficient returns −(1 − a_pp)/a_pp, the multiplier of g_p in agent p's
// own self term, which offsets the noise its neighbours receive.
func SelfCoefficient(A mat.Matrix, p int) float64 {
	a := A.At(p, p)
	return -(1 - a) / a
}

// Residual sets dst to the Perron-weighted network sum of the noise injected at
// one stage,
//
//	Σ_p q_p Σ_m a_mp c_mp g_m,
//
// where draws[m] is agent m's draw g_m, c_mp = EdgeCoefficient(A, form, m, p)
// and the sum over m runs over the senders with a_mp > 0, self terms included.
// It is zero up to rounding when the form cancels for A (see CheckForm). Terms
// are added receiver by receiver, senders in ascending order.
func Residual(A mat.Matrix, q []float64, draws [][]float64, form Form, dst []float64) {
	mustMatchDims(A, q, draws, dst)
	clear(dst)
	for p, qp := range q {
		for m, g := range draws {
			if a := A.At(m, p); a != 0 {
				floats.AddScaled(dst, qp*a*EdgeCoefficient(A, form, m, p), g)
			}
		}
	}
}

// mustMatchDims panics unless A is P×P with P = len(q) = len(draws) and every
// draw has the length of dst: a mismatch is a bug in the caller.
func mustMatchDims(A mat.Matrix, q []float64, draws [][]float64, dst []float64) {
	r, c := A.Dims()
	if r != len(q) || c != len(q) || len(draws) != len(q) {
		panic(fmt.Sprintf("homomorphic: Residual with A %d×%d, len(q) = %d, len(draws) = %d", r, c, len(q), len(draws)))
	}
	for m, g := range draws {
		if len(g) != len(dst) {
			panic(fmt.Sprintf("homomorphic: Residual with len(draws[%d]) = %d, len(dst) = %d", m, len(g), len(dst)))
		}
	}
}
