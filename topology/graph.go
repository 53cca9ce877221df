package topology

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/graph"
)

// MaxNodes is the largest number of nodes a Graph may have. It keeps a typo in
// a file or a scenario (a node id of 10^12, say) from allocating unbounded
// memory instead of failing with a clear error.
const MaxNodes = 1 << 20

// Graph is an undirected simple graph on the nodes 0..Len()-1: no self loops,
// no parallel edges. Neighbour lists are kept sorted so that everything
// computed from a Graph is deterministic. A Graph is immutable once built.
type Graph struct {
	adj [][]int // adj[p] lists the neighbours of p in ascending order
}

// NewGraph returns the graph on nodes 0..n-1 with the given undirected edges,
// which may come in any order and orientation. It rejects n outside
// [1, MaxNodes], self loops, node ids outside [0, n) and edges given twice
// (in either orientation), naming the offending edge by its index.
func NewGraph(n int, edges [][2]int) (*Graph, error) {
	if n < 1 || n > MaxNodes {
		return nil, fmt.Errorf("topology: a graph needs between 1 and %d nodes, got %d", MaxNodes, n)
	}
	seen := make(map[[2]int]int, len(edges)) // normalized edge → first position
	degree := make([]int, n)
	for k, e := range edges {
		i, j := e[0], e[1]
		switch {
		case i < 0 || i >= n || j < 0 || j >= n:
			return nil, &edgeError{problem: outOfRange, index: k, edge: e, n: n}
		case i == j:
			return nil, &edgeError{problem: selfLoop, index: k, edge: e}
		}
		key := [2]int{min(i, j), max(i, j)}
		if first, dup := seen[key]; dup {
			return nil, &edgeError{problem: duplicate, index: k, first: first, edge: e}
		}
		seen[key] = k
		degree[i]++
		degree[j]++
	}
	adj := make([][]int, n)
	for p := range adj {
		adj[p] = make([]int, 0, degree[p])
	}
	for _, e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	for _, nb := range adj {
		slices.Sort(nb)
	}
	return &Graph{adj: adj}, nil
}

// edgeProblem says what is wrong with an edge given to NewGraph.
type edgeProblem int

const (
	selfLoop edgeProblem = iota
	outOfRange
	duplicate
)

// edgeError reports the first invalid edge given to NewGraph, by its position in
// the edge list, so that ReadEdgeList can translate the position to a line.
type edgeError struct {
	problem edgeProblem
	index   int    // position of the offending edge in the edge list
	first   int    // for a duplicate, position of the earlier copy
	edge    [2]int // the offending edge as given
	n       int    // node count, for out-of-range ids
}

// describe says what is wrong with the edge, without saying where it was given.
func (e *edgeError) describe() string {
	i, j := e.edge[0], e.edge[1]
	switch e.problem {
	case selfLoop:
		return fmt.Sprintf("self loop %d %d (a node's self-weight comes from the weight rule, not from an edge)", i, j)
	case outOfRange:
		bad := i
		if i >= 0 && i < e.n {
			bad = j
		}
		return fmt.Sprintf("edge %d %d: node %d is outside [0, %d)", i, j, bad, e.n)
	default:
		return fmt.Sprintf("duplicate edge %d %d", i, j)
	}
}

// Error implements error.
func (e *edgeError) Error() string {
	msg := fmt.Sprintf("topology: edge #%d: %s", e.index, e.describe())
	if e.problem == duplicate {
		msg += fmt.Sprintf(" (same as edge #%d)", e.first)
	}
	return msg
}

// fromGonum converts a simple undirected gonum graph, whose node ids may be
// arbitrary, to a Graph whose node k is the k-th smallest gonum id. Sorting
// here is what makes gonum's map-ordered iteration harmless.
func fromGonum(u graph.Undirected) *Graph {
	nodes := graph.NodesOf(u.Nodes())
	ids := make([]int64, len(nodes))
	for k, v := range nodes {
		ids[k] = v.ID()
	}
	slices.Sort(ids)
	index := make(map[int64]int, len(ids))
	for k, id := range ids {
		index[id] = k
	}
	var edges [][2]int
	for i, id := range ids {
		for _, v := range graph.NodesOf(u.From(id)) {
			if j := index[v.ID()]; i < j {
				edges = append(edges, [2]int{i, j})
			}
		}
	}
	return mustGraph(len(ids), edges)
}

// Len returns the number of nodes.
func (g *Graph) Len() int { return len(g.adj) }

// Neighbors returns the neighbours of p in ascending order, excluding p itself.
// The slice is a copy that the caller may keep or modify.
func (g *Graph) Neighbors(p int) []int { return slices.Clone(g.adj[p]) }

// Degree returns the number of neighbours of p.
func (g *Graph) Degree(p int) int { return len(g.adj[p]) }

// MinDegree returns the smallest degree of any node.
func (g *Graph) MinDegree() int {
	least := len(g.adj[0])
	for _, nb := range g.adj[1:] {
		least = min(least, len(nb))
	}
	return least
}

// Edges returns every edge once as {i, j} with i < j, in ascending
// lexicographic order.
func (g *Graph) Edges() [][2]int {
	var edges [][2]int
	for i, nb := range g.adj {
		for _, j := range nb {
			if i < j {
				edges = append(edges, [2]int{i, j})
			}
		}
	}
	return edges
}

// Connected reports whether every node can be reached from every other node.
func (g *Graph) Connected() bool {
	return !slices.Contains(levels(g.adj, 0), -1)
}

// levels returns the breadth-first distance of every node from start when
// following the adjacency lists adj, or -1 for nodes that cannot be reached.
func levels(adj [][]int, start int) []int {
	level := make([]int, len(adj))
	for k := range level {
		level[k] = -1
	}
	level[start] = 0
	queue := []int{start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, v := range adj[u] {
			if level[v] < 0 {
				level[v] = level[u] + 1
				queue = append(queue, v)
			}
		}
	}
	return level
}
