package topology

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Errors returned, wrapped with the offending entry, column, node or pair, by
// the Check functions and by Perron. Test for them with errors.Is.
var (
	// ErrNotSquare: a combination matrix must be P×P with P ≥ 1.
	ErrNotSquare = errors.New("topology: combination matrix is not square")
	// ErrNotStochastic: an entry is negative or not finite, or a column (or,
	// for doubly-stochastic checks, a row) does not sum to one.
	ErrNotStochastic = errors.New("topology: combination matrix is not stochastic")
	// ErrNotConnected: some agent's information can never reach some other
	// agent, even through intermediaries.
	ErrNotConnected = errors.New("topology: combination matrix is not strongly connected")
	// ErrNotPrimitive: some power of the matrix never becomes entrywise
	// positive, so iterates may oscillate instead of reaching consensus.
	ErrNotPrimitive = errors.New("topology: combination matrix is not primitive")
	// ErrNoSelfWeight: an agent gives zero weight to its own state.
	ErrNoSelfWeight = errors.New("topology: agent without self-weight")
	// ErrAsymmetricSupport: one agent listens to another that does not listen back.
	ErrAsymmetricSupport = errors.New("topology: combination matrix support is not symmetric")
)

// DefaultTol is the tolerance on column and row sums used by Perron. Sums of P
// weights computed in floating point are exact to about P·2⁻⁵³, so 1e-9 accepts
// any computed matrix with up to millions of agents, while a typo in a matrix
// file still fails.
const DefaultTol = 1e-9

// CheckLeftStochastic checks that A is square, that every entry is finite and
// non-negative (strictly: −1e-300 is negative), and that every column sums to
// one within tol. The error names the first offending entry or column.
func CheckLeftStochastic(A mat.Matrix, tol float64) error {
	n, err := order(A)
	if err != nil {
		return err
	}
	checkTol(tol)
	for p := range n {
		sum := 0.0
		for m := range n {
			v := A.At(m, p)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%w: a[%d][%d] = %g is not finite", ErrNotStochastic, m, p, v)
			}
			if v < 0 {
				return fmt.Errorf("%w: a[%d][%d] = %g is negative", ErrNotStochastic, m, p, v)
			}
			sum += v
		}
		if !(math.Abs(sum-1) <= tol) {
			return fmt.Errorf("%w: column %d (the weights receiver %d uses) sums to %g, not 1 (tolerance %g)",
				ErrNotStochastic, p, p, sum, tol)
		}
	}
	return nil
}

// CheckDoublyStochastic checks that A is left-stochastic and that, in
// addition, every row sums to one within tol, as needed for the network to
// converge to the plain average.
func CheckDoublyStochastic(A mat.Matrix, tol float64) error {
	if err := CheckLeftStochastic(A, tol); err != nil {
		return err
	}
	n, _ := A.Dims()
	for m := range n {
		sum := 0.0
		for p := range n {
			sum += A.At(m, p)
		}
		if !(math.Abs(sum-1) <= tol) {
			return fmt.Errorf("%w: row %d (the weights given to sender %d) sums to %g, not 1 (tolerance %g), so A is not doubly stochastic",
				ErrNotStochastic, m, m, sum, tol)
		}
	}
	return nil
}

// Support returns the communication pattern of A, ignoring the diagonal:
// senders[p] lists, in ascending order, the agents m ≠ p with a_mp > 0 (those p
// listens to), and receivers[m] the agents p ≠ m with a_mp > 0 (those that
// listen to m). A must be square.
func Support(A mat.Matrix) (senders, receivers [][]int) {
	n, err := order(A)
	if err != nil {
		panic(err)
	}
	senders = make([][]int, n)
	receivers = make([][]int, n)
	for m := range n { // ascending m and p keep both lists sorted
		for p := range n {
			if m != p && A.At(m, p) > 0 {
				senders[p] = append(senders[p], m)
				receivers[m] = append(receivers[m], p)
			}
		}
	}
	return senders, receivers
}

// CheckConnected checks that the support graph of A, with an edge m → p when
// a_mp > 0, is strongly connected: information from every agent eventually
// reaches every other agent. The error names an agent that is cut off.
func CheckConnected(A mat.Matrix) error {
	if _, err := order(A); err != nil {
		return err
	}
	return stronglyConnected(Support(A))
}

// stronglyConnected is CheckConnected on the support lists of a matrix.
func stronglyConnected(senders, receivers [][]int) error {
	if p := slices.Index(levels(receivers, 0), -1); p >= 0 {
		return fmt.Errorf("%w: agent %d never receives information from agent 0, even through other agents",
			ErrNotConnected, p)
	}
	if m := slices.Index(levels(senders, 0), -1); m >= 0 {
		return fmt.Errorf("%w: information from agent %d never reaches agent 0, even through other agents",
			ErrNotConnected, m)
	}
	return nil
}

// CheckPrimitive checks that A is primitive: its support graph is strongly
// connected and aperiodic, so that A^k > 0 entrywise for some k and the Perron
// vector exists and is unique. Aperiodicity is decided exactly, in time linear
// in the number of edges: with ℓ the breadth-first distance from agent 0, the
// period is the gcd of ℓ(m) + 1 − ℓ(p) over all edges m → p (including self
// loops a_pp > 0, which alone make the graph aperiodic). A failure on
// connectivity satisfies both errors.Is(err, ErrNotPrimitive) and
// errors.Is(err, ErrNotConnected).
func CheckPrimitive(A mat.Matrix) error {
	n, err := order(A)
	if err != nil {
		return err
	}
	senders, receivers := Support(A)
	if err := stronglyConnected(senders, receivers); err != nil {
		return notPrimitive{err}
	}
	level := levels(receivers, 0)
	period := 0
	for m, ps := range receivers {
		if A.At(m, m) > 0 {
			period = 1
		}
		for _, p := range ps {
			period = gcd(period, level[m]+1-level[p])
		}
	}
	switch {
	case period == 1:
		return nil
	case n == 1:
		return fmt.Errorf("%w: the only agent has self-weight a[0][0] = %g", ErrNotPrimitive, A.At(0, 0))
	default:
		return fmt.Errorf("%w: every cycle of the support graph has a length divisible by %d, "+
			"so the iterates oscillate with period %d; give some agent a positive self-weight",
			ErrNotPrimitive, period, period)
	}
}

// notPrimitive marks a connectivity failure as also being a primitivity failure.
type notPrimitive struct{ error }

// Unwrap returns the connectivity error.
func (e notPrimitive) Unwrap() error { return e.error }

// Is reports that the error is also ErrNotPrimitive.
func (e notPrimitive) Is(target error) bool { return target == ErrNotPrimitive }

// gcd returns the greatest common divisor of |a| and |b|, with gcd(0, b) = |b|.
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return max(a, -a)
}

// CheckSelfWeights checks that every agent gives positive weight to its own
// state (a_pp > 0), which guarantees aperiodicity on a connected graph. The
// error names the first agent without one.
func CheckSelfWeights(A mat.Matrix) error {
	n, err := order(A)
	if err != nil {
		return err
	}
	for p := range n {
		if !(A.At(p, p) > 0) {
			return fmt.Errorf("%w: agent %d has self-weight a[%d][%d] = %g", ErrNoSelfWeight, p, p, p, A.At(p, p))
		}
	}
	return nil
}

// CheckSymmetricSupport checks that a_mp > 0 exactly when a_pm > 0: whenever
// p listens to m, m also listens to p, as on an undirected graph. The error
// names the first pair that breaks this.
func CheckSymmetricSupport(A mat.Matrix) error {
	n, err := order(A)
	if err != nil {
		return err
	}
	for m := range n {
		for p := m + 1; p < n; p++ {
			if (A.At(m, p) > 0) != (A.At(p, m) > 0) {
				sender, receiver := m, p // receiver listens to sender, not the reverse
				if A.At(p, m) > 0 {
					sender, receiver = p, m
				}
				return fmt.Errorf("%w: agent %d listens to agent %d (a[%d][%d] = %g) but not the reverse (a[%d][%d] = %g)",
					ErrAsymmetricSupport, receiver, sender, sender, receiver, A.At(sender, receiver),
					receiver, sender, A.At(receiver, sender))
			}
		}
	}
	return nil
}

// order returns P for a P×P matrix with P ≥ 1.
func order(A mat.Matrix) (int, error) {
	r, c := A.Dims()
	if r != c || r == 0 {
		return 0, fmt.Errorf("%w: it is %d×%d", ErrNotSquare, r, c)
	}
	return r, nil
}

// checkTol rejects a negative or NaN tolerance, a programming error.
func checkTol(tol float64) {
	if !(tol >= 0) {
		panic(fmt.Sprintf("topology: tolerance %g is not a non-negative number", tol))
	}
}
