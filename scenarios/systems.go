package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// StepTime is network.step_time: the compute time of one local step.
type StepTime struct {
	// Kind is fixed, uniform, lognormal or table.
	Kind string `yaml:"kind"`
	// Value is the time per step of fixed.
	Value float64 `yaml:"value,omitempty"`
	// Range bounds the uniform draw.
	Range FloatRange `yaml:"range,omitempty"`
	// Median and Sigma parameterize lognormal: exp(N(ln median, sigma²)).
	Median float64 `yaml:"median,omitempty"`
	Sigma  float64 `yaml:"sigma,omitempty"`
	// File is a CSV of agent,seconds rows, one per agent (table).
	File string `yaml:"file,omitempty"`
	// Redraw is per-agent (one draw per agent: its device's speed) or
	// per-step (a fresh draw at every step), for uniform and lognormal.
	Redraw string `yaml:"redraw,omitempty"`
}

// DeviceClass is one entry of network.classes.
type DeviceClass struct {
	// Name labels the class in summaries.
	Name string `yaml:"name"`
	// Fraction is the share of agents in the class (round(fraction·K)
	// agents, dealt at random).
	Fraction float64 `yaml:"fraction"`
	// Slowdown multiplies every compute time of the class (1: as fast as
	// the rest).
	Slowdown float64 `yaml:"slowdown"`
	// Latency is added to every message to or from the class's devices.
	Latency float64 `yaml:"latency,omitempty"`
	// Bandwidth, if positive, is the class's link bandwidth in bytes per
	// second.
	Bandwidth float64 `yaml:"bandwidth,omitempty"`
	// Dropout, if set, replaces network.dropout for the class.
	Dropout *float64 `yaml:"dropout,omitempty"`
}

// Crashes is network.crashes: agents that stop for good.
type Crashes struct {
	// Rate is the probability per round that a live agent crashes.
	Rate float64 `yaml:"rate,omitempty"`
	// At schedules crashes.
	At []ScheduledCrash `yaml:"at,omitempty"`
}

// ScheduledCrash stops Agent from round Round on.
type ScheduledCrash struct {
	Agent int `yaml:"agent"`
	Round int `yaml:"round"`
}

// stepTimeKinds are the values of network.step_time.kind.
var stepTimeKinds = []string{"fixed", "uniform", "lognormal", "table"}

// xAxes are the values of output.x_axis.
var xAxes = []string{"iteration", "time"}

// Systems fields: the scenario fields of the systems model that an algorithm
// family must model itself (Family.Systems lists those it does). Latency,
// jitter and bandwidth are the engine's and apply to every family.
const (
	FieldStepTime     = "network.step_time"
	FieldClasses      = "network.classes"
	FieldLoss         = "network.loss"
	FieldDuplicate    = "network.duplicate"
	FieldDropout      = "network.dropout"
	FieldAvailability = "network.availability"
	FieldCrashes      = "network.crashes"
	FieldLinkFailure  = "topology.link_failure"
	FieldXAxis        = "output.x_axis"
)

// systemsInUse lists the systems fields sc sets to something other than
// their default, in the order of the constants above.
func systemsInUse(sc *Scenario) []string {
	n := &sc.Network
	var used []string
	for _, f := range []struct {
		field string
		set   bool
	}{
		{FieldStepTime, n.StepTime != nil},
		{FieldClasses, len(n.Classes) > 0},
		{FieldLoss, n.Loss != 0},
		{FieldDuplicate, n.Duplicate != 0},
		{FieldDropout, n.Dropout != 0},
		{FieldAvailability, n.Availability != ""},
		{FieldCrashes, n.Crashes != nil},
		{FieldLinkFailure, sc.Topology != nil && sc.Topology.LinkFailure != 0},
		{FieldXAxis, sc.Output.XAxis == "time"},
	} {
		if f.set {
			used = append(used, f.field)
		}
	}
	return used
}

// UsesSystems reports whether sc sets any systems field the family must
// model (see Family.Systems).
func UsesSystems(sc *Scenario) bool { return len(systemsInUse(sc)) > 0 }

// validateSystems checks the systems fields of the network section and
// refuses those the family f does not model.
func (v *Validator) validateSystems(sc *Scenario, f Family) {
	n := &sc.Network
	v.NonNegative("network.bandwidth", n.Bandwidth)
	v.probability("network.loss", n.Loss)
	v.probability("network.duplicate", n.Duplicate)
	v.probability("network.dropout", n.Dropout)
	if st := n.StepTime; st != nil {
		v.validateStepTime(st)
	}
	v.validateClasses(n.Classes)
	if c := n.Crashes; c != nil {
		v.probability("network.crashes.rate", c.Rate)
		if c.Rate == 0 && len(c.At) == 0 {
			v.Fail("network.crashes", "needs a rate or a list of scheduled crashes (at)")
		}
		seen := map[int]bool{}
		for i, at := range c.At {
			field := fmt.Sprintf("network.crashes.at[%d]", i)
			if at.Agent < 0 || at.Agent >= sc.Data.Agents {
				v.Fail(field+".agent", "agent %d does not exist (data.agents = %d)", at.Agent, sc.Data.Agents)
			}
			if seen[at.Agent] {
				v.Fail(field+".agent", "agent %d is scheduled to crash twice", at.Agent)
			}
			seen[at.Agent] = true
			v.AtLeast(field+".round", at.Round, 1)
		}
	}
	if t := sc.Topology; t != nil && !(t.LinkFailure >= 0 && t.LinkFailure < 1) {
		v.Fail("topology.link_failure", "must be a probability in [0, 1), got %v", t.LinkFailure)
	}
	v.OneOf("output.x_axis", sc.Output.XAxis, xAxes)
	for _, field := range systemsInUse(sc) {
		if !slices.Contains(f.Systems, field) {
			v.Fail(field, "algorithm.kind %s does not model it (it is modelled by: %s)", f.Kind, strings.Join(familiesModelling(field), ", "))
		}
	}
}

// familiesModelling lists the registered families that model a systems
// field, sorted.
func familiesModelling(field string) []string {
	var kinds []string
	for _, k := range FamilyKinds() {
		if slices.Contains(registered[k].family.Systems, field) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return []string{"no family"}
	}
	return kinds
}

// probability checks that x is a probability.
func (v *Validator) probability(field string, x float64) {
	if !(x >= 0 && x <= 1) {
		v.Fail(field, "must be a probability in [0, 1], got %v", x)
	}
}

func (v *Validator) validateStepTime(st *StepTime) {
	const f = "network.step_time"
	v.OneOf(f+".kind", st.Kind, stepTimeKinds)
	has := map[string]bool{
		"value": st.Value != 0 || v.Set(f+".value"), "range": v.Set(f + ".range"),
		"median": v.Set(f + ".median"), "sigma": v.Set(f + ".sigma"), "file": st.File != "",
		"redraw": v.Set(f + ".redraw"),
	}
	needs := map[string][]string{
		"fixed": {"value"}, "uniform": {"range", "redraw"}, "lognormal": {"median", "sigma", "redraw"}, "table": {"file"},
	}[st.Kind]
	for _, p := range []string{"value", "range", "median", "sigma", "file", "redraw"} {
		if has[p] && !slices.Contains(needs, p) {
			v.Fail(f+"."+p, "does not apply to kind %s (it takes %s)", st.Kind, strings.Join(needs, ", "))
		}
	}
	switch st.Kind {
	case "fixed":
		v.NonNegative(f+".value", st.Value)
	case "uniform":
		if !v.Set(f + ".range") {
			v.Fail(f+".range", "kind uniform needs a range [min, max]")
		}
		v.FloatRange(f+".range", st.Range, 0, math.MaxFloat64)
	case "lognormal":
		v.Positive(f+".median", st.Median)
		v.NonNegative(f+".sigma", st.Sigma)
	case "table":
		if st.File == "" {
			v.Fail(f+".file", "kind table needs the path of a CSV file of agent,seconds rows")
		}
	}
	if st.Redraw != "" {
		v.OneOf(f+".redraw", st.Redraw, []string{"per-agent", "per-step"})
	}
}

func (v *Validator) validateClasses(classes []DeviceClass) {
	total := 0.0
	names := map[string]bool{}
	for i, c := range classes {
		f := fmt.Sprintf("network.classes[%d]", i)
		if c.Name == "" {
			v.Fail(f+".name", "every class needs a name")
		}
		if names[c.Name] {
			v.Fail(f+".name", "two classes are named %q", c.Name)
		}
		names[c.Name] = true
		v.probability(f+".fraction", c.Fraction)
		v.Positive(f+".slowdown", c.Slowdown)
		v.NonNegative(f+".latency", c.Latency)
		v.NonNegative(f+".bandwidth", c.Bandwidth)
		if c.Dropout != nil {
			v.probability(f+".dropout", *c.Dropout)
		}
		total += c.Fraction
	}
	if total > 1+1e-12 {
		v.Fail("network.classes", "the classes' fractions add up to %v, more than 1", total)
	}
}

// completeSystems fills the defaults of the systems fields that the file
// leaves unset: a class's slowdown is 1, a step time drawn per agent.
func completeSystems(sc *Scenario, set func(string) bool) {
	n := &sc.Network
	for i := range n.Classes {
		if !set(fmt.Sprintf("network.classes[%d].slowdown", i)) {
			n.Classes[i].Slowdown = 1
		}
	}
	if st := n.StepTime; st != nil && st.Redraw == "" && (st.Kind == "uniform" || st.Kind == "lognormal") {
		st.Redraw = "per-agent"
	}
}
