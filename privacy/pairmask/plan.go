package pairmask

import "slices"

// Unmasked is the role of a sender whose receiver cannot mask its incoming
// messages (fewer than two neighbours besides itself): it sends plain values.
const Unmasked Role = 0

// Assignment is a sender's role at one receiver and its partners there: the
// members of the opposite set, with each of which it shares one mask per slot.
type Assignment struct {
	Role     Role
	Partners []int
}

// Plan is the public part of the local graph-homomorphic protocol on a fixed
// network: who listens to whom and, for every receiver, the split of its
// senders into N₊ and N₋. It is read-only once built, so one Plan serves every
// node of a run, and it depends only on the support of the combination matrix
// and the rule, never on the order in which nodes are visited.
type Plan struct {
	senders   [][]int        // senders[k]: the nodes k listens to besides itself, ascending
	receivers [][]int        // receivers[m]: the nodes that listen to m besides m, ascending
	roles     [][]Assignment // roles[k][s]: the assignment of senders[k][s] at receiver k
	maskable  []bool         // maskable[k]: receiver k has at least two senders
}

// NewPlan splits the senders of every receiver by rule (SplitRoles). senders
// and receivers are the two halves of the support of the combination matrix,
// as topology.Support returns them: senders[k] lists the nodes k listens to
// besides itself and receivers[m] the nodes that listen to m, each ascending.
// The plan keeps the slices; do not modify them afterwards.
func NewPlan(rule Rule, senders, receivers [][]int) *Plan {
	p := &Plan{senders: senders, receivers: receivers,
		roles: make([][]Assignment, len(senders)), maskable: make([]bool, len(senders))}
	for k, from := range senders {
		plus, minus, ok := SplitRoles(rule, k, from)
		p.maskable[k] = ok
		p.roles[k] = make([]Assignment, len(from))
		for s, l := range from {
			switch {
			case slices.Contains(plus, l):
				p.roles[k][s] = Assignment{Plus, minus}
			case slices.Contains(minus, l):
				p.roles[k][s] = Assignment{Minus, plus}
			}
		}
	}
	return p
}

// Nodes returns the number of nodes.
func (p *Plan) Nodes() int { return len(p.senders) }

// Senders returns the nodes k listens to besides itself, ascending. The slice
// belongs to the plan: do not modify it.
func (p *Plan) Senders(k int) []int { return p.senders[k] }

// Receivers returns the nodes that listen to m besides m, ascending. The
// slice belongs to the plan: do not modify it.
func (p *Plan) Receivers(m int) []int { return p.receivers[m] }

// Maskable reports whether receiver k has the two senders a pair needs.
func (p *Plan) Maskable(k int) bool { return p.maskable[k] }

// Roles returns the assignments of the senders of receiver k, parallel to
// Senders(k). The slice belongs to the plan: do not modify it.
func (p *Plan) Roles(k int) []Assignment { return p.roles[k] }

// Assignment returns the role of sender l at receiver k (Unmasked, with no
// partners, when k cannot mask), and false if l does not send to k.
func (p *Plan) Assignment(l, k int) (Assignment, bool) {
	s, ok := slices.BinarySearch(p.senders[k], l)
	if !ok {
		return Assignment{}, false
	}
	return p.roles[k][s], true
}

// Unmasked lists the edges {from, to} whose messages cannot be masked: every
// edge into a receiver with fewer than two senders, by receiver then sender.
func (p *Plan) Unmasked() [][2]int {
	var edges [][2]int
	for k, ok := range p.maskable {
		if !ok {
			for _, l := range p.senders[k] {
				edges = append(edges, [2]int{l, k})
			}
		}
	}
	return edges
}

// SetupBound returns the paper's bound |N_k| + Σ_{j∈N_k} |N_j|/2 on the set-up
// messages node k sends (SetupMessageBound), N_k being the nodes k listens to
// and j ranging over the nodes that listen to k.
func (p *Plan) SetupBound(k int) float64 {
	degrees := make([]int, len(p.receivers[k]))
	for i, j := range p.receivers[k] {
		degrees[i] = len(p.senders[j])
	}
	return SetupMessageBound(len(p.senders[k]), degrees)
}
