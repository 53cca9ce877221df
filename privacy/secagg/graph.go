package secagg

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Graph is the communication graph of a round: a client shares its keys
// with, and masks its input against, its neighbours only. SecAgg uses the
// complete graph, SecAgg+ a Harary graph under a random permutation (Bell et
// al. 2020, §3.1).
type Graph struct {
	n          int
	complete   bool
	neighbours [][]int // sorted; nil for the complete graph
}

// CompleteGraph returns the complete graph on n clients: SecAgg.
func CompleteGraph(n int) *Graph { return &Graph{n: n, complete: true} }

// HararyGraph returns the Harary graph H_{k,n} (Harary 1962) with its
// vertices relabelled by a uniformly random permutation drawn from r: the
// graph of SecAgg+ (Bell et al. 2020, §3.1, "a random k-regular graph").
// On a cycle of the permuted clients each is joined to its ⌊k/2⌋ nearest on
// either side and, for odd k, to the diametrically opposite one (for odd k
// and odd n one client gets degree k + 1, as in Harary's construction;
// everywhere else the graph is k-regular). It is k-connected. k must lie in
// [1, n − 1]; k = n − 1 gives the complete graph.
func HararyGraph(n, k int, r *rand.Rand) (*Graph, error) {
	if n < 2 || k < 1 || k > n-1 {
		return nil, fmt.Errorf("neighbours: must lie in [1, %d] for %d clients, got %d", n-1, n, k)
	}
	if k == n-1 {
		return CompleteGraph(n), nil
	}
	perm := r.Perm(n) // perm[position] = client
	sets := make([]map[int]struct{}, n)
	for i := range sets {
		sets[i] = map[int]struct{}{}
	}
	link := func(a, b int) {
		if a != b {
			sets[perm[a]][perm[b]] = struct{}{}
			sets[perm[b]][perm[a]] = struct{}{}
		}
	}
	for p := range n {
		for d := 1; d <= k/2; d++ {
			link(p, (p+d)%n)
		}
	}
	if k%2 == 1 {
		// Opposite points; for odd n the last position also links to the
		// one ⌊n/2⌋ + 1 ahead, which gives it degree k + 1.
		for p := 0; p < (n+1)/2; p++ {
			link(p, (p+n/2)%n)
		}
	}
	g := &Graph{n: n, neighbours: make([][]int, n)}
	for u, s := range sets {
		for v := range s {
			g.neighbours[u] = append(g.neighbours[u], v)
		}
		slices.Sort(g.neighbours[u])
	}
	return g, nil
}

// Clients returns n.
func (g *Graph) Clients() int { return g.n }

// Complete reports whether every client neighbours every other.
func (g *Graph) Complete() bool { return g.complete }

// Holders returns the clients that hold shares of u's secrets, in ascending
// order: u's neighbours and u itself (each client keeps one share of its own
// secrets, as in Bonawitz et al.'s SS.share over all of U₁, so that a client
// that survives counts towards its own threshold).
func (g *Graph) Holders(u int) []int {
	if g.complete {
		all := make([]int, g.n)
		for i := range all {
			all[i] = i
		}
		return all
	}
	h := append(make([]int, 0, len(g.neighbours[u])+1), g.neighbours[u]...)
	i, _ := slices.BinarySearch(h, u)
	return slices.Insert(h, i, u)
}

// Adjacent reports whether u and v are neighbours (u ≠ v).
func (g *Graph) Adjacent(u, v int) bool {
	if u == v {
		return false
	}
	if g.complete {
		return true
	}
	_, ok := slices.BinarySearch(g.neighbours[u], v)
	return ok
}

// Degree returns the number of u's neighbours.
func (g *Graph) Degree(u int) int {
	if g.complete {
		return g.n - 1
	}
	return len(g.neighbours[u])
}
