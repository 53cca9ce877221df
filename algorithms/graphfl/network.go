package graphfl

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"

	"maple/privacy/homomorphic"
	"maple/privacy/pairmask"
	"maple/topology"
)

// Network is the validated server graph that the servers' state machines
// and the metrics share: the combination matrix, who sends to whom
// (ascending), the Perron vector and, for local graph-homomorphic masks, the
// role plan. It is read-only once built.
//
// A server's state machine reads what the server knows in the paper: its own
// column of A (the weights it applies) and its neighbour lists; in the
// secure local graph-homomorphic mode the weights its receivers give it
// travel in role announcements, unless A is symmetric.
type Network struct {
	cfg       Config
	a         *mat.Dense
	q         []float64
	senders   [][]int // senders[p]: the m ≠ p with a_mp > 0, ascending
	receivers [][]int // receivers[m]: the p ≠ m with a_mp > 0, ascending
	symmetric bool
	plan      *pairmask.Plan // local graph-homomorphic masks only
}

// NewNetwork validates cfg and the P×P combination matrix A (A.At(m, p) =
// a_mp, the weight server p gives server m) and precomputes what the servers
// need. A must be left-stochastic and primitive; graph-homomorphic noise also
// needs a positive self-weight everywhere (it divides by a_pp), and its ratio
// form a doubly-stochastic A with symmetric support.
func NewNetwork(A mat.Matrix, cfg Config) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c, err := topology.NewCombination(A)
	if err != nil {
		return nil, err
	}
	if r, _ := c.A.Dims(); r != cfg.Servers {
		return nil, fmt.Errorf("combination matrix is %d×%d for %d servers", r, r, cfg.Servers)
	}
	if cfg.Privacy.Scheme == GraphHomomorphic {
		if err := homomorphic.CheckForm(A, cfg.Privacy.Form, topology.DefaultTol); err != nil {
			return nil, err
		}
	}
	n := &Network{cfg: cfg, a: c.A, q: c.Perron, senders: c.Senders, receivers: c.Receivers, symmetric: c.Symmetric}
	if cfg.Privacy.Scheme == LocalGraphHomomorphic {
		n.plan = pairmask.NewPlan(cfg.Privacy.Roles, n.senders, n.receivers)
	}
	return n, nil
}

// Servers returns P.
func (n *Network) Servers() int { return len(n.q) }

// Weight returns a_mp = A.At(m, p), the weight server p gives server m.
func (n *Network) Weight(m, p int) float64 { return n.a.At(m, p) }

// Perron returns a copy of the Perron vector q of A (Aq = q, q > 0,
// 1ᵀq = 1): uniform, 1/P, when A is doubly stochastic, as in the paper. The
// network centroid is w_c = Σ_p q_p w_p.
func (n *Network) Perron() []float64 { return slices.Clone(n.q) }

// Plan returns the local graph-homomorphic role plan, or nil for the other
// schemes.
func (n *Network) Plan() *pairmask.Plan { return n.plan }

// Unmasked lists the edges {from, to} whose messages local graph-homomorphic
// masks cannot protect (into servers with fewer than two neighbours); empty
// for the other schemes.
func (n *Network) Unmasked() [][2]int {
	if n.plan == nil {
		return nil
	}
	return n.plan.Unmasked()
}
