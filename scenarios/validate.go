package scenarios

import (
	"math"
	"slices"
	"strings"

	"maple/privacy/accountant"
	"maple/privacy/homomorphic"
	"maple/privacy/noise"
	"maple/privacy/pairmask"
)

// Names of the values scenario fields accept, where no algorithm package
// defines them.
var (
	dataKinds       = []string{"regression", "logistic", "click", "libsvm", "mixture", "idx", "blobs", "directory"}
	regenerateModes = []string{"per-run", "once"}
	graphKinds      = []string{"geometric", "erdos-renyi", "ring", "grid", "torus", "complete", "star", "small-world", "file", "matrix"}
	weightRules     = []string{"metropolis", "lazy-metropolis", "averaging", "file"}
	keyRandomness   = []string{"seeded", "os"}
	// randomGraphs are the graphs drawn from the run's random streams.
	randomGraphs = []string{"geometric", "erdos-renyi", "small-world"}
)

// graphParams are the topology parameters that belong to some kinds of
// graph only, with a pointer to each in a Topology.
var graphParams = []struct {
	field  string
	graphs []string
	clear  func(t *Topology)
}{
	{"topology.radius", []string{"geometric"}, func(t *Topology) { t.Radius = 0 }},
	{"topology.probability", []string{"erdos-renyi"}, func(t *Topology) { t.Probability = 0 }},
	{"topology.neighbours", []string{"small-world"}, func(t *Topology) { t.Neighbours = 0 }},
	{"topology.rewire", []string{"small-world"}, func(t *Topology) { t.Rewire = 0 }},
	{"topology.rows", []string{"grid", "torus"}, func(t *Topology) { t.Rows = 0 }},
	{"topology.cols", []string{"grid", "torus"}, func(t *Topology) { t.Cols = 0 }},
	{"topology.file", []string{"file"}, func(t *Topology) { t.File = "" }},
}

// lastField returns the last component of a dotted path.
func lastField(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// Validator collects the first problem found in a curve's scenario; families
// report the problems of their fields through it.
type Validator struct {
	c   *CurveSpec
	err *Error
}

// Fail records a problem with field, unless an earlier one was recorded.
func (v *Validator) Fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = v.c.Errorf(field, format, args...)
	}
}

// OneOf checks that value is one of allowed.
func (v *Validator) OneOf(field, value string, allowed []string) {
	if !slices.Contains(allowed, value) {
		v.Fail(field, "unknown value %q (expected one of: %s)", value, strings.Join(allowed, ", "))
	}
}

// Parse records err, the result of parsing field's value, if it is not nil.
func (v *Validator) Parse(field string, err error) {
	if err != nil {
		v.Fail(field, "%v", err)
	}
}

// AtLeast checks value ≥ low.
func (v *Validator) AtLeast(field string, value, low int) {
	if value < low {
		v.Fail(field, "must be at least %d, got %d", low, value)
	}
}

// Positive checks that x is a finite positive number.
func (v *Validator) Positive(field string, x float64) {
	if !(x > 0) || math.IsInf(x, 0) {
		v.Fail(field, "must be a positive number, got %v", x)
	}
}

// NonNegative checks that x is a finite non-negative number.
func (v *Validator) NonNegative(field string, x float64) {
	if !(x >= 0) || math.IsInf(x, 0) {
		v.Fail(field, "must be a non-negative number, got %v", x)
	}
}

// IntRange checks low ≤ r.Min ≤ r.Max.
func (v *Validator) IntRange(field string, r IntRange, low int) {
	if r.Min < low || r.Max < r.Min {
		v.Fail(field, "need %d ≤ min ≤ max, got [%d, %d]", low, r.Min, r.Max)
	}
}

// Absent reports field, a value that does not apply to the scenario, if it
// is present; why says why it does not apply.
func (v *Validator) Absent(field string, present bool, why string) {
	if present {
		v.Fail(field, "does not apply: %s", why)
	}
}

// Unused declares that field does not apply to the scenario, for the reason
// why: a scenario that sets it (its file, a curve or an override) is
// refused, and the resolved copy a run directory keeps (Plan.Marshal)
// leaves it out, so that the copy loads again as the same plan.
func (v *Validator) Unused(field, why string) {
	v.c.omitted = append(v.c.omitted, field)
	v.Absent(field, v.Set(field), why)
}

// Derived declares that field, which the scenario does not set, holds a
// default its family derived from other fields (Family.Complete) that a
// curve may change: the resolved copy a run directory keeps (Plan.Marshal)
// leaves it out, so that each curve of the copy derives it again rather
// than inheriting the value derived for the scenario without its curves.
func (v *Validator) Derived(field string) {
	if !v.Set(field) {
		v.c.omitted = append(v.c.omitted, field)
	}
}

// Set reports whether the scenario (its file, a curve or an override) sets
// field explicitly, as opposed to leaving it to its default.
func (v *Validator) Set(field string) bool {
	_, ok := v.c.pos[field]
	return ok
}

// validate checks a decoded curve scenario for impossible values, filling in
// the defaults that depend on other fields first.
func validate(c *CurveSpec) error {
	fillDependentDefaults(c)
	v := &Validator{c: c}
	sc := c.Scenario
	v.validateName(sc.Name)
	v.AtLeast("runs", sc.Runs, 1)
	v.AtLeast("iterations", sc.Iterations, 1)
	v.validateData(&sc.Data)
	v.validateModel(sc)
	v.Positive("algorithm.step_size", sc.Algorithm.StepSize)
	v.validateFamily(sc)
	v.validatePrivacy(&sc.Privacy)
	v.NonNegative("network.latency", sc.Network.Latency)
	v.NonNegative("network.jitter", sc.Network.Jitter)
	v.NonNegative("network.gradient_time", sc.Network.GradientTime)
	v.AtLeast("output.every", sc.Output.Every, 1)
	v.AtLeast("output.plot_from", sc.Output.PlotFrom, 0)
	if !(sc.Output.SteadyState > 0 && sc.Output.SteadyState <= 1) {
		v.Fail("output.steady_state", "must be a fraction in (0, 1], got %v", sc.Output.SteadyState)
	}
	if v.err != nil {
		return v.err
	}
	return nil
}

// validateName checks the scenario's name, which names the run directory:
// one line of text and no path separator, so that a run directory never
// leaves the output root.
func (v *Validator) validateName(name string) {
	if err := checkText(name, maxNameRunes); err != nil {
		v.Fail("name", "%v", err)
	}
	if strings.ContainsAny(name, `/\`) {
		v.Fail("name", "names the run directory, so it must not contain / or \\, got %q", name)
	}
}

func (v *Validator) validateData(d *Data) {
	v.OneOf("data.kind", d.Kind, dataKinds)
	v.AtLeast("data.agents", d.Agents, 1)
	v.IntRange("data.samples", d.Samples, 1)
	if d.Kind == "idx" || d.Kind == "directory" {
		v.AtLeast("data.dim", d.Dim, 0)
	} else {
		v.AtLeast("data.dim", d.Dim, 1)
	}
	v.OneOf("data.regenerate", d.Regenerate, regenerateModes)
	v.Absent("data.regression", d.Regression != nil && d.Kind != "regression", "data.kind is "+d.Kind)
	v.Absent("data.logistic", d.Logistic != nil && d.Kind != "logistic", "data.kind is "+d.Kind)
	v.Absent("data.click", d.Click != nil && d.Kind != "click", "data.kind is "+d.Kind)
	v.Absent("data.libsvm", d.LIBSVM != nil && d.Kind != "libsvm", "data.kind is "+d.Kind)
	v.Absent("data.mixture", d.Mixture != nil && d.Kind != "mixture", "data.kind is "+d.Kind)
	v.validateDatasets(d)
	switch d.Kind {
	case "regression":
		v.Absent("data.test_samples", d.TestSamples != 0, "regression data have no test set")
		v.Positive("data.regression.covariance_scale", d.Regression.CovarianceScale)
		v.FloatRange("data.regression.noise_variance", d.Regression.NoiseVariance, 0, math.Inf(1))
	case "logistic":
		v.AtLeast("data.test_samples", d.TestSamples, 1)
		v.Positive("data.logistic.covariance_scale", d.Logistic.CovarianceScale)
		v.Positive("data.logistic.score_sd", d.Logistic.ScoreSD)
		v.NonNegative("data.logistic.mean_shift", d.Logistic.MeanShift)
		v.FloatRange("data.logistic.label_flip", d.Logistic.LabelFlip, 0, 0.5)
	case "click":
		v.AtLeast("data.test_samples", d.TestSamples, 1)
		c := d.Click
		v.AtLeast("data.click.active", c.Active, 1)
		if d.Dim < c.Active {
			v.Fail("data.dim", "click data need at least one slot per field: dim %d < click.active %d", d.Dim, c.Active)
		}
		if !(c.ZipfExponent > 1) {
			v.Fail("data.click.zipf_exponent", "must exceed 1, got %v", c.ZipfExponent)
		}
		v.FloatRange("data.click.skew", FloatRange{c.Skew, c.Skew}, 0, 1)
		if !(c.ClickRate > 0 && c.ClickRate < 1) {
			v.Fail("data.click.click_rate", "must lie in (0, 1), got %v", c.ClickRate)
		}
		v.NonNegative("data.click.weight_scale", c.WeightScale)
		v.FloatRange("data.click.noise_variance", c.NoiseVariance, 0, math.Inf(1))
	case "libsvm":
		v.AtLeast("data.test_samples", d.TestSamples, 0)
		if d.LIBSVM.File == "" {
			v.Fail("data.libsvm.file", "libsvm data need the path of a LIBSVM file")
		}
		v.FloatRange("data.libsvm.noise_variance", d.LIBSVM.NoiseVariance, 0, math.Inf(1))
		if d.LIBSVM.TestFile != "" && d.TestSamples > 0 {
			v.Fail("data.test_samples", "data.libsvm.test_file is the test set: hold out no training samples (test_samples 0)")
		}
	case "mixture":
		v.AtLeast("data.test_samples", d.TestSamples, 0)
		if m := d.Mixture; math.IsNaN(m.Mean) || math.IsInf(m.Mean, 0) {
			v.Fail("data.mixture.mean", "must be a finite number, got %v", m.Mean)
		}
		v.Positive("data.mixture.variance", d.Mixture.Variance)
		if p := d.Mixture.Positive; !(p > 0 && p < 1) {
			v.Fail("data.mixture.positive", "must lie in (0, 1), got %v", p)
		}
	}
}

// FloatRange checks lo ≤ r.Min ≤ r.Max ≤ hi.
func (v *Validator) FloatRange(field string, r FloatRange, lo, hi float64) {
	if !(r.Min >= lo && r.Max >= r.Min && r.Max <= hi) {
		v.Fail(field, "need %v ≤ min ≤ max ≤ %v, got [%v, %v]", lo, hi, r.Min, r.Max)
	}
}

// validateTopology checks the topology section of a graph of nodes nodes,
// set by field.
func (v *Validator) validateTopology(t *Topology, nodes int, field string) {
	v.OneOf("topology.graph", t.Graph, graphKinds)
	v.OneOf("topology.weights", t.Weights, weightRules)
	v.OneOf("topology.regenerate", t.Regenerate, regenerateModes)
	v.AtLeast("topology.min_degree", t.MinDegree, 0)
	if t.MinDegree > nodes-1 {
		v.Fail("topology.min_degree", "%d is impossible: a node of a graph of %s = %d nodes has at most %d neighbours", t.MinDegree, field, nodes, nodes-1)
	}
	switch t.Graph {
	case "geometric":
		v.Positive("topology.radius", t.Radius)
	case "erdos-renyi":
		if !(t.Probability > 0 && t.Probability <= 1) {
			v.Fail("topology.probability", "must be in (0, 1], got %v", t.Probability)
		}
	case "small-world":
		v.AtLeast("topology.neighbours", t.Neighbours, 2)
		if !(t.Rewire >= 0 && t.Rewire <= 1) {
			v.Fail("topology.rewire", "must be in [0, 1], got %v", t.Rewire)
		}
	case "grid", "torus":
		if t.Rows*t.Cols != nodes {
			v.Fail("topology.rows", "rows × cols = %d × %d must equal %s = %d", t.Rows, t.Cols, field, nodes)
		}
	case "file":
		if t.File == "" {
			v.Fail("topology.file", "graph file needs the path of an edge list")
		}
	}
	// The parameters of one kind of graph do not apply to another: refused,
	// not ignored. (Defaults of another kind are cleared when the scenario
	// chooses a graph, fillDependentDefaults.)
	for _, p := range graphParams {
		if !slices.Contains(p.graphs, t.Graph) {
			v.Unused(p.field, "graph "+t.Graph+" has no "+lastField(p.field)+" (only "+strings.Join(p.graphs, " and ")+")")
		}
	}
	if !slices.Contains(randomGraphs, t.Graph) {
		v.Absent("topology.regenerate", t.Regenerate == "per-run", "graph "+t.Graph+" is not random: every run would get the same one")
	}
	if t.Weights == "file" && t.Matrix == "" {
		v.Fail("topology.matrix", "weights file needs the path of a matrix file")
	}
	if t.Weights != "file" && t.Matrix != "" {
		v.Fail("topology.matrix", "only applies to weights file")
	}
	if (t.Graph == "matrix") != (t.Weights == "file") {
		v.Fail("topology.graph", "graph matrix (the support of the matrix file) goes with weights file, and only with it")
	}
}

func (v *Validator) validatePrivacy(p *Privacy) {
	_, err := noise.ParseMechanism(p.Mechanism)
	v.Parse("privacy.mechanism", err)
	if p.Scheme != "none" {
		v.Positive("privacy.variance", p.Variance)
	} else {
		v.NonNegative("privacy.variance", p.Variance)
	}
	v.Absent("privacy.self_noise", p.SelfNoise && p.Scheme != "random", "only the random scheme perturbs self terms")
	if p.Form != "" {
		v.Absent("privacy.form", p.Scheme != "graph-homomorphic", "only applies to scheme graph-homomorphic")
		_, err := homomorphic.ParseForm(p.Form)
		v.Parse("privacy.form", err)
	}
	if p.Keys != "" || p.Roles != "" {
		v.Absent("privacy.keys", p.Scheme != "local-graph-homomorphic", "keys and roles only apply to scheme local-graph-homomorphic")
		_, err := pairmask.ParseMode(p.Keys)
		v.Parse("privacy.keys", err)
		_, err = pairmask.ParseRule(p.Roles)
		v.Parse("privacy.roles", err)
	}
	if p.KeyRandomness != "" {
		v.Absent("privacy.key_randomness", p.Scheme != "local-graph-homomorphic", "only local graph-homomorphic noise has key pairs")
		v.OneOf("privacy.key_randomness", p.KeyRandomness, keyRandomness)
		if p.KeyRandomness == "os" && p.Keys != "secure" {
			v.Fail("privacy.key_randomness", "os draws X25519 key pairs, which only privacy.keys secure has (keys is %s)", p.Keys)
		}
	}
	if a := p.Accountant; a != nil {
		v.Positive("privacy.accountant.b", a.B)
		v.Positive("privacy.accountant.b_prime", a.BPrime)
		v.NonNegative("privacy.accountant.epsilon", a.Epsilon)
		norm, err := accountant.ParseNorm(a.Norm)
		v.Parse("privacy.accountant.norm", err)
		if p.Mechanism == "gaussian" {
			if err == nil && norm != accountant.L2 {
				v.Fail("privacy.accountant.norm", "Gaussian noise is accounted with the ℓ2 sensitivity; norm %s only applies to mechanism laplace", a.Norm)
			}
			if !(a.Delta > 0 && a.Delta < 1) {
				v.Fail("privacy.accountant.delta", "must lie in (0, 1), got %v", a.Delta)
			}
		} else {
			v.Absent("privacy.accountant.delta", a.Delta != 0, "the Laplace bound is a pure ε (δ = 0); δ applies to mechanism gaussian")
		}
	}
}
