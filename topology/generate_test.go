package topology

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// newRand returns the seeded stream the tests draw from.
func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6d61706c65)) }

func TestDeterministicGeneratorsClosedForms(t *testing.T) {
	b := func(ok bool) int { // 1 if ok, else 0
		if ok {
			return 1
		}
		return 0
	}
	tests := []struct {
		name   string
		build  func() (*Graph, error)
		nodes  int
		edges  int
		degree func(p int) int
	}{
		{"ring 3", func() (*Graph, error) { return Ring(3) }, 3, 3, func(int) int { return 2 }},
		{"ring 10", func() (*Graph, error) { return Ring(10) }, 10, 10, func(int) int { return 2 }},
		{"complete 1", func() (*Graph, error) { return Complete(1) }, 1, 0, func(int) int { return 0 }},
		{"complete 7", func() (*Graph, error) { return Complete(7) }, 7, 21, func(int) int { return 6 }},
		{"star 2", func() (*Graph, error) { return Star(2) }, 2, 1, func(int) int { return 1 }},
		{"star 9", func() (*Graph, error) { return Star(9) }, 9, 8, func(p int) int {
			if p == 0 {
				return 8
			}
			return 1
		}},
		{"grid 1×1", func() (*Graph, error) { return Grid(1, 1, false) }, 1, 0, func(int) int { return 0 }},
		// rows(cols−1) horizontal + cols(rows−1) vertical edges; degree counts existing sides.
		{"grid 4×6", func() (*Graph, error) { return Grid(4, 6, false) }, 24, 4*5 + 6*3, func(p int) int {
			r, c := p/6, p%6
			return b(r > 0) + b(r < 3) + b(c > 0) + b(c < 5)
		}},
		{"grid 1×5", func() (*Graph, error) { return Grid(1, 5, false) }, 5, 4, func(p int) int {
			return b(p > 0) + b(p < 4)
		}},
		{"torus 3×3", func() (*Graph, error) { return Grid(3, 3, true) }, 9, 18, func(int) int { return 4 }},
		{"torus 4×5", func() (*Graph, error) { return Grid(4, 5, true) }, 20, 40, func(int) int { return 4 }},
	}
	for _, tt := range tests {
		g, err := tt.build()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if g.Len() != tt.nodes || len(g.Edges()) != tt.edges {
			t.Errorf("%s: %d nodes and %d edges, want %d and %d", tt.name, g.Len(), len(g.Edges()), tt.nodes, tt.edges)
		}
		for p := range g.Len() {
			if g.Degree(p) != tt.degree(p) {
				t.Errorf("%s: Degree(%d) = %d, want %d", tt.name, p, g.Degree(p), tt.degree(p))
			}
		}
		if !g.Connected() {
			t.Errorf("%s: not connected", tt.name)
		}
	}
}

func TestGridNodeNumbering(t *testing.T) {
	g, err := Grid(3, 4, false)
	if err != nil {
		t.Fatal(err)
	}
	// Node 5 is row 1, column 1: above 1, left 4, right 6, below 9.
	if got := g.Neighbors(5); !slices.Equal(got, []int{1, 4, 6, 9}) {
		t.Errorf("Neighbors(5) = %v, want [1 4 6 9]", got)
	}
	torus, err := Grid(3, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	// Node 0 wraps to the end of its row (3) and the bottom of its column (8).
	if got := torus.Neighbors(0); !slices.Equal(got, []int{1, 3, 4, 8}) {
		t.Errorf("torus Neighbors(0) = %v, want [1 3 4 8]", got)
	}
}

func TestGeneratorsRejectBadParameters(t *testing.T) {
	r := newRand(1)
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"ring 2", second(Ring(2)), "ring needs between 3"},
		{"complete 0", second(Complete(0)), "complete graph needs between 1"},
		{"star 1", second(Star(1)), "star needs between 2"},
		{"grid 0 rows", second(Grid(0, 3, false)), "at least 1 rows"},
		{"torus 2 columns", second(Grid(3, 2, true)), "torus grid needs at least 3"},
		{"grid too large", second(Grid(MaxNodes, 2, false)), "at most"},
		{"ER p > 1", second(ErdosRenyi(10, 1.5, 1, r, 10)), "p = 1.5 is outside [0, 1]"},
		{"ER p NaN", second(ErdosRenyi(10, math.NaN(), 1, r, 10)), "p = NaN"},
		{"ER min degree", second(ErdosRenyi(10, 0.5, 10, r, 10)), "minimum degree 10 is impossible with 10 nodes"},
		{"ER no tries", second(ErdosRenyi(10, 0.5, 1, r, 0)), "maxTries = 0"},
		{"geometric radius", geometricErr(Geometric(10, -0.1, 1, r, 10)), "radius -0.1"},
		{"small world odd k", second(SmallWorld(10, 3, 0.1, r, 10)), "k = 3 must be even"},
		{"small world k ≥ n", second(SmallWorld(10, 10, 0.1, r, 10)), "k = 10 must be even"},
		{"small world beta", second(SmallWorld(10, 4, -1, r, 10)), "beta = -1"},
	}
	for _, tt := range tests {
		if tt.err == nil || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, tt.err, tt.want)
		}
	}
}

func second(_ *Graph, err error) error { return err }

func geometricErr(_ *Graph, _ [][2]float64, err error) error { return err }

func TestRandomGeneratorsPanicOnNilRand(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("ErdosRenyi with a nil *rand.Rand did not panic")
		}
	}()
	_, _ = ErdosRenyi(10, 0.5, 1, nil, 10)
}

// randomGenerators draw one graph from each random generator with the given seed.
var randomGenerators = []struct {
	name string
	draw func(seed uint64) (*Graph, error)
}{
	{"erdos-renyi", func(seed uint64) (*Graph, error) { return ErdosRenyi(40, 0.15, 2, newRand(seed), 1000) }},
	{"geometric", func(seed uint64) (*Graph, error) {
		g, _, err := Geometric(40, 0.3, 2, newRand(seed), 1000)
		return g, err
	}},
	{"small world", func(seed uint64) (*Graph, error) { return SmallWorld(40, 4, 0.2, newRand(seed), 1000) }},
}

func TestRandomGeneratorsAreReproducible(t *testing.T) {
	for _, gen := range randomGenerators {
		a, errA := gen.draw(7)
		b, errB := gen.draw(7)
		c, errC := gen.draw(8)
		if err := errors.Join(errA, errB, errC); err != nil {
			t.Fatalf("%s: %v", gen.name, err)
		}
		if !slices.Equal(a.Edges(), b.Edges()) {
			t.Errorf("%s: the same seed gave different graphs", gen.name)
		}
		// Two independent draws of these models coincide with negligible probability.
		if slices.Equal(a.Edges(), c.Edges()) {
			t.Errorf("%s: seeds 7 and 8 gave the same graph", gen.name)
		}
	}
}

func TestRandomGeneratorsAreConnected(t *testing.T) {
	for _, gen := range randomGenerators {
		for seed := range uint64(20) {
			g, err := gen.draw(seed)
			if err != nil {
				t.Fatalf("%s seed %d: %v", gen.name, seed, err)
			}
			if !g.Connected() {
				t.Errorf("%s seed %d: not connected", gen.name, seed)
			}
			if gen.name != "small world" && g.MinDegree() < 2 {
				t.Errorf("%s seed %d: minimum degree %d, requested 2", gen.name, seed, g.MinDegree())
			}
		}
	}
}

func TestErdosRenyiGivesUpWithAClearError(t *testing.T) {
	_, err := ErdosRenyi(30, 0.05, 2, newRand(1), 50)
	if !errors.Is(err, ErrNoConnectedGraph) {
		t.Fatalf("error %v does not wrap ErrNoConnectedGraph", err)
	}
	want := "no connected graph with minimum degree 2 in 50 draws of G(30, 0.05); raise p"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}

func TestErdosRenyiExtremes(t *testing.T) {
	full, err := ErdosRenyi(6, 1, 5, newRand(1), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Edges()) != 15 {
		t.Errorf("G(6, 1) has %d edges, want 15", len(full.Edges()))
	}
	single, err := ErdosRenyi(1, 0, 0, newRand(1), 1)
	if err != nil || single.Len() != 1 {
		t.Errorf("G(1, 0) = %v, %v; want the single-node graph", single, err)
	}
}

func TestGeometricEdgesAreExactlyThePairsWithinRadius(t *testing.T) {
	const radius = 0.25
	for seed := range uint64(5) {
		g, points, err := Geometric(60, radius, 1, newRand(seed), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(points) != g.Len() {
			t.Fatalf("%d points for %d nodes", len(points), g.Len())
		}
		var want [][2]int
		for i := range points {
			if x, y := points[i][0], points[i][1]; x < 0 || x >= 1 || y < 0 || y >= 1 {
				t.Errorf("point %d = %v is outside the unit square", i, points[i])
			}
			for j := i + 1; j < len(points); j++ {
				if math.Hypot(points[i][0]-points[j][0], points[i][1]-points[j][1]) <= radius {
					want = append(want, [2]int{i, j})
				}
			}
		}
		if got := g.Edges(); !slices.Equal(got, want) {
			t.Errorf("seed %d: %d edges, but %d pairs are within the radius", seed, len(got), len(want))
		}
	}
}

func TestGeometricGivesUpWithAClearError(t *testing.T) {
	_, _, err := Geometric(50, 0.05, 1, newRand(1), 20)
	if !errors.Is(err, ErrNoConnectedGraph) || !strings.Contains(err.Error(), "raise the radius") {
		t.Errorf("error %v, want ErrNoConnectedGraph suggesting a larger radius", err)
	}
}

func TestSmallWorldWithoutRewiringIsTheRingLattice(t *testing.T) {
	const n, k = 12, 4
	g, err := SmallWorld(n, k, 0, newRand(1), 1)
	if err != nil {
		t.Fatal(err)
	}
	for u := range n {
		want := []int{(u + n - 2) % n, (u + n - 1) % n, (u + 1) % n, (u + 2) % n}
		slices.Sort(want)
		if got := g.Neighbors(u); !slices.Equal(got, want) {
			t.Errorf("Neighbors(%d) = %v, want %v", u, got, want)
		}
	}
}

func TestSmallWorldRewiringKeepsTheEdgeCount(t *testing.T) {
	const n, k = 50, 6
	lattice, err := SmallWorld(n, k, 0, newRand(1), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, beta := range []float64{0.1, 0.5, 1} {
		g, err := SmallWorld(n, k, beta, newRand(3), 100)
		if err != nil {
			t.Fatal(err)
		}
		// Rewiring moves one end of an edge and never adds or removes one.
		if len(g.Edges()) != n*k/2 {
			t.Errorf("beta %g: %d edges, want %d", beta, len(g.Edges()), n*k/2)
		}
		if slices.Equal(g.Edges(), lattice.Edges()) {
			t.Errorf("beta %g: no edge was rewired", beta)
		}
	}
}

func TestSmallWorldGivesUpWithAClearError(t *testing.T) {
	// Rewiring every edge of a ring (k = 2, beta = 1) leaves a random graph with
	// n edges on n nodes, which is almost never connected for n = 200.
	_, err := SmallWorld(200, 2, 1, newRand(1), 5)
	if !errors.Is(err, ErrNoConnectedGraph) || !strings.Contains(err.Error(), "raise k or lower beta") {
		t.Errorf("error %v, want ErrNoConnectedGraph suggesting a larger k or smaller beta", err)
	}
}

// Draws that are connected but never reach the minimum degree fail with
// ErrMinDegree too, so that the caller can blame the minimum degree rather
// than the radius or p; draws that are never connected do not.
func TestMinDegreeFailureIsTold(t *testing.T) {
	_, _, err := Geometric(30, 0.3, 25, newRand(1), 20)
	if !errors.Is(err, ErrNoConnectedGraph) || !errors.Is(err, ErrMinDegree) {
		t.Errorf("min degree 25 of 30 nodes at radius 0.3: %v", err)
	}
	_, err = ErdosRenyi(30, 0.5, 25, newRand(1), 20)
	if !errors.Is(err, ErrMinDegree) {
		t.Errorf("min degree 25 of G(30, 0.5): %v", err)
	}
	_, _, err = Geometric(30, 0.01, 2, newRand(1), 20)
	if !errors.Is(err, ErrNoConnectedGraph) || errors.Is(err, ErrMinDegree) {
		t.Errorf("radius 0.01, never connected: %v", err)
	}
}
