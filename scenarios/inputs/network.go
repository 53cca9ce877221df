package inputs

import (
	"context"
	"errors"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/gonum/mat"

	"maple/algorithms/rng"
	"maple/privacy/homomorphic"
	"maple/rundir"
	"maple/scenarios"
	"maple/topology"
)

// maxGraphDraws bounds how often a random graph is redrawn until it is
// connected with the required minimum degree.
const maxGraphDraws = 1000

// Network is the communication graph and combination matrix of a
// decentralized run.
type Network struct {
	// A is the combination matrix, Q its Perron vector (A q = q, q > 0,
	// 1ᵀq = 1) and Degree the neighbours of each agent, itself excluded.
	A      *mat.Dense
	Q      []float64
	points [][2]float64 // node positions of geometric graphs, else nil
	Degree []int
}

// NetworkSeed returns the seed the run's graph is drawn with: the scenario's
// run-0 seed when one graph serves every run, the run's own otherwise.
func NetworkSeed(sc *scenarios.Scenario, runSeed uint64) uint64 {
	if sc.Topology.Regenerate == "once" {
		return rng.RunSeed(sc.Seed, 0)
	}
	return runSeed
}

// FirstNetwork builds run 0's network, which the pre-run checks inspect.
func FirstNetwork(c *scenarios.CurveSpec, dir string) (*Network, error) {
	return BuildNetwork(context.Background(), c, dir, NetworkSeed(c.Scenario, rng.RunSeed(c.Scenario.Seed, 0)))
}

// BuildNetwork draws or reads the graph, builds the combination matrix and
// checks what the algorithm and privacy scheme need of it. Every problem is
// a scenario error naming the topology field at fault. Once ctx is done the
// graph generators and the readers stop with an error.
func BuildNetwork(ctx context.Context, c *scenarios.CurveSpec, dir string, seed uint64) (*Network, error) {
	sc := c.Scenario
	t := sc.Topology
	f, ok := scenarios.LookupFamily(sc.Algorithm.Kind)
	if !ok {
		panic("inputs: no family registered for algorithm.kind " + sc.Algorithm.Kind)
	}
	agents, nodesField := f.TopologyNodes(sc)
	n := &Network{}
	var g *topology.Graph
	var err error
	r := rng.New(seed, "topology", "graph")
	field := "topology.graph"
	switch t.Graph {
	case "geometric":
		g, n.points, err = topology.GeometricContext(ctx, agents, t.Radius, t.MinDegree, r, maxGraphDraws)
		field = "topology.radius"
	case "erdos-renyi":
		g, err = topology.ErdosRenyiContext(ctx, agents, t.Probability, t.MinDegree, r, maxGraphDraws)
		field = "topology.probability"
	case "small-world":
		g, err = topology.SmallWorldContext(ctx, agents, t.Neighbours, t.Rewire, r, maxGraphDraws)
	case "ring":
		g, err = topology.Ring(agents)
	case "grid", "torus":
		g, err = topology.Grid(t.Rows, t.Cols, t.Graph == "torus")
	case "complete":
		g, err = topology.Complete(agents)
	case "star":
		g, err = topology.Star(agents)
	case "file":
		g, err = readFile(ctx, c, dir, "topology.file", t.File, maxTableBytes, topology.ReadEdgeList)
		field = "topology.file"
	case "matrix":
		n.A, err = readFile(ctx, c, dir, "topology.matrix", t.Matrix, maxTableBytes, topology.ReadMatrix)
		field = "topology.matrix"
	default:
		return nil, c.Errorf("topology.graph", "unknown graph %q", t.Graph)
	}
	if errors.Is(err, topology.ErrMinDegree) {
		field = "topology.min_degree" // connected draws there were, the degree asked for is what failed
	}
	if err != nil {
		return nil, asScenarioError(c, field, err)
	}
	if g != nil {
		if g.Len() != agents {
			return nil, c.Errorf(field, "the graph has %d nodes but %s is %d", g.Len(), nodesField, agents)
		}
		if g.MinDegree() < t.MinDegree {
			return nil, c.Errorf("topology.min_degree", "graph %s has a node of degree %d, below the minimum %d", t.Graph, g.MinDegree(), t.MinDegree)
		}
		n.A = Weights(t.Weights, g)
	}
	if rows, _ := n.A.Dims(); rows != agents {
		return nil, c.Errorf(field, "the combination matrix is %d×%d but %s is %d", rows, rows, nodesField, agents)
	}
	if t.Graph != "file" && t.Graph != "matrix" {
		field = "topology.weights" // generated graphs are connected: a problem is the rule's
	}
	if err := n.check(c, field); err != nil {
		return nil, err
	}
	return n, nil
}

// check validates A for the scenario, reporting problems on field (the
// topology field A comes from), and computes the Perron vector and degrees.
func (n *Network) check(c *scenarios.CurveSpec, field string) error {
	sc := c.Scenario
	checks := []func(mat.Matrix) error{
		func(a mat.Matrix) error { return topology.CheckLeftStochastic(a, topology.DefaultTol) },
		topology.CheckPrimitive,
	}
	if sc.Privacy.Scheme == "graph-homomorphic" {
		checks = append(checks, topology.CheckSelfWeights)
	}
	for _, check := range checks {
		if err := check(n.A); err != nil {
			return c.Errorf(field, "%s", strings.TrimPrefix(err.Error(), "topology: "))
		}
	}
	if sc.Privacy.Scheme == "graph-homomorphic" {
		form, err := homomorphic.ParseForm(sc.Privacy.Form)
		if err != nil {
			return c.Errorf("privacy.form", "%v", err)
		}
		if err := homomorphic.CheckForm(n.A, form, topology.DefaultTol); err != nil {
			return c.Errorf("privacy.form", "%v", err)
		}
	}
	q, err := topology.Perron(n.A)
	if err != nil {
		return c.Errorf(field, "%v", err)
	}
	n.Q = q
	senders, _ := topology.Support(n.A)
	n.Degree = make([]int, len(senders))
	for p, s := range senders {
		n.Degree[p] = len(s)
	}
	return nil
}

// Weights applies the named combination rule to g.
func Weights(rule string, g *topology.Graph) *mat.Dense {
	switch rule {
	case "lazy-metropolis":
		return topology.LazyMetropolis(g)
	case "averaging":
		return topology.Averaging(g)
	}
	return topology.Metropolis(g)
}

// readFile opens path (relative to the scenario's directory), a regular
// file of at most limit bytes (fileio), and parses it with read; errors carry
// the field. Once ctx is done the reading stops with an error.
func readFile[T any](ctx context.Context, c *scenarios.CurveSpec, dir, field, path string, limit int64, read func(io.Reader, string) (T, error)) (T, error) {
	var zero T
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f, err := filesOf(c).Open(ctx, path, limit)
	if err != nil {
		return zero, c.Errorf(field, "cannot open %s: %v", path, rundir.WithoutPath(err))
	}
	defer f.Close()
	v, err := read(f, path)
	if err != nil {
		return zero, c.Errorf(field, "%v", err)
	}
	return v, nil
}

// asScenarioError turns a topology error into a scenario error on field,
// keeping scenario errors as they are.
func asScenarioError(c *scenarios.CurveSpec, field string, err error) error {
	if scenarios.IsUserError(err) {
		return err
	}
	return c.Errorf(field, "%v", err)
}

// Describe returns the facts about the network that go into the summary.
func (n *Network) Describe() map[string]any {
	d := map[string]any{"perron": n.Q, "degrees": n.Degree}
	if l2, err := topology.SecondEigenvalueModulus(n.A); err == nil {
		d["second_eigenvalue_modulus"] = l2
	}
	if rho, err := topology.MixingRate(n.A, n.Q); err == nil {
		d["mixing_rate"] = rho
	}
	if n.points != nil {
		d["points"] = n.points
	}
	return d
}

// graphEdgeBytes is the memory a graph holds per edge while it is built: the
// edge list, both adjacency entries and the generator's set of edges seen
// (a Go map entry of an edge and its position, with the map's overhead).
const graphEdgeBytes = 100

// NetworkCost returns what building the network of a decentralized run
// costs, for a graph of nodes nodes of expected degree deg (ExpectedDegree):
// the graph (graphEdgeBytes per edge, and for a geometric graph a distance
// test per pair of nodes) and, with matrix, the dense combination matrix
// and its checks — the Perron vector's LU factorization and the two
// eigenvalue problems of Network.Describe (about 25 n³ operations), holding
// about four n×n matrices at once. Families add it to their Estimate.
func NetworkCost(t *scenarios.Topology, nodes, deg float64, matrix bool) (bytes, ops float64) {
	bytes = nodes * deg / 2 * graphEdgeBytes
	ops = nodes * deg
	if t != nil && t.Graph == "geometric" {
		ops += nodes * nodes
	}
	if matrix {
		bytes += 4 * nodes * nodes * 8
		ops += 25 * nodes * nodes * nodes
	}
	return bytes, ops
}

// ExpectedDegree is the mean number of neighbours of an agent under the
// topology's graph model.
func ExpectedDegree(t *scenarios.Topology, agents int) float64 {
	P := float64(agents)
	deg := 8.0
	switch t.Graph {
	case "geometric":
		// The probability that two uniform points of the unit square lie
		// within r of each other: πr² − 8r³/3 + r⁴/2 (r ≤ 1).
		r := min(t.Radius, 1)
		deg = (P - 1) * (math.Pi*r*r - 8*r*r*r/3 + r*r*r*r/2)
	case "erdos-renyi":
		deg = t.Probability * (P - 1)
	case "small-world":
		deg = float64(t.Neighbours)
	case "ring", "star":
		deg = 2
	case "grid", "torus":
		deg = 4
	case "complete":
		deg = P - 1
	}
	return min(max(deg, float64(t.MinDegree), 1), max(P-1, 1))
}
