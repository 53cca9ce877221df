// Package fedplt implements Fed-PLT (seed 004: Bastianello, Liu and Johansson,
// "Enhancing Privacy in Federated Learning through Local Training") and the
// five baselines the paper compares it with, as pure state machines plus an
// actor-free reference of each recursion.
//
// The problem is min_x Σ_i f_i(x) + h(x) with f_i an agent's regularized
// empirical risk (Objective) and h a common, possibly non-smooth regularizer
// (Prox: zero, ℓ1 or a box). Every method has one coordinator and N agents:
//
//   - Fed-PLT (Algorithm 1): an un-relaxed Peaceman–Rachford splitting. The
//     coordinator sends y = prox_{ρh/N}(mean of all z_i) to the active agents;
//     an active agent runs N_e steps of its local solver on
//     f_i(x) + ‖x − (2y − z_i)‖²/(2ρ), warm-started at its previous x_i, sets
//     z_i ← z_i + 2(x_i − y) and sends z_i back. Inactive agents do nothing.
//   - FedPD, FedLin, TAMUNA, LED and 5GCS, reconstructed from their papers as
//     in the spec (§4); each has its own message flow (see the method files).
//
// The pieces every method shares are written once: the local solvers
// (LocalSolver: GD, accelerated GD, mini-batch SGD, noisy GD with optional
// clipping, and any other registered in the slot fedplt.solver, see
// actors/fedplt) acting on a LocalProblem, the prox of h, the participation draws, the cost ledger,
// the Monitor that computes the stopping metric ‖Σ_i ∇f_i(x̄)‖² (the
// composite gradient mapping when h ≠ 0), and the composite reference
// solution (Solve). The convergence quantities of §V (ζ, χ, S, ‖S‖, σ and the
// bound of Proposition 2) are in theory.go. FinalAudit (audit.go) is the
// exact likelihood-ratio auditor of noisy GD's final models on least
// squares, against a LabelCanary, for privacy audits of Proposition 4.
//
// Random streams: the coordinator owns "participation" (active sets),
// "probabilities" (the p_i of Bernoulli participation) and "epochs" (TAMUNA's
// L^r); agent i owns "init" (the noisy initial model), "batch" (SGD),
// "noise" (noisy GD) and whatever else its solver opens with
// LocalProblem.Rand. The references open the same streams and draw in the
// same order as the actors, so both produce the same iterates.
package fedplt
