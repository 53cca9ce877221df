// Package secagg implements secure aggregation as pure, deterministic state
// machines in the style of etcd-io/raft: a Client and a server
// (ServerState), each consuming one message per Step and returning the
// messages to send, with no I/O and every random bit drawn from a stream
// passed in. The actor behaviours, the reference runner (Reference) and the
// tests drive the same machines.
//
// # SecAgg (Bonawitz et al., "Practical secure aggregation for
// privacy-preserving machine learning", CCS 2017, Fig. 4)
//
// The honest-but-curious protocol, in four PhaseCount:
//
//  0. AdvertiseKeys — client u draws two X25519 key pairs (crypto/ecdh):
//     (c_u^PK, c_u^SK) to encrypt shares, (s_u^PK, s_u^SK) for pairwise
//     masks, and sends both public keys. The server forwards to each
//     survivor the keys of the others (U₁).
//  1. ShareKeys — u draws its self-mask seed b_u, splits s_u^SK and b_u into
//     t-of-|U₁| Shamir shares (package shamir), and seals each other
//     client v's pair of shares with AES-256-GCM under
//     HKDF-SHA256(KA.agree(c_u^SK, c_v^PK), round, u, v): one key per
//     direction and round, the link's ids as associated data. The server
//     forwards each box to its recipient (U₂: those that sent boxes).
//  2. MaskedInputCollection — u sends
//     y_u = x_u + PRG(b_u) + Σ_{v∈U₂∖{u}} Δ_{u,v}·PRG(s_{u,v}) mod 2^k,
//     x_u its clipped fixed-point input (package fixedpoint), s_{u,v} =
//     KA.agree(s_u^SK, s_v^PK) = KA.agree(s_v^SK, s_u^PK), Δ_{u,v} = +1 if
//     u > v and −1 otherwise, so that the pairwise masks of two survivors
//     cancel. The PRG is ChaCha8 keyed by HKDF of the seed. U₃: those
//     that sent it.
//  3. Unmasking (the paper's round 4; its round 3, ConsistencyCheck, exists
//     only against active adversaries) — every survivor sends, for each v
//     in U₂, its share of b_v if v ∈ U₃ and of s_v^SK otherwise; never
//     both. The server reconstructs each b_v (v ∈ U₃) and s_v^SK
//     (v ∈ U₂ ∖ U₃) from t shares, recomputes the masks and removes them:
//     Result.Sum = Σ_{u∈U₃} x_u mod 2^k exactly, which decoded is the plain
//     sum of the quantized inputs bit for bit.
//
// Dropouts: a client may vanish before any of its four messages. The round
// completes whenever at least t clients survive each phase (t share
// holders of every secret the server must reconstruct); otherwise the server
// stops with a *ThresholdError naming the phase and the survivor count, and
// produces no result — never a wrong aggregate. Clients check the same
// counts on what they receive.
//
// # SecAgg+ (Bell et al., "Secure single-server aggregation with
// (poly)logarithmic overhead", CCS 2020, §3)
//
// The same machines on a sparse graph: with Config.Neighbours = k < n − 1
// the server draws a Harary graph H_{k,n} under a uniformly random
// permutation (HararyGraph), and each client advertises to, shares with and
// masks against its k neighbours only; its shares have k + 1 holders (its
// neighbours and itself) and threshold t ≤ k + 1. The round completes
// whenever every surviving client keeps at least t surviving holders in
// each phase (the per-client condition Flower's SecAgg+ workflow checks
// too); the *ThresholdError then names the client. Each client's cost falls
// from O(n + m) to O(k + m), the server's from O(n² + n·m) to
// O(n·k + n·m) (ExpectedCosts). SecAgg is the case k = n − 1.
//
// # Costs
//
// Every message reports its payload size (Message.Size); Costs tallies
// messages and bytes per phase, per client and for the server from the
// messages the machines return, and ExpectedCosts is the closed form for a
// round without dropouts, which the tests check the tally against.
//
// # Secrets
//
// Private keys, seeds, agreements and held shares stay inside Client and
// ServerState, which format as placeholders with every fmt verb. Messages
// carry only what the protocol sends: public keys, sealed boxes, masked
// inputs, survivor lists and, in the last phase, the shares the server is
// entitled to.
package secagg
