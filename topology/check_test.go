package topology

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// containsAll reports whether s contains every one of parts.
func containsAll(s string, parts ...string) bool {
	for _, part := range parts {
		if !strings.Contains(s, part) {
			return false
		}
	}
	return true
}

// dense builds a square matrix from its rows.
func dense(rows ...[]float64) *mat.Dense {
	return mat.NewDense(len(rows), len(rows[0]), slices.Concat(rows...))
}

// good is left-stochastic and primitive but not doubly stochastic, not
// symmetric in support, and agent 2 has no self-weight.
var good = dense(
	[]float64{0.5, 0.0, 0.5},
	[]float64{0.5, 0.5, 0.5},
	[]float64{0.0, 0.5, 0.0},
)

func TestChecks(t *testing.T) {
	tests := []struct {
		name    string
		check   func(mat.Matrix) error
		A       mat.Matrix
		wantErr error    // nil: A must pass
		want    []string // parts of the message that name the culprit
	}{
		{"left-stochastic ok", leftStochastic, good, nil, nil},
		{"negative entry", leftStochastic, dense(
			[]float64{1.5, 0},
			[]float64{-0.5, 1},
		), ErrNotStochastic, []string{"a[1][0] = -0.5 is negative"}},
		{"NaN entry", leftStochastic, dense(
			[]float64{1, 0},
			[]float64{0, math.NaN()},
		), ErrNotStochastic, []string{"a[1][1] = NaN is not finite"}},
		{"column sum", leftStochastic, dense(
			[]float64{1, 0.25},
			[]float64{0, 0.5},
		), ErrNotStochastic, []string{"column 1", "sums to 0.75"}},
		{"not square", leftStochastic, mat.NewDense(2, 3, nil), ErrNotSquare, []string{"2×3"}},
		{"doubly ok", doublyStochastic, dense(
			[]float64{0.25, 0.75},
			[]float64{0.75, 0.25},
		), nil, nil},
		{"row sum", doublyStochastic, good, ErrNotStochastic, []string{"row 1", "sums to 1.5"}},
		{"connected ok", CheckConnected, good, nil, nil},
		{"no one hears 2", CheckConnected, dense(
			[]float64{0.5, 0.5, 0},
			[]float64{0.5, 0.5, 0},
			[]float64{0, 0, 1},
		), ErrNotConnected, []string{"agent 2 never receives information from agent 0"}},
		{"2 is never heard", CheckConnected, dense(
			[]float64{0.5, 0.5, 0.5},
			[]float64{0.5, 0.5, 0},
			[]float64{0, 0, 0.5},
		), ErrNotConnected, []string{"information from agent 2 never reaches agent 0"}},
		{"1 and 2 speak to no one", CheckConnected, dense(
			[]float64{1, 0.5, 0.5},
			[]float64{0, 0.5, 0},
			[]float64{0, 0, 0.5},
		), ErrNotConnected, []string{"information from agent 1 never reaches agent 0"}},
		{"primitive ok", CheckPrimitive, good, nil, nil},
		{"periodic ring", CheckPrimitive, dense(
			[]float64{0, 0, 1},
			[]float64{1, 0, 0},
			[]float64{0, 1, 0},
		), ErrNotPrimitive, []string{"divisible by 3"}},
		{"bipartite", CheckPrimitive, dense(
			[]float64{0, 0.5, 0, 0.5},
			[]float64{0.5, 0, 0.5, 0},
			[]float64{0, 0.5, 0, 0.5},
			[]float64{0.5, 0, 0.5, 0},
		), ErrNotPrimitive, []string{"divisible by 2", "positive self-weight"}},
		{"disconnected is not primitive", CheckPrimitive, mat.NewDiagDense(2, []float64{1, 1}),
			ErrNotConnected, []string{"agent 1 never receives"}},
		{"single agent without self-weight", CheckPrimitive, dense([]float64{0}),
			ErrNotPrimitive, []string{"a[0][0] = 0"}},
		{"single agent", CheckPrimitive, dense([]float64{1}), nil, nil},
		{"self-weights ok", CheckSelfWeights, mat.NewDiagDense(2, []float64{1, 1}), nil, nil},
		{"no self-weight", CheckSelfWeights, good, ErrNoSelfWeight, []string{"agent 2", "a[2][2] = 0"}},
		{"symmetric support ok", CheckSymmetricSupport, dense(
			[]float64{0.1, 0.7},
			[]float64{0.9, 0.3},
		), nil, nil},
		{"asymmetric support", CheckSymmetricSupport, good, ErrAsymmetricSupport,
			[]string{"agent 0 listens to agent 1 (a[1][0] = 0.5) but not the reverse (a[0][1] = 0)"}},
	}
	for _, tt := range tests {
		err := tt.check(tt.A)
		if tt.wantErr == nil {
			if err != nil {
				t.Errorf("%s: unexpected error %v", tt.name, err)
			}
			continue
		}
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("%s: error %v is not %v", tt.name, err, tt.wantErr)
			continue
		}
		if !containsAll(err.Error(), tt.want...) {
			t.Errorf("%s: error %q does not mention all of %q", tt.name, err, tt.want)
		}
	}
}

// The stochasticity checks under the tolerance used in TestChecks: the
// matrices there have sums that are exact in binary or off by at least 0.1.
func leftStochastic(A mat.Matrix) error   { return CheckLeftStochastic(A, 1e-12) }
func doublyStochastic(A mat.Matrix) error { return CheckDoublyStochastic(A, 1e-12) }

func TestDisconnectedIsAlsoNotPrimitive(t *testing.T) {
	err := CheckPrimitive(mat.NewDiagDense(3, []float64{1, 1, 1}))
	if !errors.Is(err, ErrNotPrimitive) || !errors.Is(err, ErrNotConnected) {
		t.Errorf("error %v should be both ErrNotPrimitive and ErrNotConnected", err)
	}
}

func TestStochasticToleranceIsInclusive(t *testing.T) {
	A := dense([]float64{1.25, 0}, []float64{0, 1})
	if err := CheckLeftStochastic(A, 0.25); err != nil {
		t.Errorf("column sum 1.25 within tolerance 0.25 rejected: %v", err)
	}
	if err := CheckLeftStochastic(A, 0.125); !errors.Is(err, ErrNotStochastic) {
		t.Errorf("column sum 1.25 accepted with tolerance 0.125: %v", err)
	}
}

func TestSupport(t *testing.T) {
	senders, receivers := Support(good)
	wantSenders := [][]int{{1}, {2}, {0, 1}}
	wantReceivers := [][]int{{2}, {0, 2}, {1}}
	for p := range 3 {
		if !slices.Equal(senders[p], wantSenders[p]) {
			t.Errorf("senders[%d] = %v, want %v", p, senders[p], wantSenders[p])
		}
		if !slices.Equal(receivers[p], wantReceivers[p]) {
			t.Errorf("receivers[%d] = %v, want %v", p, receivers[p], wantReceivers[p])
		}
	}
}

// randomSupport returns a P×P 0/1 matrix whose entries are 1 with probability density.
func randomSupport(r *rand.Rand, P int, density float64) *mat.Dense {
	A := mat.NewDense(P, P, nil)
	for m := range P {
		for p := range P {
			if r.Float64() < density {
				A.Set(m, p, 1)
			}
		}
	}
	return A
}

// booleanPower returns the support of A^k.
func booleanPower(A *mat.Dense, k int) [][]bool {
	P, _ := A.Dims()
	cur := make([][]bool, P) // cur = support of A^1
	for m := range P {
		cur[m] = make([]bool, P)
		for p := range P {
			cur[m][p] = A.At(m, p) > 0
		}
	}
	for range k - 1 {
		next := make([][]bool, P)
		for m := range P {
			next[m] = make([]bool, P)
			for j := range P {
				if !cur[m][j] {
					continue
				}
				for p := range P {
					next[m][p] = next[m][p] || A.At(j, p) > 0
				}
			}
		}
		cur = next
	}
	return cur
}

// TestCheckPrimitiveAgreesWithWielandt compares the linear-time period test
// against the definition: a non-negative P×P matrix is primitive if and only
// if A^k > 0 entrywise for k = (P−1)² + 1 (Wielandt's bound). It also checks
// CheckConnected against reachability: strongly connected if and only if
// (I + A)^(P−1) > 0.
func TestCheckPrimitiveAgreesWithWielandt(t *testing.T) {
	r := newRand(42)
	counts := map[bool]int{}
	for trial := range 3000 {
		P := 1 + trial%6
		A := randomSupport(r, P, 0.15+0.5*r.Float64())
		positive := func(s [][]bool) bool {
			return !slices.ContainsFunc(s, func(row []bool) bool { return slices.Contains(row, false) })
		}
		primitive := positive(booleanPower(A, (P-1)*(P-1)+1))
		IplusA := mat.DenseCopyOf(A)
		for p := range P {
			IplusA.Set(p, p, 1)
		}
		connected := positive(booleanPower(IplusA, max(P-1, 1)))
		if got := CheckPrimitive(A) == nil; got != primitive {
			t.Fatalf("CheckPrimitive = %v, Wielandt says %v for\n%v", got, primitive, mat.Formatted(A))
		}
		if got := CheckConnected(A) == nil; got != connected {
			t.Fatalf("CheckConnected = %v, reachability says %v for\n%v", got, connected, mat.Formatted(A))
		}
		if connected {
			counts[primitive]++
		}
	}
	// The comparison is only meaningful if both outcomes occurred among
	// strongly connected matrices.
	if counts[true] < 50 || counts[false] < 50 {
		t.Errorf("too few cases: %d primitive and %d periodic strongly connected matrices", counts[true], counts[false])
	}
}

func TestNegativeToleranceIsAProgrammingError(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("CheckLeftStochastic with tolerance -1 did not panic")
		}
	}()
	_ = CheckLeftStochastic(good, -1)
}
