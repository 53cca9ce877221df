// Package all links every algorithm family into the program: importing it
// registers each family with the runner and the scenario loader. Adding a
// family adds its import here and changes no other package.
//
// The package's tests run plans end to end through the runner, over every
// family: engine parity field by field, the run directory's contents,
// interruption and atomic outputs, the estimates, the data readers, privacy
// accounting and each family's figures of merit. They run in parallel
// (t.Parallel), but for those that change GOMAXPROCS, which the testing
// package runs first, alone: this package's binary is among the last the
// suite builds, and run one test at a time it was the suite's tail.
package all

import (
	_ "maple/families/diffusion"      // decentralized learning (paper 001)
	_ "maple/families/fedavg"         // federated averaging (thesis ch. 2)
	_ "maple/families/fedplt"         // Fed-PLT and its baselines
	_ "maple/families/gammamechanism" // the Gamma mechanism's Lemma 1
	_ "maple/families/graphfl"        // graph federated learning
	_ "maple/families/randomwalk"     // random-walk learning (paper 003)
)
