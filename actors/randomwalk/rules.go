package randomwalk

import (
	"errors"

	rw "maple/algorithms/randomwalk"
	"maple/internal/params"
)

// NodeSlot is the behaviour slot of what a walk's node does when it holds
// the token (package internal/params): scenario files select one with
// algorithm.randomwalk.node.
const NodeSlot = "randomwalk.node"

// NodeRules is the registry of node rules: each is registered as the struct
// of its parameters at their defaults, which implements rw.NodeRule; the
// run's rw.Config carries the one a scenario chose, with its values, and
// the nodes of both engines step with it, each keeping its own memory of
// each walk (rw.Visit.State).
var NodeRules = params.Registry[rw.NodeRule]{Slot: NodeSlot}

func init() {
	NodeRules.Register("sgd", "the paper's projected SGD step w ← Π_W(w − γ_k·c_i·N·∇J_i(w))", rw.SGD{})
	NodeRules.Register("walkman", "Walkman (Mao et al. 2020): linearized random-walk ADMM, each node keeping its dual variable and its share of the token between visits", walkman{})
}

// walkman is the linearized Walkman of Mao, Yuan, Hu, Gu, Sayed and Yin
// ("Walkman: a communication-efficient random-walk algorithm for
// decentralized optimization", IEEE TSP 2020): ADMM on min Σ_i f_i(x_i)
// (+ the indicator of W) subject to x_i = y, in which the token carries y
// and node i keeps, between its visits, its dual variable z_i and its share
// c_i = x_i + γz_i of the token, so that the token stays their mean,
// y = (1/N)Σ_i c_i. A visit with step γ takes
//
//	x_i = Π_W(y − γ(∇f_i(y) + z_i)),  z_i ← z_i + (x_i − y)/γ,
//	c_i′ = x_i + γz_i,  y ← y + (c_i′ − c_i)/N,  c_i ← c_i′,
//
// with f_i = N·J_i and no gradient weight: the token is the nodes' mean
// whichever nodes the walk visits most, and at a fixed point Σ_i ∇f_i(y) = 0
// — w⋆ itself, where SGD stalls at a floor set by how much the nodes'
// gradients differ. The paper analyses a fixed step (penalty β = 1/γ); here
// the step is the walk's γ_k = γ₀/k^q, so that every field of the walk keeps
// its meaning (with q near 1/2 it is nearly fixed). The mean invariant needs
// every node's initial share to be the walk's initial model: Check refuses
// a random one.
type walkman struct{}

// Check implements rw.Checker: the shares c_i start at 0, which is the
// walk's mean only if the walk starts at 0.
func (walkman) Check(cfg *rw.Config) error {
	if cfg.Init != rw.Zero {
		return errors.New("walkman keeps the token the mean of the nodes' shares, which start at 0: it needs the initial model zero (algorithm.randomwalk.init: zero), not " + cfg.Init.String())
	}
	return nil
}

// Step implements rw.NodeRule; the node's state vectors of the walk are z_i
// (0), c_i (1) and the scratch x_i (2).
func (walkman) Step(v *rw.Visit, w []float64, gamma float64) {
	z, c, x := v.State(0), v.State(1), v.State(2)
	g := v.Gradient(w)
	n := float64(v.Nodes())
	for j := range x {
		x[j] = w[j] - gamma*(n*g[j]+z[j])
	}
	v.Project(x)
	for j := range w {
		z[j] += (x[j] - w[j]) / gamma
		share := x[j] + gamma*z[j]
		w[j] += (share - c[j]) / n
		c[j] = share
	}
}
