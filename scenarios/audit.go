package scenarios

import (
	"slices"
	"strings"
)

// FieldAudit is the section privacy.audit: an empirical lower bound on the
// ε of a curve's privacy guarantee, from canaries inserted into its runs
// (docs/privacy.md, "Audits"). A family that can be audited declares how
// (Family.Audit); a scenario whose family declares nothing is refused,
// naming the field.
const FieldAudit = "privacy.audit"

// The audit methods.
const (
	// AuditOneRun inserts many canaries into each run, each included with
	// probability ½, and bounds ε from the auditor's guesses in that one
	// run (Steinke, Nasr & Jagielski, NeurIPS 2023).
	AuditOneRun = "one-run"
	// AuditManyRun runs the curve's runs alternately with one canary in
	// (odd runs) and out (even runs), scores each run from the auditor's
	// view, and bounds ε from the two samples of scores (Jagielski et al.
	// 2020; Nasr et al., USENIX Security 2023).
	AuditManyRun = "many-run"
)

// Audit is the section privacy.audit.
type Audit struct {
	// Method is one-run or many-run, among those the family offers.
	Method string `yaml:"method"`
	// Canary is the neighbour the audit inserts or leaves out — a client,
	// a training example, a shifted data point: one of the family's canary
	// kinds (AuditSupport.Canaries), the first by default.
	Canary string `yaml:"canary"`
	// View is what the auditor sees — every released model (white-box),
	// the messages on the victim's links: one of the family's views
	// (AuditSupport.Views), the first by default.
	View string `yaml:"view"`
	// Canaries is the expected number of canaries of a one-run audit.
	Canaries int `yaml:"canaries"`
	// Guesses is how many canaries a one-run auditor guesses on, half in
	// at the top of its scores and half out at the bottom; 0 chooses the
	// number from a grid of fractions, paying for the choice with a union
	// bound.
	Guesses int `yaml:"guesses"`
	// Confidence is the confidence of the lower bound.
	Confidence float64 `yaml:"confidence"`
}

// AuditSupport is what a family offers to privacy.audit: the methods, the
// canaries and the views it implements, each list's first being the
// default. Every combination of the three must work on both engines.
type AuditSupport struct {
	Methods  []string
	Canaries []string
	Views    []string
}

// auditMethods are the values of privacy.audit.method.
var auditMethods = []string{AuditOneRun, AuditManyRun}

// defaultAudit is the section's defaults, in place before a file is
// decoded; the method, canary and view are the family's first when the
// scenario leaves them empty (completeAudit).
func defaultAudit() *Audit {
	return &Audit{Canaries: 1000, Confidence: 0.95}
}

// completeAudit drops the section when the scenario does not set it, and
// fills the family's defaults of the fields it leaves empty.
func completeAudit(sc *Scenario, set func(string) bool) {
	p := &sc.Privacy
	if !set(FieldAudit) {
		p.Audit = nil
		return
	}
	f, ok := LookupFamily(sc.Algorithm.Kind)
	if !ok || f.Audit == nil {
		return // refused by validateAudit
	}
	a := p.Audit
	if a.Method == "" {
		a.Method = f.Audit.Methods[0]
	}
	if a.Canary == "" {
		a.Canary = f.Audit.Canaries[0]
	}
	if a.View == "" {
		a.View = f.Audit.Views[0]
	}
}

// validateAudit checks privacy.audit against the family's support and the
// rest of the scenario.
func (v *Validator) validateAudit(sc *Scenario, f Family) {
	a := sc.Privacy.Audit
	if a == nil {
		return
	}
	const field = FieldAudit
	// completeAudit derives them from the curve's family.
	v.Derived(field + ".method")
	v.Derived(field + ".canary")
	v.Derived(field + ".view")
	if f.Audit == nil {
		v.Fail(field, "algorithm.kind %s cannot be audited (audits are modelled by: %s)", f.Kind, strings.Join(familiesWithAudit(), ", "))
		return
	}
	v.OneOf(field+".method", a.Method, auditMethods)
	if slices.Contains(auditMethods, a.Method) && !slices.Contains(f.Audit.Methods, a.Method) {
		v.Fail(field+".method", "algorithm.kind %s offers the methods %s, not %s", f.Kind, strings.Join(f.Audit.Methods, ", "), a.Method)
	}
	v.OneOf(field+".canary", a.Canary, f.Audit.Canaries)
	v.OneOf(field+".view", a.View, f.Audit.Views)
	if !(a.Confidence > 0 && a.Confidence < 1) {
		v.Fail(field+".confidence", "must lie in (0, 1), got %v", a.Confidence)
	}
	switch a.Method {
	case AuditOneRun:
		v.AtLeast(field+".canaries", a.Canaries, 1)
		v.AtLeast(field+".guesses", a.Guesses, 0)
		if a.Guesses > a.Canaries {
			v.Fail(field+".guesses", "guesses on at most the %d canaries, got %d", a.Canaries, a.Guesses)
		}
	case AuditManyRun:
		v.Unused(field+".canaries", "a many-run audit has one canary, in the odd runs and out of the even ones")
		v.Unused(field+".guesses", "a many-run audit scores every run")
		if sc.Runs < 4 {
			v.Fail("runs", "a many-run audit compares runs with the canary (the odd runs) and runs without (the even ones), at least 2 of each: at least 4 runs, got %d", sc.Runs)
		}
	}
}

// familiesWithAudit lists the registered families that can be audited,
// sorted.
func familiesWithAudit() []string {
	var kinds []string
	for _, k := range FamilyKinds() {
		if registered[k].family.Audit != nil {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return []string{"no family"}
	}
	return kinds
}
