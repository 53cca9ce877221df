package run

import (
	"maple/privacy/homomorphic"
	"maple/privacy/pairmask"
	"maple/scenarios"
)

// ParseMaskFields reads the privacy fields of the graph-homomorphic and local
// graph-homomorphic schemes that the families with pairwise masks share
// (privacy.form, privacy.keys, privacy.roles and privacy.key_randomness) into
// their configuration, naming the field of any unknown value. An empty field
// leaves the value as it is: the algorithms' default is its zero value.
func ParseMaskFields(c *scenarios.CurveSpec, form *homomorphic.Form, keys *pairmask.Mode, roles *pairmask.Rule, osKeys *bool) error {
	pr := &c.Scenario.Privacy
	var err error
	if pr.Form != "" {
		if *form, err = homomorphic.ParseForm(pr.Form); err != nil {
			return c.Errorf("privacy.form", "%v", err)
		}
	}
	if pr.Keys != "" {
		if *keys, err = pairmask.ParseMode(pr.Keys); err != nil {
			return c.Errorf("privacy.keys", "%v", err)
		}
	}
	if pr.Roles != "" {
		if *roles, err = pairmask.ParseRule(pr.Roles); err != nil {
			return c.Errorf("privacy.roles", "%v", err)
		}
	}
	*osKeys = pr.KeyRandomness == "os"
	return nil
}

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
