package topology

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/graph/graphs/gen"
	"gonum.org/v1/gonum/graph/simple"
)

// ErrNoConnectedGraph is returned by the random generators when none of the
// allowed draws gave a connected graph with the requested minimum degree. The
// wrapped message says what was drawn and which parameter to change.
var ErrNoConnectedGraph = errors.New("topology: no connected graph")

// ErrMinDegree is wrapped, besides ErrNoConnectedGraph, by the error of a
// generator whose draws included connected graphs but none with the minimum
// degree asked for: the minimum degree, not connectivity, is what failed.
var ErrMinDegree = errors.New("every connected draw had a node below the minimum degree")

// Ring returns the cycle 0–1–…–(n-1)–0, in which every node has degree 2.
// It needs n ≥ 3 (fewer nodes would need a self loop or a repeated edge).
func Ring(n int) (*Graph, error) {
	if err := checkOrder("a ring", n, 3); err != nil {
		return nil, err
	}
	u := simple.NewUndirectedGraph()
	gen.Cycle(u, gen.IDRange{First: 0, Last: int64(n - 1)})
	return fromGonum(u), nil
}

// Complete returns the complete graph on n ≥ 1 nodes, in which every node has
// degree n-1.
func Complete(n int) (*Graph, error) {
	if err := checkOrder("a complete graph", n, 1); err != nil {
		return nil, err
	}
	u := simple.NewUndirectedGraph()
	gen.Complete(u, gen.IDRange{First: 0, Last: int64(n - 1)})
	return fromGonum(u), nil
}

// Star returns the star on n ≥ 2 nodes: node 0 is the centre, joined to each
// of the leaves 1..n-1.
func Star(n int) (*Graph, error) {
	if err := checkOrder("a star", n, 2); err != nil {
		return nil, err
	}
	u := simple.NewUndirectedGraph()
	gen.Star(u, 0, gen.IDRange{First: 1, Last: int64(n - 1)})
	return fromGonum(u), nil
}

// Grid returns the rows×cols grid whose node r*cols+c sits at row r, column c
// and is joined to its horizontal and vertical neighbours. With torus set, the
// last row and column also wrap around to the first, so every node has degree
// 4; that needs rows, cols ≥ 3 (smaller sizes would repeat edges). Without
// torus, rows, cols ≥ 1.
func Grid(rows, cols int, torus bool) (*Graph, error) {
	kind, least := "grid", 1
	if torus {
		kind, least = "torus grid", 3
	}
	if rows < least || cols < least || rows > MaxNodes/cols {
		return nil, fmt.Errorf("topology: a %s needs at least %d rows and columns and at most %d nodes, got %d×%d",
			kind, least, MaxNodes, rows, cols)
	}
	id := func(r, c int) int { return (r%rows)*cols + c%cols }
	var edges [][2]int
	for r := range rows {
		for c := range cols {
			if c+1 < cols || torus {
				edges = append(edges, [2]int{id(r, c), id(r, c+1)})
			}
			if r+1 < rows || torus {
				edges = append(edges, [2]int{id(r, c), id(r+1, c)})
			}
		}
	}
	return NewGraph(rows*cols, edges)
}

// ErdosRenyi draws G(n, p) graphs, each edge present independently with
// probability p, with gonum's gen.Gnp, until one is connected and every node
// has at least minDegree neighbours. It gives up after maxTries draws with an
// error wrapping ErrNoConnectedGraph. All randomness comes from r.
func ErdosRenyi(n int, p float64, minDegree int, r *rand.Rand, maxTries int) (*Graph, error) {
	return ErdosRenyiContext(context.Background(), n, p, minDegree, r, maxTries)
}

// ErdosRenyiContext is ErdosRenyi, stopping with an error wrapping ctx.Err()
// once ctx is done: it checks ctx before every draw (see redraw).
func ErdosRenyiContext(ctx context.Context, n int, p float64, minDegree int, r *rand.Rand, maxTries int) (*Graph, error) {
	if err := checkOrder("an Erdős–Rényi graph", n, 1); err != nil {
		return nil, err
	}
	if !(p >= 0 && p <= 1) {
		return nil, fmt.Errorf("topology: Erdős–Rényi edge probability p = %g is outside [0, 1]", p)
	}
	if err := checkDraws(n, minDegree, maxTries, r); err != nil {
		return nil, err
	}
	draw := func() *Graph {
		u := simple.NewUndirectedGraph()
		if err := gen.Gnp(u, n, p, r); err != nil {
			panic("topology: gen.Gnp rejected a checked probability: " + err.Error())
		}
		return fromGonum(u)
	}
	return redraw(ctx, maxTries, minDegree, func() (*Graph, error) { return draw(), nil }, func(connected bool) error {
		return drawsFailed(minDegree, maxTries, fmt.Sprintf("G(%d, %g)", n, p), "raise p", connected)
	})
}

// Geometric draws random geometric graphs until one is connected and every
// node has at least minDegree neighbours: n points uniform in the unit square,
// with an edge between two points whose Euclidean distance is at most radius.
// It returns the graph and the points of the accepted draw (point k is node k),
// or, after maxTries draws, an error wrapping ErrNoConnectedGraph. All
// randomness comes from r. Edges are found by comparing the squared distance
// of every pair with radius², O(n²).
func Geometric(n int, radius float64, minDegree int, r *rand.Rand, maxTries int) (*Graph, [][2]float64, error) {
	return GeometricContext(context.Background(), n, radius, minDegree, r, maxTries)
}

// GeometricContext is Geometric, stopping with an error wrapping ctx.Err()
// once ctx is done: it checks ctx before every draw and every node's row
// of the O(n²) distance test.
func GeometricContext(ctx context.Context, n int, radius float64, minDegree int, r *rand.Rand, maxTries int) (*Graph, [][2]float64, error) {
	if err := checkOrder("a random geometric graph", n, 1); err != nil {
		return nil, nil, err
	}
	if !(radius >= 0) {
		return nil, nil, fmt.Errorf("topology: random geometric graph radius %g is not a non-negative number", radius)
	}
	if err := checkDraws(n, minDegree, maxTries, r); err != nil {
		return nil, nil, err
	}
	var points [][2]float64
	draw := func() (*Graph, error) {
		points = make([][2]float64, n)
		for k := range points {
			points[k] = [2]float64{r.Float64(), r.Float64()}
		}
		return geometricGraph(ctx, points, radius)
	}
	g, err := redraw(ctx, maxTries, minDegree, draw, func(connected bool) error {
		what := fmt.Sprintf("a random geometric graph with %d nodes and radius %g", n, radius)
		return drawsFailed(minDegree, maxTries, what, "raise the radius", connected)
	})
	if err != nil {
		return nil, nil, err
	}
	return g, points, nil
}

// geometricGraph joins every pair of points at distance at most radius.
func geometricGraph(ctx context.Context, points [][2]float64, radius float64) (*Graph, error) {
	var edges [][2]int
	r2 := radius * radius
	for i, a := range points {
		if err := interrupted(ctx); err != nil {
			return nil, err
		}
		for j := i + 1; j < len(points); j++ {
			dx, dy := a[0]-points[j][0], a[1]-points[j][1]
			if dx*dx+dy*dy <= r2 {
				edges = append(edges, [2]int{i, j})
			}
		}
	}
	return mustGraph(len(points), edges), nil
}

// SmallWorld draws Watts–Strogatz small-world graphs until one is connected,
// giving up after maxTries draws with an error wrapping ErrNoConnectedGraph.
//
// Each draw starts from the ring lattice in which node u is joined to the k/2
// nodes on each side (k even, 2 ≤ k < n). Then, for j = 1..k/2 and for u = 0..n-1
// in that order, the lattice edge {u, u+j mod n} is rewired with probability
// beta: it is replaced by {u, w} with w drawn uniformly among the nodes that
// are neither u nor already joined to u (the edge is kept when u is already
// joined to every node). This is the procedure of Watts and Strogatz (1998) as
// implemented by NetworkX's watts_strogatz_graph; gonum's gen.SmallWorldsBB is
// not used (see the package comment). beta = 0 gives the lattice itself.
// All randomness comes from r.
func SmallWorld(n, k int, beta float64, r *rand.Rand, maxTries int) (*Graph, error) {
	return SmallWorldContext(context.Background(), n, k, beta, r, maxTries)
}

// SmallWorldContext is SmallWorld, stopping with an error wrapping
// ctx.Err() once ctx is done: it checks ctx before every draw.
func SmallWorldContext(ctx context.Context, n, k int, beta float64, r *rand.Rand, maxTries int) (*Graph, error) {
	if err := checkOrder("a small-world graph", n, 3); err != nil {
		return nil, err
	}
	if k < 2 || k%2 != 0 || k >= n {
		return nil, fmt.Errorf("topology: small-world lattice degree k = %d must be even, at least 2 and below n = %d", k, n)
	}
	if !(beta >= 0 && beta <= 1) {
		return nil, fmt.Errorf("topology: small-world rewiring probability beta = %g is outside [0, 1]", beta)
	}
	if err := checkDraws(n, 0, maxTries, r); err != nil {
		return nil, err
	}
	return redraw(ctx, maxTries, 0, func() (*Graph, error) { return wattsStrogatz(n, k, beta, r), nil }, func(connected bool) error {
		what := fmt.Sprintf("a small world with n = %d, k = %d, beta = %g", n, k, beta)
		return drawsFailed(0, maxTries, what, "raise k or lower beta", connected)
	})
}

// wattsStrogatz draws one small-world graph as described on SmallWorld.
func wattsStrogatz(n, k int, beta float64, r *rand.Rand) *Graph {
	half := k / 2
	edges := make([][2]int, 0, n*half) // edges[(j-1)*n+u] starts as {u, u+j}
	present := make(map[[2]int]bool, n*half)
	key := func(a, b int) [2]int { return [2]int{min(a, b), max(a, b)} }
	for j := 1; j <= half; j++ {
		for u := range n {
			v := (u + j) % n
			edges = append(edges, [2]int{u, v})
			present[key(u, v)] = true
		}
	}
	degree := make([]int, n)
	for u := range degree {
		degree[u] = k
	}
	for idx, e := range edges {
		u, v := e[0], e[1]
		if r.Float64() >= beta || degree[u] >= n-1 {
			continue
		}
		w := r.IntN(n)
		for w == u || present[key(u, w)] {
			w = r.IntN(n)
		}
		delete(present, key(u, v))
		present[key(u, w)] = true
		degree[v]--
		degree[w]++
		edges[idx] = [2]int{u, w}
	}
	return mustGraph(n, edges)
}

// redraw calls draw up to tries times and returns the first graph that is
// connected and has minimum degree at least minDegree, or, when none is,
// the error of drawsFailed. It checks ctx before every draw, and returns the
// error of an interrupted one: the checks read ctx and draw nothing, so an
// uninterrupted redraw draws the same graphs.
func redraw(ctx context.Context, tries, minDegree int, draw func() (*Graph, error), failed func(connected bool) error) (*Graph, error) {
	connected := false
	for range tries {
		if err := interrupted(ctx); err != nil {
			return nil, err
		}
		g, err := draw()
		if err != nil {
			return nil, err
		}
		if g.Connected() {
			if g.MinDegree() >= minDegree {
				return g, nil
			}
			connected = true
		}
	}
	return nil, failed(connected)
}

// interrupted returns an error wrapping ctx's error once ctx is done.
func interrupted(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("topology: interrupted: %w", err)
	}
	return nil
}

// drawsFailed builds the error returned when redraw found nothing, e.g.
// "no connected graph with minimum degree 2 in 1000 draws of G(30, 0.05); raise p".
// When some draws were connected (connected) but none reached a minimum
// degree above 1, the error also wraps ErrMinDegree and says so.
func drawsFailed(minDegree, tries int, what, hint string, connected bool) error {
	degree := ""
	if minDegree > 0 {
		degree = fmt.Sprintf(" with minimum degree %d", minDegree)
	}
	if connected && minDegree > 1 {
		return fmt.Errorf("%w%s in %d draws of %s: %w; lower the minimum degree or %s", ErrNoConnectedGraph, degree, tries, what, ErrMinDegree, hint)
	}
	return fmt.Errorf("%w%s in %d draws of %s; %s", ErrNoConnectedGraph, degree, tries, what, hint)
}

// checkOrder checks that a generator was asked for between least and MaxNodes nodes.
func checkOrder(what string, n, least int) error {
	if n < least || n > MaxNodes {
		return fmt.Errorf("topology: %s needs between %d and %d nodes, got %d", what, least, MaxNodes, n)
	}
	return nil
}

// checkDraws checks the parameters shared by the random generators. A nil r is
// a programming error, since gonum would silently fall back to its global,
// unseeded source.
func checkDraws(n, minDegree, maxTries int, r *rand.Rand) error {
	if r == nil {
		panic("topology: nil *rand.Rand; pass a seeded stream")
	}
	if minDegree < 0 || minDegree > n-1 {
		return fmt.Errorf("topology: minimum degree %d is impossible with %d nodes (it must be in [0, %d])", minDegree, n, n-1)
	}
	if maxTries < 1 {
		return fmt.Errorf("topology: maxTries = %d, need at least one draw", maxTries)
	}
	return nil
}

// mustGraph builds a graph from edges that the caller generated and knows to
// be valid; an error here is a bug in this package.
func mustGraph(n int, edges [][2]int) *Graph {
	g, err := NewGraph(n, edges)
	if err != nil {
		panic("topology: generator produced an invalid graph: " + err.Error())
	}
	return g
}
