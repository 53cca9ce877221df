package homomorphic

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// The test graphs are built here rather than with maple/topology so that this
// package's tests stand alone. adj[m][p] reports an edge m → p; there are no
// self-loops in adj, and every weight rule below adds the self-weight a_pp.
type graph [][]bool

func newGraph(p int) graph {
	g := make(graph, p)
	for m := range g {
		g[m] = make([]bool, p)
	}
	return g
}

// randomConnected returns an undirected connected graph on p ≥ 3 agents: a
// random recursive tree (agent k links to a uniformly chosen earlier agent)
// plus each other pair among the first p−1 agents with probability extra. The
// last agent stays a leaf, and its parent has degree ≥ 2, so the graph is
// never regular and its averaging rule is never doubly stochastic.
func randomConnected(r *rand.Rand, p int, extra float64) graph {
	g := newGraph(p)
	for k := 1; k < p; k++ {
		m := r.IntN(k)
		g[m][k], g[k][m] = true, true
	}
	for m := range p - 1 {
		for k := m + 1; k < p-1; k++ {
			if r.Float64() < extra {
				g[m][k], g[k][m] = true, true
			}
		}
	}
	return g
}

// randomDirected returns a strongly connected directed graph: the ring
// m → m+1 (mod p) plus each other ordered pair with probability extra. Its
// support is not symmetric.
func randomDirected(r *rand.Rand, p int, extra float64) graph {
	g := newGraph(p)
	for m := range p {
		g[m][(m+1)%p] = true
		for k := range p {
			if k != m && k != (m+1)%p && r.Float64() < extra {
				g[m][k] = true
			}
		}
	}
	return g
}

// inDegree returns the number of agents m ≠ p with an edge m → p.
func (g graph) inDegree(p int) int {
	d := 0
	for m := range g {
		if g[m][p] {
			d++
		}
	}
	return d
}

// metropolis returns the Metropolis weights a_mp = 1/(1 + max(d_m, d_p)) of an
// undirected graph: symmetric, hence doubly stochastic, with a_pp > 0.
func metropolis(g graph) *mat.Dense {
	p := len(g)
	a := mat.NewDense(p, p, nil)
	for k := range p {
		self := 1.0
		for m := range p {
			if g[m][k] {
				w := 1 / float64(1+max(g.inDegree(m), g.inDegree(k)))
				a.Set(m, k, w)
				self -= w
			}
		}
		a.Set(k, k, self)
	}
	return a
}

// averaging returns the averaging rule a_mp = 1/(d_p + 1) for m ∈ N_p ∪ {p}:
// left-stochastic, and doubly stochastic only for regular graphs.
func averaging(g graph) *mat.Dense {
	p := len(g)
	a := mat.NewDense(p, p, nil)
	for k := range p {
		w := 1 / float64(g.inDegree(k)+1)
		a.Set(k, k, w)
		for m := range p {
			if g[m][k] {
				a.Set(m, k, w)
			}
		}
	}
	return a
}

// randomWeights returns weights drawn uniformly from [0.1, 1) on the edges and
// the diagonal, each column normalised to sum to 1: a generic left-stochastic
// matrix with the support of g.
func randomWeights(r *rand.Rand, g graph) *mat.Dense {
	p := len(g)
	a := mat.NewDense(p, p, nil)
	for k := range p {
		var sum float64
		for m := range p {
			if m == k || g[m][k] {
				w := 0.1 + 0.9*r.Float64()
				a.Set(m, k, w)
				sum += w
			}
		}
		for m := range p {
			a.Set(m, k, a.At(m, k)/sum)
		}
	}
	return a
}

// birkhoff returns αI + Σ_j (β_j Π_j + γ_j Π_jᵀ) for k permutation matrices
// Π_j and random positive weights summing to 1: doubly stochastic with
// symmetric support but, since β_j ≠ γ_j, not symmetric. Π_0 is the cycle
// m → m+1 (mod p), which makes A irreducible; the others are random.
func birkhoff(r *rand.Rand, p, k int) *mat.Dense {
	w := make([]float64, 2*k+1)
	var sum float64
	for i := range w {
		w[i] = 0.1 + r.Float64()
		sum += w[i]
	}
	a := mat.NewDense(p, p, nil)
	for m := range p {
		a.Set(m, m, w[0]/sum)
	}
	for j := range k {
		perm := r.Perm(p)
		if j == 0 {
			for m := range perm {
				perm[m] = (m + 1) % p
			}
		}
		for m, c := range perm {
			a.Set(m, c, a.At(m, c)+w[2*j+1]/sum)
			a.Set(c, m, a.At(c, m)+w[2*j+2]/sum)
		}
	}
	return a
}

// perron returns the Perron vector q of a primitive left-stochastic A: the
// solution of (A − I)q = 0, 1ᵀq = 1. The rows of A − I sum to the zero row
// (columns of A sum to 1), so replacing one of them by 1ᵀ leaves a nonsingular
// system, solved by LU with partial pivoting.
func perron(a *mat.Dense) []float64 {
	p, _ := a.Dims()
	var m mat.Dense
	m.Sub(a, eye(p))
	for k := range p {
		m.Set(p-1, k, 1)
	}
	rhs := mat.NewVecDense(p, nil)
	rhs.SetVec(p-1, 1)
	var q mat.VecDense
	if err := q.SolveVec(&m, rhs); err != nil {
		panic(err)
	}
	return q.RawVector().Data
}

func eye(p int) *mat.Dense {
	a := mat.NewDense(p, p, nil)
	for k := range p {
		a.Set(k, k, 1)
	}
	return a
}
