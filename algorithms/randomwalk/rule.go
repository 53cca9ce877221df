package randomwalk

import "gonum.org/v1/gonum/floats"

// NodeRule is what a node does to a walk's model at every step it holds the
// token, a behaviour users can plug in (actors/randomwalk registers them
// under the slot randomwalk.node): Step updates the model w in place with
// the step's γ_k = γ₀/k^q, seeing its node through the Visit. The paper's
// rule, and that of a Config whose Node is nil, is SGD: the projected step
// w ← Π_W(w − γ_k·c_i·N·∇J_i(w)).
//
// A NodeRule is a value of its parameters: what a node remembers of a walk
// between its visits lives in the Visit's state, which every node keeps for
// each walk, fresh in each run, on both engines (the walk's nodes are the
// same state machines, Node, in the actors and in Reference), so that a
// rule with memory runs alike on both. Visits of a node are rare — a walk
// comes back after about 1/π_i steps — so that memory is the interesting
// part of a rule.
type NodeRule interface {
	Step(v *Visit, w []float64, gamma float64)
}

// Checker is a NodeRule that runs only under some configurations: Check
// reports why cfg rules it out (Config.Validate calls it, and the scenario
// glue reports its error at the node field).
type Checker interface {
	Check(cfg *Config) error
}

// Visit is what a node rule sees of the node holding the token: its data's
// gradient, its weights, the ball W, and its memory of the walk.
type Visit struct {
	n    *Node
	walk int
}

// Gradient returns ∇J_i(w) on the node's data, in the node's buffer, which
// the next call overwrites; it must not be modified.
func (v *Visit) Gradient(w []float64) []float64 {
	v.n.loss.FullGrad(v.n.gradient, w, v.n.set)
	return v.n.gradient
}

// Weight returns c_i·N, the factor of ∇J_i in the paper's step: f_i = N·J_i
// times the gradient weight c_i of the variant (1 for the uniform walk).
func (v *Visit) Weight() float64 { return v.n.gradW }

// Nodes returns N, the number of nodes, a global constant every node is
// given at construction (as it is given L̄).
func (v *Visit) Nodes() int { return v.n.nodes }

// Project scales w onto the ball W if it lies outside.
func (v *Visit) Project(w []float64) { project(w, v.n.cfg.Radius) }

// State returns the node's k-th state vector of the walk (k = 0, 1, …), of
// the model's dimension: zero until the rule writes it, then kept between
// the walk's visits of the node. Each walk has its own, so that the walks
// stay independent.
func (v *Visit) State(k int) []float64 {
	n := v.n
	for len(n.states) <= v.walk {
		n.states = append(n.states, nil)
	}
	s := n.states[v.walk]
	for len(s) <= k {
		s = append(s, make([]float64, len(n.gradient)))
	}
	n.states[v.walk] = s
	return s[k]
}

// SGD is the paper's node rule (Algorithms 1–3): the projected step
// w ← Π_W(w − γ_k·c_i·N·∇J_i(w)). It keeps nothing between visits.
type SGD struct{}

// Step implements NodeRule.
func (SGD) Step(v *Visit, w []float64, gamma float64) {
	floats.AddScaled(w, -gamma*v.Weight(), v.Gradient(w))
	v.Project(w)
}

// nodeRule returns the configuration's node rule.
func (c *Config) nodeRule() NodeRule {
	if c.Node == nil {
		return SGD{}
	}
	return c.Node
}
