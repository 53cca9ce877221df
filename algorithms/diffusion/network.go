package diffusion

import (
	"slices"

	"gonum.org/v1/gonum/mat"

	"maple/privacy/homomorphic"
	"maple/privacy/pairmask"
	"maple/topology"
)

// Network is the validated view of the combination matrix A that the agents'
// state machines and the metrics share: who sends to whom (ascending), the
// Perron vector, and the LGH role split of every receiver. It is read-only
// once built, so one Network serves all agents of a run.
//
// Each agent's state machine reads only what that agent knows in the papers:
// its own column of A (the weights it applies), its neighbour lists and, for
// the ratio GH form and the oracle LGH mode, the weights its receivers give
// it, which those schemes assume public. In the secure and paper LGH modes the
// receivers' weights and roles travel in RoleAssign messages instead.
type Network struct {
	cfg       Config
	a         *mat.Dense
	uses      [3]bool
	q         []float64
	senders   [][]int // senders[p]: the m ≠ p with a_mp > 0, ascending
	receivers [][]int // receivers[m]: the p ≠ m with a_mp > 0, ascending
	symmetric bool
	plan      *pairmask.Plan // the LGH role split of every receiver
}

// Unmasked is the role of a sender whose receiver cannot mask its incoming
// messages (fewer than two neighbours besides itself): it sends plain values.
const Unmasked = pairmask.Unmasked

// Edge is a directed link of the network.
type Edge struct {
	// From sends to To (agent indices).
	From, To int
}

// NewNetwork validates cfg and the P×P combination matrix A (A.At(m, p) = a_mp,
// the weight receiver p gives sender m) and precomputes what the agents need.
// A must be left-stochastic and primitive; graph-homomorphic noise also needs
// a positive self-weight everywhere, and its ratio form a doubly-stochastic A
// with symmetric support (homomorphic.CheckForm).
func NewNetwork(A mat.Matrix, cfg Config) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := topology.NewCombination(A)
	if err != nil {
		return nil, err
	}
	if cfg.Privacy.Scheme == GraphHomomorphic {
		if err := homomorphic.CheckForm(A, cfg.Privacy.Form, topology.DefaultTol); err != nil {
			return nil, err
		}
	}
	n := &Network{cfg: cfg, a: c.A, uses: cfg.Uses(), q: c.Perron, senders: c.Senders, receivers: c.Receivers, symmetric: c.Symmetric}
	n.plan = pairmask.NewPlan(cfg.Privacy.Roles, n.senders, n.receivers)
	return n, nil
}

// Agents returns P.
func (n *Network) Agents() int { return len(n.q) }

// Uses reports whether stage j's matrix is A (true) or I (false).
func (n *Network) Uses(j int) bool { return n.uses[j] }

// Communicates reports whether any stage uses A, i.e. whether agents exchange
// messages at all.
func (n *Network) Communicates() bool { return n.uses != [3]bool{} }

// Weight returns a_mp = A.At(m, p), the weight receiver p gives sender m.
func (n *Network) Weight(m, p int) float64 { return n.a.At(m, p) }

// Perron returns a copy of the Perron vector q of A (Aq = q, q > 0, 1ᵀq = 1).
//
// Which q (spec §3.2): every stage that communicates uses the same A, so the
// stage-specific weights that make stage j's GH noise cancel in the centroid
// — q for stage 2, A₂q for stage 0, A₀A₂q for stage 1 — are all q, and the
// centroid invariance condition A₁A₀A₂q = q holds because A₁A₀A₂ is a power of
// A. The centroid w_c = Σ_p q_p w_p and the GH residual use this q whatever the
// strategy. (Stage-1 noise still reaches the centroid through the gradient at
// the noisy φ, the μH·G term of eq. 46; no choice of q removes it.)
func (n *Network) Perron() []float64 { return slices.Clone(n.q) }

// Senders returns the agents p listens to besides itself, ascending.
func (n *Network) Senders(p int) []int { return slices.Clone(n.senders[p]) }

// Receivers returns the agents that listen to m besides m, ascending.
func (n *Network) Receivers(m int) []int { return slices.Clone(n.receivers[m]) }

// Unmasked lists the edges whose messages LGH cannot mask: every edge into a
// receiver with fewer than two neighbours besides itself, ordered by receiver
// then sender. It is empty for the other schemes and when no stage
// communicates.
func (n *Network) Unmasked() []Edge {
	if n.cfg.Privacy.Scheme != LocalGraphHomomorphic || !n.Communicates() {
		return nil
	}
	var edges []Edge
	for _, e := range n.plan.Unmasked() {
		edges = append(edges, Edge{From: e[0], To: e[1]})
	}
	return edges
}

// SetupBound returns the paper's bound on the LGH set-up messages agent k
// sends, |N_k| + Σ_{j∈N_k} |N_j|/2 (pairmask.SetupMessageBound): |N_k| role
// announcements as a receiver, and as a sender a key agreement with about half
// of each receiver j's neighbourhood. N_k counts the agents k listens to and j
// ranges over the agents that listen to k (the same set when the support is
// symmetric).
func (n *Network) SetupBound(k int) float64 { return n.plan.SetupBound(k) }
