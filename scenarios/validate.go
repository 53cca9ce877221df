package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"maple/algorithms/diffusion"
	"maple/algorithms/fedavg"
	"maple/algorithms/loss"
	"maple/privacy/accountant"
	"maple/privacy/homomorphic"
	"maple/privacy/noise"
	"maple/privacy/pairmask"
)

// Names of the values scenario fields accept, where no algorithm package
// defines them.
var (
	algorithmKinds  = []string{"fedavg", "diffusion"}
	dataKinds       = []string{"regression", "logistic", "click", "libsvm"}
	regenerateModes = []string{"per-run", "once"}
	fedavgSchemes   = []string{"none", "model-noise", "update-noise"}
	graphKinds      = []string{"geometric", "erdos-renyi", "ring", "grid", "torus", "complete", "star", "small-world", "file", "matrix"}
	weightRules     = []string{"metropolis", "lazy-metropolis", "averaging", "file"}
)

// validator collects the first problem found in a curve's scenario.
type validator struct {
	c   *CurveSpec
	err *Error
}

func (v *validator) fail(field, format string, args ...any) {
	if v.err == nil {
		v.err = v.c.Errorf(field, format, args...)
	}
}

func (v *validator) oneOf(field, value string, allowed []string) {
	if !slices.Contains(allowed, value) {
		v.fail(field, "unknown value %q (expected one of: %s)", value, strings.Join(allowed, ", "))
	}
}

func (v *validator) parse(field string, err error) {
	if err != nil {
		v.fail(field, "%v", err)
	}
}

func (v *validator) atLeast(field string, value, low int) {
	if value < low {
		v.fail(field, "must be at least %d, got %d", low, value)
	}
}

func (v *validator) positive(field string, x float64) {
	if !(x > 0) || math.IsInf(x, 0) {
		v.fail(field, "must be a positive number, got %v", x)
	}
}

func (v *validator) nonNegative(field string, x float64) {
	if !(x >= 0) || math.IsInf(x, 0) {
		v.fail(field, "must be a non-negative number, got %v", x)
	}
}

func (v *validator) intRange(field string, r IntRange, low int) {
	if r.Min < low || r.Max < r.Min {
		v.fail(field, "need %d ≤ min ≤ max, got [%d, %d]", low, r.Min, r.Max)
	}
}

// absent reports a section that does not apply to the scenario's kind.
func (v *validator) absent(field string, present bool, why string) {
	if present {
		v.fail(field, "does not apply: %s", why)
	}
}

// validate checks a decoded curve scenario for impossible values, filling in
// the defaults that depend on other fields first.
func validate(c *CurveSpec) error {
	fillDependentDefaults(c)
	v := &validator{c: c}
	sc := c.Scenario
	v.atLeast("runs", sc.Runs, 1)
	v.atLeast("iterations", sc.Iterations, 1)
	v.validateData(&sc.Data)
	_, err := loss.ParseKind(sc.Loss.Kind)
	v.parse("loss.kind", err)
	v.nonNegative("loss.rho", sc.Loss.Rho)
	if sc.Data.Kind == "regression" && sc.Loss.Kind != "least-squares" {
		v.fail("loss.kind", "regression data need loss least-squares, got %s", sc.Loss.Kind)
	}
	if sc.Data.Kind != "regression" && sc.Loss.Kind != "logistic" {
		v.fail("loss.kind", "classification data (kind %s) need loss logistic, got %s", sc.Data.Kind, sc.Loss.Kind)
	}
	v.oneOf("algorithm.kind", sc.Algorithm.Kind, algorithmKinds)
	v.positive("algorithm.step_size", sc.Algorithm.StepSize)
	switch sc.Algorithm.Kind {
	case "fedavg":
		v.absent("algorithm.diffusion", sc.Algorithm.Diffusion != nil, "algorithm.kind is fedavg")
		v.absent("topology", sc.Topology != nil, "federated averaging has no topology")
		v.validateFedAvg(sc)
		v.oneOf("privacy.scheme", sc.Privacy.Scheme, fedavgSchemes)
	case "diffusion":
		v.absent("algorithm.fedavg", sc.Algorithm.FedAvg != nil, "algorithm.kind is diffusion")
		v.validateDiffusion(sc)
		_, err := diffusion.ParseScheme(sc.Privacy.Scheme)
		v.parse("privacy.scheme", err)
	}
	v.validatePrivacy(&sc.Privacy)
	v.nonNegative("network.latency", sc.Network.Latency)
	v.nonNegative("network.jitter", sc.Network.Jitter)
	v.nonNegative("network.gradient_time", sc.Network.GradientTime)
	v.atLeast("output.every", sc.Output.Every, 1)
	if !(sc.Output.SteadyState > 0 && sc.Output.SteadyState <= 1) {
		v.fail("output.steady_state", "must be a fraction in (0, 1], got %v", sc.Output.SteadyState)
	}
	if v.err != nil {
		return v.err
	}
	return nil
}

func (v *validator) validateData(d *Data) {
	v.oneOf("data.kind", d.Kind, dataKinds)
	v.atLeast("data.agents", d.Agents, 1)
	v.intRange("data.samples", d.Samples, 1)
	v.atLeast("data.dim", d.Dim, 1)
	v.oneOf("data.regenerate", d.Regenerate, regenerateModes)
	v.absent("data.regression", d.Regression != nil && d.Kind != "regression", "data.kind is "+d.Kind)
	v.absent("data.logistic", d.Logistic != nil && d.Kind != "logistic", "data.kind is "+d.Kind)
	v.absent("data.click", d.Click != nil && d.Kind != "click", "data.kind is "+d.Kind)
	v.absent("data.libsvm", d.LIBSVM != nil && d.Kind != "libsvm", "data.kind is "+d.Kind)
	switch d.Kind {
	case "regression":
		v.absent("data.test_samples", d.TestSamples != 0, "regression data have no test set")
		v.positive("data.regression.covariance_scale", d.Regression.CovarianceScale)
		v.floatRange("data.regression.noise_variance", d.Regression.NoiseVariance, 0, math.Inf(1))
	case "logistic":
		v.atLeast("data.test_samples", d.TestSamples, 1)
		v.positive("data.logistic.covariance_scale", d.Logistic.CovarianceScale)
		v.positive("data.logistic.score_sd", d.Logistic.ScoreSD)
		v.nonNegative("data.logistic.mean_shift", d.Logistic.MeanShift)
		v.floatRange("data.logistic.label_flip", d.Logistic.LabelFlip, 0, 0.5)
	case "click":
		v.atLeast("data.test_samples", d.TestSamples, 1)
		c := d.Click
		v.atLeast("data.click.active", c.Active, 1)
		if d.Dim < c.Active {
			v.fail("data.dim", "click data need at least one slot per field: dim %d < click.active %d", d.Dim, c.Active)
		}
		if !(c.ZipfExponent > 1) {
			v.fail("data.click.zipf_exponent", "must exceed 1, got %v", c.ZipfExponent)
		}
		v.floatRange("data.click.skew", FloatRange{c.Skew, c.Skew}, 0, 1)
		if !(c.ClickRate > 0 && c.ClickRate < 1) {
			v.fail("data.click.click_rate", "must lie in (0, 1), got %v", c.ClickRate)
		}
		v.nonNegative("data.click.weight_scale", c.WeightScale)
		v.floatRange("data.click.noise_variance", c.NoiseVariance, 0, math.Inf(1))
	case "libsvm":
		v.atLeast("data.test_samples", d.TestSamples, 0)
		if d.LIBSVM.File == "" {
			v.fail("data.libsvm.file", "libsvm data need the path of a LIBSVM file")
		}
		v.floatRange("data.libsvm.noise_variance", d.LIBSVM.NoiseVariance, 0, math.Inf(1))
	}
}

// floatRange checks lo ≤ min ≤ max ≤ hi.
func (v *validator) floatRange(field string, r FloatRange, lo, hi float64) {
	if !(r.Min >= lo && r.Max >= r.Min && r.Max <= hi) {
		v.fail(field, "need %v ≤ min ≤ max ≤ %v, got [%v, %v]", lo, hi, r.Min, r.Max)
	}
}

func (v *validator) validateFedAvg(sc *Scenario) {
	fa := sc.Algorithm.FedAvg
	_, err := fedavg.ParseParticipation(fa.Participation)
	v.parse("algorithm.fedavg.participation", err)
	v.atLeast("algorithm.fedavg.participants", fa.Participants, 1)
	if fa.Participation == fedavg.WithoutReplacement.String() && fa.Participants > sc.Data.Agents {
		v.fail("algorithm.fedavg.participants", "%d agents cannot be sampled without replacement from data.agents = %d", fa.Participants, sc.Data.Agents)
	}
	v.intRange("algorithm.fedavg.local_steps", fa.LocalSteps, 1)
	v.intRange("algorithm.fedavg.batch", fa.Batch, 1)
	v.oneOf("algorithm.fedavg.batch_sampling", fa.BatchSampling, []string{"without-replacement", "with-replacement"})
	if fa.BatchSampling == "without-replacement" && fa.Batch.Max > sc.Data.Samples.Min {
		v.fail("algorithm.fedavg.batch", "mini-batches of up to %d distinct samples need every agent to hold that many, but data.samples can be as low as %d", fa.Batch.Max, sc.Data.Samples.Min)
	}
	_, err = fedavg.ParseSchedule(fa.Schedule)
	v.parse("algorithm.fedavg.schedule", err)
	if fa.Server == "" {
		v.fail("algorithm.fedavg.server", "must name a server behaviour (mean, median, …)")
	}
}

func (v *validator) validateDiffusion(sc *Scenario) {
	d := sc.Algorithm.Diffusion
	_, err := diffusion.ParseStrategy(d.Strategy)
	v.parse("algorithm.diffusion.strategy", err)
	for i, s := range d.Stages {
		_, err := diffusion.ParseStage(s)
		v.parse(fmt.Sprintf("algorithm.diffusion.stages[%d]", i), err)
	}
	switch {
	case d.Strategy == "general" && len(d.Stages) == 0:
		v.fail("algorithm.diffusion.stages", "strategy general needs the list of stages that use A (a0, a1, a2)")
	case d.Strategy != "general" && len(d.Stages) > 0:
		v.fail("algorithm.diffusion.stages", "only applies to strategy general (strategy %s fixes its stages)", d.Strategy)
	}
	_, err = diffusion.ParseGradient(d.Gradient)
	v.parse("algorithm.diffusion.gradient", err)
	if d.Gradient == "batch" {
		v.atLeast("algorithm.diffusion.batch", d.Batch, 1)
		if d.Batch > sc.Data.Samples.Min {
			v.fail("algorithm.diffusion.batch", "batches of %d distinct samples need every agent to hold that many, but data.samples can be as low as %d", d.Batch, sc.Data.Samples.Min)
		}
	} else if d.Batch != 0 {
		v.fail("algorithm.diffusion.batch", "only applies to gradient batch")
	}
	if sc.Topology == nil {
		v.fail("topology", "diffusion needs a topology")
		return
	}
	v.validateTopology(sc.Topology, sc.Data.Agents)
}

func (v *validator) validateTopology(t *Topology, agents int) {
	v.oneOf("topology.graph", t.Graph, graphKinds)
	v.oneOf("topology.weights", t.Weights, weightRules)
	v.oneOf("topology.regenerate", t.Regenerate, regenerateModes)
	v.atLeast("topology.min_degree", t.MinDegree, 0)
	switch t.Graph {
	case "geometric":
		v.positive("topology.radius", t.Radius)
	case "erdos-renyi":
		if !(t.Probability > 0 && t.Probability <= 1) {
			v.fail("topology.probability", "must be in (0, 1], got %v", t.Probability)
		}
	case "small-world":
		v.atLeast("topology.neighbours", t.Neighbours, 2)
		if !(t.Rewire >= 0 && t.Rewire <= 1) {
			v.fail("topology.rewire", "must be in [0, 1], got %v", t.Rewire)
		}
	case "grid", "torus":
		if t.Rows*t.Cols != agents {
			v.fail("topology.rows", "rows × cols = %d × %d must equal data.agents = %d", t.Rows, t.Cols, agents)
		}
	case "file":
		if t.File == "" {
			v.fail("topology.file", "graph file needs the path of an edge list")
		}
	}
	if t.Weights == "file" && t.Matrix == "" {
		v.fail("topology.matrix", "weights file needs the path of a matrix file")
	}
	if t.Weights != "file" && t.Matrix != "" {
		v.fail("topology.matrix", "only applies to weights file")
	}
	if (t.Graph == "matrix") != (t.Weights == "file") {
		v.fail("topology.graph", "graph matrix (the support of the matrix file) goes with weights file, and only with it")
	}
}

func (v *validator) validatePrivacy(p *Privacy) {
	_, err := noise.ParseMechanism(p.Mechanism)
	v.parse("privacy.mechanism", err)
	if p.Scheme != "none" {
		v.positive("privacy.variance", p.Variance)
	} else {
		v.nonNegative("privacy.variance", p.Variance)
	}
	v.absent("privacy.self_noise", p.SelfNoise && p.Scheme != "random", "only the random scheme perturbs self terms")
	if p.Form != "" {
		v.absent("privacy.form", p.Scheme != "graph-homomorphic", "only applies to scheme graph-homomorphic")
		_, err := homomorphic.ParseForm(p.Form)
		v.parse("privacy.form", err)
	}
	if p.Keys != "" || p.Roles != "" {
		v.absent("privacy.keys", p.Scheme != "local-graph-homomorphic", "keys and roles only apply to scheme local-graph-homomorphic")
		_, err := pairmask.ParseMode(p.Keys)
		v.parse("privacy.keys", err)
		_, err = pairmask.ParseRule(p.Roles)
		v.parse("privacy.roles", err)
	}
	if a := p.Accountant; a != nil {
		v.absent("privacy.accountant", p.Scheme == "none", "there is no privacy noise to account for")
		v.positive("privacy.accountant.b", a.B)
		v.positive("privacy.accountant.b_prime", a.BPrime)
		v.nonNegative("privacy.accountant.epsilon", a.Epsilon)
		_, err := accountant.ParseNorm(a.Norm)
		v.parse("privacy.accountant.norm", err)
	}
}
