package topology

import "gonum.org/v1/gonum/mat"

// Metropolis returns the Metropolis–Hastings combination matrix of g:
// a_mp = 1/(1 + max(d_m, d_p)) for neighbours m and p, a_pp = 1 − Σ_{m≠p} a_mp,
// and 0 otherwise. It is symmetric and doubly stochastic, so its Perron vector
// is uniform and the network converges to the plain average; every a_pp is at
// least 1/(1+d_p) > 0, so on a connected graph it is primitive. This is the
// rule to use to reproduce the papers' doubly-stochastic experiments.
func Metropolis(g *Graph) *mat.Dense {
	n := g.Len()
	A := mat.NewDense(n, n, nil)
	for p, nb := range g.adj {
		self := 1.0
		for _, m := range nb {
			w := 1 / float64(1+max(len(g.adj[m]), len(nb)))
			A.Set(m, p, w)
			self -= w
		}
		A.Set(p, p, self)
	}
	return A
}

// LazyMetropolis returns (I + Metropolis(g))/2: still symmetric and doubly
// stochastic, with every self-weight at least 1/2, which makes all its
// eigenvalues non-negative (no oscillating modes) at the price of slower mixing.
func LazyMetropolis(g *Graph) *mat.Dense {
	A := Metropolis(g)
	A.Scale(0.5, A)
	for p := range g.Len() {
		A.Set(p, p, A.At(p, p)+0.5)
	}
	return A
}

// Averaging returns the uniform (averaging) combination matrix of g:
// a_mp = 1/(d_p + 1) for m ∈ N_p ∪ {p}, so each receiver averages itself and its
// neighbours with equal weight. It is left-stochastic but, unless g is regular,
// not doubly stochastic: its Perron vector is q_p = (d_p+1)/Σ_m (d_m+1), and
// decentralized learning with it converges to the q-weighted, not the plain,
// average of the local objectives.
func Averaging(g *Graph) *mat.Dense {
	n := g.Len()
	A := mat.NewDense(n, n, nil)
	for p, nb := range g.adj {
		w := 1 / float64(len(nb)+1)
		A.Set(p, p, w)
		for _, m := range nb {
			A.Set(m, p, w)
		}
	}
	return A
}
