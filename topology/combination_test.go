package topology

import (
	"errors"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// A Combination holds a copy of A, its Perron vector, its support and
// whether it is symmetric; an absent matrix and the errors of Perron are
// refused.
func TestNewCombination(t *testing.T) {
	// Left-stochastic, primitive (self-weights, strongly connected), not
	// symmetric: agent 0 listens to 1 and 2, agent 1 to 0, agent 2 to 1.
	A := mat.NewDense(3, 3, []float64{
		0.5, 0.5, 0.25,
		0.25, 0.5, 0.25,
		0.25, 0, 0.5,
	})
	c, err := NewCombination(A)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := Perron(A)
	if !slices.Equal(c.Perron, q) || !mat.Equal(c.A, A) || c.Symmetric {
		t.Errorf("got Perron %v, A %v, symmetric %v; want %v, A, false", c.Perron, mat.Formatted(c.A), c.Symmetric, q)
	}
	wantSenders, wantReceivers := [][]int{{1, 2}, {0}, {0, 1}}, [][]int{{1, 2}, {0, 2}, {0}}
	if !slices.EqualFunc(c.Senders, wantSenders, slices.Equal) || !slices.EqualFunc(c.Receivers, wantReceivers, slices.Equal) {
		t.Errorf("senders %v, receivers %v; want %v, %v", c.Senders, c.Receivers, wantSenders, wantReceivers)
	}
	A.Set(0, 0, 0.4) // the copy does not follow
	if c.A.At(0, 0) != 0.5 {
		t.Error("the Combination shares A")
	}

	sym, err := NewCombination(mat.NewDense(2, 2, []float64{0.5, 0.5, 0.5, 0.5}))
	if err != nil || !sym.Symmetric {
		t.Errorf("a symmetric matrix: %v, symmetric %v", err, sym != nil && sym.Symmetric)
	}
	for _, m := range []mat.Matrix{nil, (*mat.Dense)(nil)} {
		if _, err := NewCombination(m); err == nil || err.Error() != "no combination matrix" {
			t.Errorf("%#v: error %v", m, err)
		}
	}
	if _, err := NewCombination(mat.NewDense(2, 2, []float64{0.5, 0.5, 0.4, 0.5})); !errors.Is(err, ErrNotStochastic) {
		t.Errorf("a matrix that is not stochastic: %v", err)
	}
}
