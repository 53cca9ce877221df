// Package randomwalk implements random-walk SGD (paper 003: Ayache and El
// Rouayheb, "Private weighted random walk stochastic gradient descent") and
// the asynchronous gossip SGD it is compared with, as pure state machines and
// an actor-free Reference.
//
// # The walk
//
// Node i of an undirected connected graph holds its data and minimizes its
// part f_i = N·J_i of f = (1/N) Σ_i f_i, J_i being the shared loss's local risk
// (with one sample and loss.rho = 1/(2N) this is the paper's eq. 13 with the
// ½‖w‖² regulariser, spec §6.1). A token carrying the model w and the step
// count k travels along a Metropolis–Hastings walk with target π. At each step
// the holder i
//
//  1. takes the projected SGD step w ← Π_W(w − γ_k·c_i·∇f_i(w)) with
//     γ_k = γ₀/k^q and the gradient weight c_i of the variant — or the
//     configuration's other node rule (Config.Node, a NodeRule users can
//     plug in), which may keep a memory of the walk at the node between
//     its visits (Visit.State);
//  2. proposes a neighbour j uniformly and accepts it with probability
//     a(i, j) = min{1, (π_j/π_i)·(deg i/deg j)}, decided locally from what j
//     announced at set-up; an accepted move sends the token to j, a rejection
//     keeps it at i and costs no message.
//
// Variants (Target, Mechanism, Weighting): the uniform walk (Algorithm 1, π
// uniform, c_i = 1), the importance-weighted walk (Algorithm 2, π_i ∝ L_i,
// c_i = L̄/L_i), and the private weighted walk (Algorithm 3) where π_i ∝ R_i,
// R_i = R(L_i) a noisy L_i drawn once per node by the Gamma mechanism (package
// privacy/gamma), the truncated Gamma mechanism or the Laplace baseline, with
// the paper's weight L̄/L_i or the unbiased R̄/R_i. W is an ℓ2 ball; the walk
// starts at a uniform node with a model uniform on W (or zero).
//
// Set-up: every node announces its degree and its (log) weight to each
// neighbour, once. L̄ and R̄, global constants the paper does not say how
// nodes learn, are given to every node at construction (an oracle).
//
// Several independent walks may run at once; walk w's draws at node i come
// from the stream (node/i, walk/w), so the walks do not depend on how their
// steps interleave, and Reference can run them one after the other.
//
// # Gossip
//
// Asynchronous pairwise gossip SGD (Ram, Nedić and Veeravalli), the paper's
// baseline: each iteration a uniformly random node i wakes up, picks a
// uniform neighbour j, and the two exchange models (two messages) and average
// them, each also taking one SGD step on its own data, before or after the
// averaging (Order). The step is γ₀/k^q with the global iteration k or with
// the node's own update count (StepRule).
//
// # Events
//
// Both engines report what the metrics need through an Observer, with the
// bytes of every message as measured by a Sizer (the protobuf size of the
// message, supplied by the actor package), so the reference's counts equal
// the actor run's.
package randomwalk
