package topology

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// perronResidual returns ‖A q − q‖∞.
func perronResidual(A mat.Matrix, q []float64) float64 {
	var Aq mat.VecDense
	Aq.MulVec(A, mat.NewVecDense(len(q), q))
	worst := 0.0
	for p, v := range q {
		worst = max(worst, math.Abs(Aq.AtVec(p)-v))
	}
	return worst
}

// solveTol bounds the error of the Perron solve on the test graphs (P ≤ 50,
// |λ₂| ≤ 0.99): LU with partial pivoting is backward stable, so the residual
// is about P·2⁻⁵³ ≈ 6e-15, and the forward error is that times the condition
// number of the bordered system, which grows like 1/(1 − |λ₂|) ≈ 100. The
// worst error measured on these graphs is 2.6e-15; 1e-12 is far above it yet
// far below any error that would matter (a weight off in the 12th digit).
const solveTol = 1e-12

func TestPerronOfDoublyStochasticIsUniform(t *testing.T) {
	graphs := testGraphs(t)
	for _, name := range sortedKeys(graphs) {
		g := graphs[name]
		for rule, A := range map[string]*mat.Dense{"metropolis": Metropolis(g), "lazy": LazyMetropolis(g)} {
			q, err := Perron(A)
			if err != nil {
				t.Fatalf("%s %s: %v", name, rule, err)
			}
			for p, v := range q {
				if math.Abs(v-1/float64(g.Len())) > solveTol {
					t.Errorf("%s %s: q[%d] = %g, want 1/%d", name, rule, p, v, g.Len())
				}
			}
		}
	}
}

func TestPerronOfAveragingIsProportionalToDegreePlusOne(t *testing.T) {
	graphs := testGraphs(t)
	for _, name := range sortedKeys(graphs) {
		g := graphs[name]
		A := Averaging(g)
		q, err := Perron(A)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r := perronResidual(A, q); r > solveTol {
			t.Errorf("%s: ‖Aq − q‖∞ = %g", name, r)
		}
		total := 0.0
		for p := range g.Len() {
			total += float64(g.Degree(p) + 1)
		}
		for p, v := range q {
			if want := float64(g.Degree(p)+1) / total; math.Abs(v-want) > solveTol {
				t.Errorf("%s: q[%d] = %g, want (d+1)/Σ(d+1) = %g", name, p, v, want)
			}
		}
	}
}

func TestPerronOfAveragingOnAStar(t *testing.T) {
	const n = 8
	g, err := Star(n)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Perron(Averaging(g))
	if err != nil {
		t.Fatal(err)
	}
	// q_p ∝ d_p + 1: the centre has weight n, each leaf 2, out of n + 2(n−1).
	total := float64(n + 2*(n-1))
	if math.Abs(q[0]-n/total) > solveTol {
		t.Errorf("centre q[0] = %g, want %g", q[0], n/total)
	}
	for p := 1; p < n; p++ {
		if math.Abs(q[p]-2/total) > solveTol {
			t.Errorf("leaf q[%d] = %g, want %g", p, q[p], 2/total)
		}
	}
}

func TestPerronRejectsBadMatrices(t *testing.T) {
	tests := []struct {
		name string
		A    mat.Matrix
		want error
	}{
		{"not stochastic", dense([]float64{0.5, 0.5}, []float64{0.4, 0.5}), ErrNotStochastic},
		{"disconnected", mat.NewDiagDense(2, []float64{1, 1}), ErrNotConnected},
		{"periodic", dense([]float64{0, 1}, []float64{1, 0}), ErrNotPrimitive},
		{"not square", mat.NewDense(1, 2, []float64{0.5, 0.5}), ErrNotSquare},
	}
	for _, tt := range tests {
		if _, err := Perron(tt.A); !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		}
	}
}

// eigTol: the eigenvalues of these small matrices (symmetric, or similar to a
// symmetric one by a diagonal scaling) are well conditioned, so the QR
// algorithm finds them to a few ulps of ‖A‖ ≤ 1 times P; the worst difference
// between MixingRate and |λ₂| measured on the test graphs is 3.6e-15.
const eigTol = 1e-12

func TestSecondEigenvalueModulusClosedForms(t *testing.T) {
	ring, err := Ring(10)
	if err != nil {
		t.Fatal(err)
	}
	complete, err := Complete(5)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		A    mat.Matrix
		want float64
	}{
		// Metropolis on a ring is circulant with weights 1/3: its eigenvalues are
		// (1 + 2cos(2πk/n))/3, the largest modulus after k = 0 being k = 1.
		{"ring 10", Metropolis(ring), (1 + 2*math.Cos(2*math.Pi/10)) / 3},
		// Metropolis on K_n is J/n: eigenvalues 1 and 0.
		{"complete 5", Metropolis(complete), 0},
		// A periodic permutation has eigenvalues ±1.
		{"swap", dense([]float64{0, 1}, []float64{1, 0}), 1},
		{"single", dense([]float64{1}), 0},
		// Left-stochastic, not symmetric: eigenvalues 1 and trace − 1 = 0.5.
		{"non-symmetric", dense([]float64{0.8, 0.3}, []float64{0.2, 0.7}), 0.5},
	}
	for _, tt := range tests {
		got, err := SecondEigenvalueModulus(tt.A)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if math.Abs(got-tt.want) > eigTol {
			t.Errorf("%s: |λ₂| = %.17g, want %.17g", tt.name, got, tt.want)
		}
	}
}

func TestMixingRateIsBelowOneAndEqualsSecondEigenvalue(t *testing.T) {
	graphs := testGraphs(t)
	for _, name := range sortedKeys(graphs) {
		g := graphs[name]
		for rule, A := range map[string]*mat.Dense{"metropolis": Metropolis(g), "averaging": Averaging(g)} {
			q, err := Perron(A)
			if err != nil {
				t.Fatalf("%s %s: %v", name, rule, err)
			}
			rate, err := MixingRate(A, q)
			if err != nil {
				t.Fatalf("%s %s: %v", name, rule, err)
			}
			lambda2, err := SecondEigenvalueModulus(A)
			if err != nil {
				t.Fatalf("%s %s: %v", name, rule, err)
			}
			if !(rate < 1) {
				t.Errorf("%s %s: mixing rate %g is not below 1 on a connected graph", name, rule, rate)
			}
			// The eigenvalues of A − q1ᵀ are those of A with the Perron eigenvalue
			// 1 replaced by 0, so its spectral radius is |λ₂|.
			if math.Abs(rate-lambda2) > eigTol {
				t.Errorf("%s %s: mixing rate %.17g, |λ₂| = %.17g", name, rule, rate, lambda2)
			}
		}
	}
}

func TestMixingRateWithExactUniformVectorUsesSymmetricSolver(t *testing.T) {
	g, err := Grid(4, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	A := Metropolis(g) // all weights 1/5 on the 4-regular torus
	q := make([]float64, 16)
	for p := range q {
		q[p] = 1.0 / 16
	}
	rate, err := MixingRate(A, q)
	if err != nil {
		t.Fatal(err)
	}
	// Eigenvalues of the 4×4 torus Metropolis matrix: (1 + 2cos(2πa/4) + 2cos(2πb/4))/5;
	// besides a = b = 0 the largest modulus is 3/5 (a = 1, b = 0) and |−3/5| (a = 2, b = 0).
	if math.Abs(rate-0.6) > eigTol {
		t.Errorf("mixing rate %.17g, want 0.6", rate)
	}
}

func TestSpectralFunctionsRejectNonFiniteEntries(t *testing.T) {
	A := dense([]float64{1, math.Inf(1)}, []float64{0, 1})
	if _, err := SecondEigenvalueModulus(A); err == nil {
		t.Error("SecondEigenvalueModulus accepted an infinite entry")
	}
}
