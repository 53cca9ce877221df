package randomwalk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/floats"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/privacy/gamma"
	"maple/privacy/noise"
	"maple/topology"
)

// Streams returns the random stream of an owner (an actor name) for a
// purpose: rng.New(runSeed, owner, purpose) in both engines.
type Streams func(owner, purpose string) *rand.Rand

// SchedulerName is the actor name of the scheduler: it picks the walks' start
// nodes and gossip's active nodes.
const SchedulerName = "scheduler"

// NodeName returns the actor name of node i, "node/i".
func NodeName(i int) string { return "node/" + strconv.Itoa(i) }

// WalkPurpose returns the purpose of walk w's streams, "walk/w": the
// scheduler draws the walk's start node from it and every node its proposals
// and acceptance draws.
func WalkPurpose(w int) string { return "walk/" + strconv.Itoa(w) }

// WalkInitPurpose returns the purpose of the stream the start node of walk w
// draws the initial model from, "init/walk/w".
func WalkInitPurpose(w int) string { return InitPurpose + "/" + WalkPurpose(w) }

// Purposes of the other streams.
const (
	// PrivacyPurpose is a node's stream for its mechanism draw.
	PrivacyPurpose = "privacy"
	// GossipPurpose is the scheduler's stream of active nodes and a node's
	// stream of gossip partners.
	GossipPurpose = "gossip"
	// InitPurpose prefixes the streams of initial models: "init" for a
	// gossip node, "init/walk/w" for walk w.
	InitPurpose = "init"
)

// Problem is the graph and the nodes' data.
type Problem struct {
	// Graph is the communication graph; node i holds Sets[i].
	Graph *topology.Graph
	// Sets are the nodes' datasets, each non-empty.
	Sets []*data.Set
	// Loss is the shared loss; node i minimizes f_i = N·J_i.
	Loss loss.Loss
}

// Lipschitz returns the Lipschitz constant of ∇f_i for f_i = scale·J_i on
// the samples of s, with the bound the paper uses (spec §6.1): the Hessian of
// ℓ(xᵀw) is at most c·xxᵀ (c = 1/4 for the logistic loss, 2 for least
// squares), so L = scale·(c·(1/n)Σ_n ‖x_n‖² + 2ρ). With one sample, scale N
// and ρ = 1/(2N) this is the paper's L_i = 1 + N‖x_i‖²/4.
func Lipschitz(l loss.Loss, s *data.Set, scale float64) (float64, error) {
	var c float64
	switch l.Kind {
	case loss.Logistic:
		c = 0.25
	case loss.LeastSquares:
		c = 2
	default:
		return 0, fmt.Errorf("no Lipschitz bound for loss %v", l.Kind)
	}
	var sq float64
	for n := range s.Len() {
		if s.X != nil {
			row := s.Row(n)
			sq += floats.Dot(row, row)
		} else {
			for _, v := range s.Val[s.RowPtr[n]:s.RowPtr[n+1]] {
				sq += v * v
			}
		}
	}
	return scale * (c*sq/float64(s.Len()) + 2*l.Rho), nil
}

// LipschitzConstants returns the L_i of every node of p: Lipschitz with
// scale N.
func LipschitzConstants(p Problem) ([]float64, error) {
	l := make([]float64, len(p.Sets))
	for i, s := range p.Sets {
		var err error
		if l[i], err = Lipschitz(p.Loss, s, float64(len(p.Sets))); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Announcement is what a node tells each neighbour at set-up: its degree and
// the log of the weight its target gives it (ln L_i, ln R(L_i), or 0 for the
// uniform walk).
type Announcement struct {
	Degree    int
	LogWeight float64
}

// Node is one node of a random walk: its data, its announced weight, what its
// neighbours announced, and the node rule it applies to the tokens it holds,
// with the rule's memory of each walk.
type Node struct {
	id         int
	neighbours []int
	set        *data.Set
	loss       loss.Loss
	cfg        *Config
	streams    Streams
	walks      []*rand.Rand // per walk, created on first use

	l        float64 // L_i
	logW     float64 // announced log weight
	gradW    float64 // c_i·N: the factor of ∇J_i in the step
	nbrLogW  []float64
	nbrDeg   []int
	known    []bool
	missing  int
	gradient []float64
	nodes    int           // N
	states   [][][]float64 // per walk, the node rule's state vectors (Visit.State)
	visit    Visit         // the visit in progress, reused
}

// Weights are the constants of a walk's nodes, for the run's summary.
type Weights struct {
	// L are the Lipschitz constants L_i and LBar their mean.
	L    []float64
	LBar float64
	// LogW are the announced log weights; the walk's stationary
	// distribution is Stationary(LogW).
	LogW []float64
	// Gradient are the gradient weights c_i.
	Gradient []float64
}

// NewNodes builds the nodes of a walk on p, drawing every node's mechanism
// output from its privacy stream: node i's L_i, announced weight and gradient
// weight. The nodes then know nothing of their neighbours until they Learn
// their announcements.
func NewNodes(cfg *Config, p Problem, streams Streams) ([]*Node, Weights, error) {
	var w Weights
	if err := cfg.Validate(); err != nil {
		return nil, w, err
	}
	n, err := checkProblem(p)
	if err != nil {
		return nil, w, err
	}
	dim := p.Loss.Dim(p.Sets[0].Dim)
	scale := float64(n)
	if w.L, err = LipschitzConstants(p); err != nil {
		return nil, w, err
	}
	w.LBar = floats.Sum(w.L) / scale
	w.LogW = make([]float64, n)
	if cfg.Target == Importance {
		in := cfg.Privacy.Inputs
		if in == nil {
			in = w.L
		}
		if len(in) != n {
			return nil, w, fmt.Errorf("privacy inputs: %d values for %d nodes", len(in), n)
		}
		for i := range w.LogW {
			if !(in[i] > 0) || math.IsInf(in[i], 1) {
				return nil, w, fmt.Errorf("privacy inputs: node %d's must be positive and finite, got %v", i, in[i])
			}
			w.LogW[i] = privatize(&cfg.Privacy, in[i], streams(NodeName(i), PrivacyPurpose))
		}
	}
	// ln R̄ = ln(Σ_i e^{lw_i}/N), for the noisy-R weights.
	top := slices.Max(w.LogW)
	var sum float64
	for _, lw := range w.LogW {
		sum += math.Exp(lw - top)
	}
	logRBar := top + math.Log(sum/scale)
	w.Gradient = make([]float64, n)
	nodes := make([]*Node, n)
	for i := range nodes {
		c := 1.0
		if cfg.Target == Importance {
			if cfg.Weighting == TrueL {
				c = w.LBar / w.L[i]
			} else {
				c = math.Exp(logRBar - w.LogW[i])
			}
		}
		w.Gradient[i] = c
		nb := p.Graph.Neighbors(i)
		nodes[i] = &Node{
			id: i, neighbours: nb, set: p.Sets[i], loss: p.Loss, cfg: cfg, streams: streams,
			l: w.L[i], logW: w.LogW[i], gradW: c * scale,
			nbrLogW: make([]float64, len(nb)), nbrDeg: make([]int, len(nb)), known: make([]bool, len(nb)),
			missing: len(nb), gradient: make([]float64, dim), nodes: n,
		}
		nodes[i].visit.n = nodes[i]
	}
	return nodes, w, nil
}

// checkProblem returns the number of nodes after checking that the graph is
// connected, has at least two nodes, and every node has data.
func checkProblem(p Problem) (int, error) {
	if p.Graph == nil {
		return 0, fmt.Errorf("no graph")
	}
	n := p.Graph.Len()
	switch {
	case n < 2:
		return 0, fmt.Errorf("a walk needs at least 2 nodes, got %d", n)
	case !p.Graph.Connected():
		return 0, fmt.Errorf("the graph is not connected: the walk cannot reach every node")
	case len(p.Sets) != n:
		return 0, fmt.Errorf("%d datasets for %d nodes", len(p.Sets), n)
	}
	for i, s := range p.Sets {
		if s == nil || s.Len() == 0 {
			return 0, fmt.Errorf("node %d has no data", i)
		}
	}
	return n, nil
}

// privatize returns the log of the weight node i announces for L = l under
// the mechanism, drawing from r.
func privatize(p *Privacy, l float64, r *rand.Rand) float64 {
	switch p.Mechanism {
	case GammaMechanism:
		return gamma.LogSample(r, l, p.Theta)
	case TruncatedGamma:
		return min(max(gamma.LogSample(r, l, p.Theta), math.Log(p.Low)), math.Log(p.High))
	case LaplaceMechanism:
		return math.Log(max(l+noise.LaplaceFromUint64(r.Uint64(), p.Scale), p.Low))
	}
	return math.Log(l)
}

// LogRatio returns ln p(R | l1) − ln p(R | l0): the log-likelihood ratio of
// a node's announcement, of log weight logR, between the mechanism's inputs
// l1 and l0 — the Neyman–Pearson statistic of an auditor who knows that the
// input is one of the two. The truncated Gamma and the floored Laplace
// outputs have atoms at their clipping points, where the ratio is that of
// the probabilities of the clipped tails. Without a mechanism the
// announcement is ln L itself, and the ratio is +Inf at ln l1 and −Inf
// elsewhere.
func (p *Privacy) LogRatio(logR, l1, l0 float64) float64 {
	lo, hi := min(l0, l1), max(l0, l1)
	sign := 1.0
	if l1 < l0 {
		sign = -1 // the functions below are written for (hi, lo)
	}
	b := gamma.Bounds{Inf: lo, Sup: hi}
	switch p.Mechanism {
	case GammaMechanism:
		return sign * gamma.LossUp(logR, p.Theta, b)
	case TruncatedGamma:
		return sign * gamma.TruncatedLossUp(logR, p.Theta, math.Log(p.Low), math.Log(p.High), b)
	case LaplaceMechanism:
		return sign * laplaceLossUp(logR, p.Scale, p.Low, lo, hi)
	}
	if logR == math.Log(l1) {
		return math.Inf(1)
	}
	return math.Inf(-1)
}

// laplaceLossUp returns ln p(R | hi) − ln p(R | lo) for the Laplace
// baseline's announcement R = max(L + Lap(b), floor), given ln R: at the
// atom R = floor the log ratio of the Laplace CDFs at floor, elsewhere
// (|R − lo| − |R − hi|)/b.
func laplaceLossUp(logR, b, floor, lo, hi float64) float64 {
	if logR > math.Log(floor) {
		z := math.Exp(logR)
		return (math.Abs(z-lo) - math.Abs(z-hi)) / b
	}
	return laplaceLogCDF(floor, hi, b) - laplaceLogCDF(floor, lo, b)
}

// laplaceLogCDF returns ln P[L + Lap(b) ≤ x].
func laplaceLogCDF(x, l, b float64) float64 {
	if x < l {
		return (x-l)/b - math.Ln2
	}
	return math.Log1p(-math.Exp(-(x-l)/b) / 2)
}

// ID returns the node's index.
func (n *Node) ID() int { return n.id }

// Dim returns the dimension of the models the node steps.
func (n *Node) Dim() int { return len(n.gradient) }

// Neighbours returns the node's neighbours in ascending order; the caller
// must not modify the slice.
func (n *Node) Neighbours() []int { return n.neighbours }

// Announcement returns what the node tells each neighbour at set-up.
func (n *Node) Announcement() Announcement {
	return Announcement{Degree: len(n.neighbours), LogWeight: n.logW}
}

// Learn records neighbour from's announcement and reports whether the node
// now knows every neighbour's. An announcement from a node that is not a
// neighbour, a second one from the same node, or an impossible one, is an
// error.
func (n *Node) Learn(from int, a Announcement) (complete bool, err error) {
	k, ok := slices.BinarySearch(n.neighbours, from)
	switch {
	case !ok:
		return false, fmt.Errorf("announcement from node %d, which is not a neighbour of node %d", from, n.id)
	case n.known[k]:
		return false, fmt.Errorf("second announcement from node %d", from)
	case a.Degree < 1 || math.IsNaN(a.LogWeight) || math.IsInf(a.LogWeight, 0):
		return false, fmt.Errorf("impossible announcement from node %d: degree %d, log weight %v", from, a.Degree, a.LogWeight)
	}
	n.known[k] = true
	n.nbrDeg[k], n.nbrLogW[k] = a.Degree, a.LogWeight
	n.missing--
	return n.missing == 0, nil
}

// Ready reports whether the node knows every neighbour's announcement.
func (n *Node) Ready() bool { return n.missing == 0 }

// InitialModel sets dst to an initial model drawn from the node's stream
// purpose: uniform on the ball W (a Gaussian direction and a radius
// R·U^{1/d}) or zero.
func (n *Node) InitialModel(dst []float64, purpose string) {
	initialModel(dst, n.cfg, n.streams, n.id, purpose)
}

func initialModel(dst []float64, cfg *Config, streams Streams, id int, purpose string) {
	if cfg.Init == Zero {
		clear(dst)
		return
	}
	r := streams(NodeName(id), purpose)
	for j := range dst {
		dst[j] = r.NormFloat64()
	}
	radius := cfg.Radius * math.Pow(1-r.Float64(), 1/float64(len(dst)))
	floats.Scale(radius/floats.Norm(dst, 2), dst)
}

// StepFunc is told about every step a node takes: the step number k, the
// node the token moves to next (−1 when it stays, or when the walk ends),
// and the model after the step.
type StepFunc func(k, next int, model []float64)

// Walk runs walk's steps at this node on the model (updated in place),
// starting with step k+1, until the token moves to a neighbour or step last
// is done. Each step applies the configuration's node rule (the projected
// SGD step by default) and then, unless it is the last, proposes a uniform
// neighbour and accepts it with the Metropolis–Hastings probability; a
// rejection keeps the token here for the next step. It returns the node the
// token moves to (−1 when the walk ended here) and the number of the last
// step taken.
func (n *Node) Walk(walk, k, last int, model []float64, step StepFunc) (next, done int) {
	r := n.walkStream(walk)
	rule := n.cfg.nodeRule()
	n.visit.walk = walk
	for {
		k++
		rule.Step(&n.visit, model, n.cfg.Step(k))
		next = -1
		if k < last {
			next = n.propose(r)
		}
		step(k, next, model)
		if k == last || next >= 0 {
			return next, k
		}
	}
}

// walkStream returns the node's stream of walk w.
func (n *Node) walkStream(w int) *rand.Rand {
	for len(n.walks) <= w {
		n.walks = append(n.walks, nil)
	}
	if n.walks[w] == nil {
		n.walks[w] = n.streams(NodeName(n.id), WalkPurpose(w))
	}
	return n.walks[w]
}

// propose draws a neighbour uniformly and a uniform u, and returns the
// neighbour if u < a(i, j), else −1.
func (n *Node) propose(r *rand.Rand) int {
	k := r.IntN(len(n.neighbours))
	u := r.Float64()
	if u < acceptance(n.logW, n.nbrLogW[k], len(n.neighbours), n.nbrDeg[k]) {
		return n.neighbours[k]
	}
	return -1
}

// project scales w onto the ball of the given radius if it lies outside:
// by radius/‖w‖ when floats.Norm(w, 2) > radius.
//
// Most steps stay well inside the ball, and floats.Norm's overflow-safe
// scaling divides at every coordinate, so w is first measured with the plain
// sum of squares s. Its relative error is at most γ_n = n·u/(1 − n·u) (u =
// 2⁻⁵³, n = len(w)), and floats.Norm's at most a few n·u, so when s ≤
// (1 − 10⁻⁶)·radius² — while n·u < 10⁻⁸, up to a hundred million
// coordinates — floats.Norm(w, 2) ≤ radius for certain and w is left as it
// is, exactly as the comparison with floats.Norm would leave it. Near the
// sphere or outside it, or when s is not a normal number (underflow,
// overflow), the decision and the scale are floats.Norm's.
func project(w []float64, radius float64) {
	var s float64
	for _, x := range w {
		s += x * x
	}
	if s <= (1-1e-6)*radius*radius && s >= 0x1p-900 && len(w) < 1e8 {
		return
	}
	if norm := floats.Norm(w, 2); norm > radius {
		floats.Scale(radius/norm, w)
	}
}
