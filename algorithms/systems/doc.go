// Package systems models the systems side of a simulated run on the virtual
// clock: how long computation takes on each device, how long a message takes
// on each link, and what fails — dropouts, crashes, availability windows,
// message loss and duplication.
//
// Everything here is a pure function of the run seed: each quantity is drawn
// from a named stream of package rng, owned by the agent (or link sender) it
// concerns. The actor engine and the actor-free references of the algorithm
// families open the same streams and consume them in the same order, so both
// see the same compute times, the same failed links and the same dropped
// agents, and their iterates agree. With every rate zero and no compute
// model, nothing is drawn and nothing changes: a run is exactly the run it
// would have been without this package.
//
// # Streams
//
// Agent k (owner AgentName(k), the family's actor name) draws from
//
//   - "compute": its compute time per local step, once (per-agent) or at
//     every step (per-step);
//   - "dropout": whether it answers a task, one draw per task when its
//     dropout probability is positive;
//   - "crash": the round at which it crashes for good, one draw when the
//     crash rate is positive.
//
// The sender of a message draws its jitter from "latency" (as the engine
// always has) and, on links with a loss or duplication probability, its fate
// from "faults". Device classes are dealt from the stream ("network",
// "classes"): a random permutation of the agents whose first fraction₁·K
// agents get the first class, and so on.
package systems
