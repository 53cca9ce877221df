package topology

import (
	"fmt"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// testGraphs returns a mix of regular, irregular and random connected graphs.
func testGraphs(t *testing.T) map[string]*Graph {
	t.Helper()
	must := func(g *Graph, err error) *Graph {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	geometric, _, err := Geometric(50, 0.25, 2, newRand(11), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*Graph{
		"single":     must(Complete(1)),
		"pair":       must(Complete(2)),
		"ring 9":     must(Ring(9)),
		"star 12":    must(Star(12)),
		"complete 6": must(Complete(6)),
		"grid 5×7":   must(Grid(5, 7, false)),
		"torus 4×4":  must(Grid(4, 4, true)),
		"ER 30":      must(ErdosRenyi(30, 0.2, 2, newRand(5), 1000)),
		"geometric":  geometric,
		"smallworld": must(SmallWorld(40, 4, 0.3, newRand(5), 1000)),
	}
}

// sortedKeys returns the names of a map of test cases in a fixed order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// sumTol is the tolerance on a sum of P weights that should be 1: each of the
// at most P roundings in computing the weights and adding them is at most
// 2⁻⁵³ ≈ 1.1e-16 relative to a partial sum bounded by 1, so the error is below
// 2·P·1.1e-16 < 1e-15·P.
func sumTol(P int) float64 { return 1e-15 * float64(P) }

func TestMetropolisIsSymmetricDoublyStochasticAndPrimitive(t *testing.T) {
	graphs := testGraphs(t)
	for _, name := range sortedKeys(graphs) {
		g := graphs[name]
		A := Metropolis(g)
		P := g.Len()
		if !mat.Equal(A, A.T()) {
			t.Errorf("%s: Metropolis is not exactly symmetric", name)
		}
		if err := CheckDoublyStochastic(A, sumTol(P)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := CheckPrimitive(A); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := CheckSelfWeights(A); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		senders, _ := Support(A)
		for p := range P {
			if !slices.Equal(senders[p], g.Neighbors(p)) {
				t.Errorf("%s: senders of %d are %v, want the neighbours %v", name, p, senders[p], g.Neighbors(p))
			}
			for _, m := range g.Neighbors(p) {
				// The weights are exact reciprocals, so compare exactly.
				if want := 1 / float64(1+max(g.Degree(m), g.Degree(p))); A.At(m, p) != want {
					t.Errorf("%s: a[%d][%d] = %g, want %g", name, m, p, A.At(m, p), want)
				}
			}
		}
	}
}

func TestLazyMetropolisHasSelfWeightsAtLeastHalf(t *testing.T) {
	graphs := testGraphs(t)
	for _, name := range sortedKeys(graphs) {
		g := graphs[name]
		L, M := LazyMetropolis(g), Metropolis(g)
		if err := CheckDoublyStochastic(L, sumTol(g.Len())); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for m := range g.Len() {
			if L.At(m, m) < 0.5 {
				t.Errorf("%s: a[%d][%d] = %g < 1/2", name, m, m, L.At(m, m))
			}
			for p := range g.Len() {
				// Halving is exact in binary floating point; the diagonal adds
				// one rounding of at most 2⁻⁵³ relative to a number ≤ 1.
				want := M.At(m, p) / 2
				if m == p {
					want += 0.5
				}
				if d := L.At(m, p) - want; d > 1.2e-16 || d < -1.2e-16 {
					t.Errorf("%s: lazy a[%d][%d] = %g, want (I+M)/2 = %g", name, m, p, L.At(m, p), want)
				}
			}
		}
	}
}

func TestAveragingIsLeftStochasticWithUniformColumns(t *testing.T) {
	graphs := testGraphs(t)
	for _, name := range sortedKeys(graphs) {
		g := graphs[name]
		A := Averaging(g)
		if err := CheckLeftStochastic(A, sumTol(g.Len())); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for p := range g.Len() {
			want := 1 / float64(g.Degree(p)+1)
			for m := range g.Len() {
				w := 0.0
				if m == p || slices.Contains(g.Neighbors(p), m) {
					w = want
				}
				if A.At(m, p) != w { // both are the same exact reciprocal or 0
					t.Errorf("%s: a[%d][%d] = %g, want %g", name, m, p, A.At(m, p), w)
				}
			}
		}
	}
}

func TestAveragingIsNotDoublyStochasticOnIrregularGraphs(t *testing.T) {
	g, err := Star(5)
	if err != nil {
		t.Fatal(err)
	}
	// Row 0 of the star's averaging matrix is 1/5 + 4·(1/2) = 2.2.
	err = CheckDoublyStochastic(Averaging(g), 1e-12)
	if err == nil {
		t.Fatal("averaging on a star passed as doubly stochastic")
	}
	if want := fmt.Sprintf("row 0 (the weights given to sender 0) sums to %g", 2.2); !containsAll(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}
