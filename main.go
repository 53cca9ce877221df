// Command maple runs privacy-preserving multi-agent learning scenarios on an
// actor engine and inspects their message traces.
//
//	maple run [FILE] [--set field=value]... [--trace]   run a scenario (no FILE: the bundled quick start)
//	maple validate FILE...                              check scenarios without running them
//	maple data FILE                                     show how a scenario's data are dealt out to the agents
//	maple trace RUN_DIR [--round N] [--actor A] [--type T]   filter a run's message trace
//	maple trace stats RUN_DIR                           message statistics per round, type and actor
//	maple trace export --format perfetto RUN_DIR        a timeline for ui.perfetto.dev
//	maple report RUN_DIR                                report.html, a self-contained page of the results
//	maple trace path RUN_DIR --walk N                   follow one random walk's token
//	maple privacy gamma --epsilon E --delta D          Lemma 1: the Gamma noise θ for (ε, δ)
//	maple version                                       print the version
//
// Exit status: 0 on success, 2 for a problem with the user's input (a bad
// scenario, flag or file, or a plan beyond the limits), 1 for a failure of a
// run, 3 for an internal error (a bug in maple: the message asks for a
// report), and 130 when SIGINT or SIGTERM interrupted a run (the runs that
// finished are written, marked partial).
package main

import (
	"os"
	"runtime/debug"

	"maple/cli"
	"maple/scenarios/run"
)

func main() {
	tuneGC()
	os.Exit(cli.Execute(os.Args[1:], os.Stdout, os.Stderr))
}

// tuneGC lets the heap grow to five times what was live after the last
// collection before the next (GOGC=400) rather than twice: a run's live heap
// is small beside what it allocates, and collecting less often saves about a
// tenth of the CPU of the allocation-heavy scenarios (docs/design.md,
// "Performance"). A soft limit at half the memory this process may use keeps
// the heap from growing past it; a collection changes no number. GOGC and
// GOMEMLIMIT in the environment take precedence.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if m := run.MachineMemory(); os.Getenv("GOMEMLIMIT") == "" && m > 0 {
		debug.SetMemoryLimit(int64(m / 2))
	}
}
