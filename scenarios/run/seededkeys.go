package run

import "maple/scenarios"

// SeededKeysWarning is the warning of every run whose pairwise masks come
// from secure X25519 keys drawn from the run seed (privacy.key_randomness
// seeded, the default): summary.json publishes the run seeds, so the keys
// protect nothing from whoever holds it.
const SeededKeysWarning = "privacy.key_randomness is seeded: every X25519 private key of the local graph-homomorphic masks is derived from the run seed, which summary.json publishes (run_seeds), so anyone holding it can recompute every pair secret and remove the masks from the shares of a trace (the eavesdropper audit's audit_seeded_msd); set privacy.key_randomness: os for keys nobody can recompute"

// seededKeys reports whether sc's masks come from secure keys drawn from the
// run seed.
func seededKeys(sc *scenarios.Scenario) bool {
	p := &sc.Privacy
	return p.Scheme == "local-graph-homomorphic" && p.Keys == "secure" && p.KeyRandomness == "seeded"
}
