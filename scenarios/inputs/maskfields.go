package inputs

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
