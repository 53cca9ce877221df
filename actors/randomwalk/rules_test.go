package randomwalk

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	rw "maple/algorithms/randomwalk"
	"maple/algorithms/rng"
	"maple/topology"
)

// shares wraps walkman and keeps, per node, its share c_i of the token (its
// state vector 1), which the node keeps between visits. It is a pointer: a
// rule of the test's own, with no parameters to check.
type shares struct {
	walkman
	of map[*rw.Visit][]float64
}

func (s *shares) Step(v *rw.Visit, w []float64, gamma float64) {
	s.walkman.Step(v, w, gamma)
	s.of[v] = v.State(1)
}

// last records the model after the last step of walk 0.
type last struct{ model []float64 }

func (*last) Setup(int, int, int)                   {}
func (*last) Start(int, int, []float64)             {}
func (*last) GossipStart(int, []float64)            {}
func (*last) Gossip(int, int, []float64, int, bool) {}
func (l *last) Step(walk, _, _ int, model []float64, _ int) {
	if walk == 0 {
		l.model = slices.Clone(model)
	}
}

// Walkman's token is at every step the mean (1/N)Σ_i c_i of the shares the
// nodes keep between their visits (0 for a node not visited yet): each step
// adds (c_i′ − c_i)/N to it, a few roundings of O(1) values per step, so
// after 2000 steps 1e-12 bounds their sum. A node that forgot its share
// between visits would break the mean at its second visit.
func TestWalkmanKeepsTheTokenTheMeanOfTheNodesShares(t *testing.T) {
	p := problem(t, 9)
	s := &shares{of: map[*rw.Visit][]float64{}}
	cfg := rw.Config{Protocol: rw.Walk, Walks: 1, StepSize: 0.05, Exponent: 0.75, Radius: 5, Init: rw.Zero, Node: s}
	nodes, _, err := rw.NewNodes(&cfg, p, func(owner, purpose string) *rand.Rand { return rng.New(3, owner, purpose) })
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		for _, j := range n.Neighbours() {
			nodes[j].Learn(i, n.Announcement())
		}
	}
	model, mean := make([]float64, 3), make([]float64, 3)
	revisits, steps := 0, 0
	visited := map[int]bool{}
	at := 0
	for k := 0; k < 2000; {
		next, done := nodes[at].Walk(0, k, 2000, model, func(_, _ int, m []float64) {
			steps++
			clear(mean)
			for _, c := range s.of {
				floats.Add(mean, c)
			}
			floats.Scale(1/float64(len(nodes)), mean)
			if d := floats.Distance(m, mean, math.Inf(1)); d > 1e-12 {
				t.Fatalf("step %d: the token is %v, the nodes' mean share %v", steps, m, mean)
			}
		})
		if visited[at] {
			revisits++
		}
		visited[at], k = true, done
		if next < 0 {
			break
		}
		at = next
	}
	if steps != 2000 || revisits == 0 {
		t.Errorf("%d steps, %d visits of a node seen before: the test checks nothing", steps, revisits)
	}
}

// Walkman converges to w⋆ where SGD stalls: on least squares and on the
// logistic loss, one sample per node, with the nearly fixed step γ₀/k^0.51,
// 100 000 steps of SGD leave ‖w − w⋆‖² above 1e-5 (3e-2 and 1e-2
// measured) — the floor set by how much the nodes' gradients differ — while
// Walkman's nodes, correcting their gradients with the duals they keep
// between visits, bring it below 1e-9 (2e-11 measured on both). Both runs
// walk the same path: the walk does not depend on the models.
func TestWalkmanConvergesWhereSGDStalls(t *testing.T) {
	const T = 100000
	for _, kind := range []loss.Kind{loss.LeastSquares, loss.Logistic} {
		p, wOpt := convexProblem(t, kind)
		msd := func(rule rw.NodeRule) float64 {
			cfg := rw.Config{Protocol: rw.Walk, Walks: 1, StepSize: 0.3, Exponent: 0.51, Radius: 100, Init: rw.Zero, Node: rule}
			obs := &last{}
			if err := rw.Reference(cfg, p, 3, T, obs, nil); err != nil {
				t.Fatal(err)
			}
			d := floats.Distance(obs.model, wOpt, 2)
			return d * d
		}
		sgd, wm := msd(rw.SGD{}), msd(walkman{})
		if !(sgd > 1e-5) || !(wm < 1e-9) {
			t.Errorf("%v: after %d steps SGD is %.3g from w⋆, Walkman %.3g; want SGD above 1e-5, Walkman below 1e-9", kind, T, sgd, wm)
		}
	}
}

// convexProblem returns 20 nodes of one sample each on G(20, 0.3), d = 3,
// under the loss kind with ρ = 1/(2N), and its minimizer.
func convexProblem(t *testing.T, kind loss.Kind) (rw.Problem, []float64) {
	t.Helper()
	const n = 20
	g, err := topology.ErdosRenyi(n, 0.3, 1, rng.New(5, "test", "graph"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var sets []*data.Set
	if kind == loss.Logistic {
		sets, _ = data.Mixture(data.MixtureConfig{Agents: n, SamplesMin: 1, SamplesMax: 1, Dim: 3, Mean: 1, Variance: 4, Positive: 0.5}, 5)
	} else {
		sets, _ = data.Regression(data.RegressionConfig{Agents: n, SamplesMin: 1, SamplesMax: 1, Dim: 3, CovScale: 0.5, NoiseVarMin: 0.1, NoiseVarMax: 1}, 5)
	}
	l := loss.Loss{Kind: kind, Rho: 1 / (2 * float64(n))}
	w, _, err := optimum.Solve(l, sets, optimum.Uniform(n))
	if err != nil {
		t.Fatal(err)
	}
	return rw.Problem{Graph: g, Sets: sets, Loss: l}, w
}

// Walkman needs the walk to start at 0, and no node rule applies to
// gossip: both are refused, saying why.
func TestNodeRulesRefuseWhatTheyCannotRun(t *testing.T) {
	p := problem(t, 9)
	for _, c := range []struct {
		cfg  rw.Config
		want string
	}{
		{rw.Config{Protocol: rw.Walk, Walks: 1, StepSize: 0.05, Exponent: 0.75, Radius: 5, Node: walkman{}}, "walkman keeps the token the mean of the nodes' shares, which start at 0: it needs the initial model zero"},
		{rw.Config{Protocol: rw.Gossip, Walks: 1, StepSize: 0.05, Exponent: 0.75, Radius: 5, Node: rw.SGD{}}, "gossip has no walk"},
	} {
		err := rw.Reference(c.cfg, p, 1, 10, nil, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}
