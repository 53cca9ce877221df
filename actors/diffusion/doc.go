// Package diffusion holds the actor behaviours of decentralized learning with
// privacy (paper 001 / thesis chapter 4): one actor per agent, each a thin
// wrapper around the state machine of maple/algorithms/diffusion, driven by the
// engine's round scheduler.
//
// # Actors
//
// Spawn creates "scheduler" (an actors.Scheduler targeting every agent) and
// then agent/0 … agent/P−1, so agent p's ID is the scheduler's + 1 + p. Each
// round i is one iteration: the scheduler sends every agent a Tick; an agent
// runs the stages 1, 0, 2 of its recursion, reports to the observer and sends
// Done; the scheduler opens the next round once every agent is done.
//
// # Messages (actors/msg/diffusion.proto)
//
// The iteration is the envelope's round; agents are named by their index p.
//
//   - StageShare{stage, payload}: y_m (w, φ or ψ) plus noise or masks, m → p,
//     once per communicating stage and receiver. A receiver buffers shares
//     of later stages and combines a stage, in ascending sender id, once it
//     holds every sender's share.
//   - RoleAssign{role, weight, partners}: LGH receiver k → sender ℓ, first
//     round (secure and paper modes). role MASK_ROLE_UNMASKED means k cannot
//     mask (fewer than two neighbours): ℓ sends plain values to k.
//   - PublicKey{key}: ℓ → k, ℓ's X25519 public key, once per receiver (secure).
//   - RelayedPublicKey{origin, key}: k → m, ℓ's public key for each partner m.
//   - PaperPublic{partner, stage, values}: ℓ → k, the public values e^{−v} of
//     this round's fresh keys for one partner and stage (paper mode).
//   - RelayedPaperPublic{origin, stage, values}: k → m, relayed.
//
// A round of secure LGH ATC therefore reads, for receiver k with senders ℓ
// (N₊) and m (N₋): k → ℓ RoleAssign(plus), k → m RoleAssign(minus) (round 1
// only); ℓ → k PublicKey, k → m RelayedPublicKey(ℓ); m → k PublicKey, k → ℓ
// RelayedPublicKey(m) (round 1 only); ℓ → k StageShare(ψ_ℓ + g/a_ℓk),
// m → k StageShare(ψ_m − g/a_mk). Private keys and pairwise secrets stay in
// the agents' state machines and never appear in a message, hence in a trace.
//
// # Observations
//
// At the end of every round each agent reports, outside the protocol:
// KeyModel ("model") with w_{p,i}; under GH, NoiseKey(j) ("gh-noise/j") with
// its draw g_p of each communicating stage j, from which the observer checks
// the Perron-weighted residual (diffusion.GHResidual); under LGH with key
// messages, KeySetup ("lgh-setup") with [roles, keys, relays] sent in the
// round, when any. Collector reassembles these into network-wide views. Setup
// gives the paper's set-up bound per agent (SetupBounds) and the edges LGH
// cannot mask (UnmaskedEdges); the run also warns about each such receiver.
//
// # Virtual time
//
// An agent spends GradientTime per sample gradient before the messages that
// depend on the gradient. The engine delivers messages in order of virtual
// arrival time, so an ATC round with full-batch gradients over N samples and
// link latency L lasts L (Tick) + N·GradientTime + L (shares) + L (Done) when
// every agent holds N samples; the slowest agent sets the pace otherwise.
package diffusion
