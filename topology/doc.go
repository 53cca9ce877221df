// Package topology builds the communication graphs of a decentralized network
// and the combination matrices its agents use to mix what they receive.
//
// # Weight convention
//
// A combination matrix A is P×P with
//
//	A.At(m, p) = a_mp = the weight that receiver p gives to information from sender m.
//
// Agent p therefore aggregates Σ_m a_mp·x_m, which is x_new = Aᵀx in stacked
// form. A is left-stochastic: entries are non-negative and every column sums to
// one (1ᵀA = 1ᵀ). A doubly-stochastic matrix also has rows summing to one. The
// Perron vector q of a primitive left-stochastic A satisfies A q = q, q > 0 and
// 1ᵀq = 1; for a doubly-stochastic A it is q = 1/P. Matrix files read by
// ReadMatrix use the same layout: line m holds row m, so column p lists the
// weights receiver p uses. Error messages write a_mp as a[m][p], with 0-based
// node ids throughout.
//
// # Determinism
//
// The same seed must give the same graph, and the same graph the same matrix,
// on every machine and at every GOMAXPROCS. gonum's graph types keep nodes in Go
// maps, so their iteration order changes from one pass to the next; every graph
// produced by gonum is therefore converted to a Graph by sorting node ids and
// neighbour lists before anything else looks at it. A Graph always lists
// neighbours and edges in ascending order, and the weight rules visit them in
// that order, so floating-point sums are reproducible bit for bit.
//
// # Generators
//
// Ring, Complete and Star use gonum's deterministic generators (gen.Cycle,
// gen.Complete, gen.Star) and ErdosRenyi uses gonum's gen.Gnp. Grid, the random
// geometric graph (gonum has none) and the Watts–Strogatz small world are
// written here. The small world does not use gonum's gen.SmallWorldsBB: in
// gonum v0.17.0 that generator does not start from a ring lattice (with n = 20,
// d = 2 and p = 0.01 it joins two nodes to almost every other node), so it
// would not give the clustering a small-world experiment expects. All random
// generators draw from a caller-supplied *rand.Rand, never from a global
// source, and redraw until the graph is connected (and, where asked, every
// node has a minimum degree), failing with ErrNoConnectedGraph after a bounded
// number of draws.
package topology
