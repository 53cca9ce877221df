package scenarios

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
)

// Family is an algorithm family as the scenario loader sees it: the value of
// algorithm.kind that selects it, its parameter section algorithm.<Kind>, its
// defaults and its validation. Families register themselves (from their
// glue package, families/<kind>), so that the loader never switches on the
// algorithm kind and adding a family changes no shared code.
type Family struct {
	// Kind is the value of algorithm.kind that selects the family; it is
	// also the key of its parameter section, algorithm.<Kind>.
	Kind string
	// Summary describes the family in one line.
	Summary string
	// Topology is true when the family needs a topology section; when it is
	// false a topology section is refused.
	Topology bool
	// Schemes lists the privacy.scheme values the family accepts.
	Schemes []string
	// Defaults returns the family's parameter section with every default
	// set: a pointer to a struct whose yaml tags name its fields. It may also
	// set defaults of shared sections of sc (the topology, for example)
	// before the scenario file is decoded over them.
	Defaults func(sc *Scenario) any
	// Complete, if set, fills the defaults that depend on other fields;
	// set reports whether the file, a curve or an override set a field.
	Complete func(sc *Scenario, set func(field string) bool)
	// Validate checks the family's parameters and how they combine with the
	// shared sections, reporting through v.
	Validate func(v *Validator, sc *Scenario)
	// Systems lists the systems fields (FieldStepTime, FieldLoss, …) the
	// family models on both engines, or refuses on one with its own error;
	// a scenario that sets any other is refused, naming the field.
	Systems []string
	// Privacy lists the privacy features (FieldSecureAggregation, FieldDP)
	// the family models on both engines, or refuses on one with its own
	// error; a scenario that sets another is refused, naming the field.
	Privacy []string
	// OwnAccounting, if set, says how the family accounts for privacy
	// itself (random walks report Lemma 1's (ε, δ), say): it has no
	// privacy.accountant section — none by default, and a scenario that sets
	// one is refused with this reason. Without it, a noisy scheme gets the
	// papers' ε(i) accountant (privacy.accountant) by default.
	OwnAccounting string
	// Audit, if set, lists the audits the family implements
	// (privacy.audit): a scenario whose family does not set it, or that
	// asks for a method, canary or view it does not list, is refused.
	Audit *AuditSupport
	// Nodes, if set, returns the number of nodes of the topology and the
	// field that sets it, for a family whose graph does not join the data
	// holders (graph federated learning: the servers). Without it the
	// topology has data.agents nodes.
	Nodes func(sc *Scenario) (n int, field string)
	// NoData, if set, says why the family learns from no data (the Gamma
	// mechanism's curves evaluate a privacy loss): maple data then tells
	// the user so, rather than describe the smallest data set the runner
	// builds for every run.
	NoData string
}

// TopologyNodes returns the number of nodes of the family's topology for sc
// and the field that sets it: f.Nodes, or data.agents.
func (f Family) TopologyNodes(sc *Scenario) (n int, field string) {
	if f.Nodes != nil {
		return f.Nodes(sc)
	}
	return sc.Data.Agents, "data.agents"
}

// registered holds the families by kind, with the type of their parameter
// section.
var registered = map[string]registration{}

type registration struct {
	family Family
	params reflect.Type // the struct type Defaults returns a pointer to
}

// RegisterFamily makes a family available to scenario files. Call it from an
// init function; registering a kind twice, or a family whose Defaults does
// not return a pointer to a struct, panics, as both are programming errors.
func RegisterFamily(f Family) {
	if _, dup := registered[f.Kind]; dup {
		panic("scenarios: family " + f.Kind + " registered twice")
	}
	if f.Defaults == nil || f.Validate == nil {
		panic("scenarios: family " + f.Kind + " needs Defaults and Validate")
	}
	t := reflect.TypeOf(f.Defaults(&Scenario{}))
	if t == nil || t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("scenarios: Defaults of family %s returns %v, not a pointer to a struct", f.Kind, t))
	}
	registered[f.Kind] = registration{family: f, params: t.Elem()}
}

// LookupFamily returns the family registered for kind.
func LookupFamily(kind string) (Family, bool) {
	r, ok := registered[kind]
	return r.family, ok
}

// FamilyKinds lists the registered algorithm kinds, sorted.
func FamilyKinds() []string {
	kinds := make([]string, 0, len(registered))
	for k := range registered {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// paramsType returns the type of the parameter section of kind, or nil.
func paramsType(kind string) reflect.Type {
	return registered[kind].params
}

// validateFamily checks the parts of a scenario that depend on its family.
func (v *Validator) validateFamily(sc *Scenario) {
	f, ok := LookupFamily(sc.Algorithm.Kind)
	if !ok {
		v.OneOf("algorithm.kind", sc.Algorithm.Kind, FamilyKinds())
		return
	}
	if !f.Topology {
		v.Absent("topology", sc.Topology != nil, "algorithm.kind "+f.Kind+" has no topology")
	} else if sc.Topology == nil {
		v.Fail("topology", "algorithm.kind %s needs a topology", f.Kind)
	} else {
		nodes, field := f.TopologyNodes(sc)
		v.validateTopology(sc.Topology, nodes, field)
	}
	if !slices.Contains(f.Schemes, sc.Privacy.Scheme) {
		v.OneOf("privacy.scheme", sc.Privacy.Scheme, f.Schemes)
	}
	if f.OwnAccounting != "" {
		v.Absent("privacy.accountant", sc.Privacy.Accountant != nil, f.OwnAccounting)
	}
	v.validateSystems(sc, f)
	v.validatePrivacyFeatures(sc, f)
	v.validateAudit(sc, f)
	f.Validate(v, sc)
}
