package scenarios

import (
	"slices"

	"maple/privacy/accountant"
)

// defaultAlgorithm is the algorithm kind of a scenario that names none.
const defaultAlgorithm = "fedavg"

// defaults returns the scenario every file is decoded over, for the given
// algorithm and data kinds (empty strings select fedavg and regression). Only
// the sections that apply to those kinds are present, so the resolved
// scenario lists exactly the parameters in effect; the algorithm family's
// Defaults fills its parameter section and any shared default it changes.
//
// The papers leave many parameters unstated; the defaults below are the
// choices documented in docs/scenarios.md and in the specs' [sanity-sim]
// notes (random geometric graph of radius 0.3, Metropolis weights, R_u = LLᵀ,
// noise variances U(0.1, 1.1)).
func defaults(algorithm, data string) *Scenario {
	algorithm = kindOrDefault(algorithm)
	if data == "" {
		data = "regression"
	}
	sc := &Scenario{
		Seed:       1,
		Runs:       1,
		Iterations: 100,
		Data: Data{
			Kind:       data,
			Agents:     10,
			Samples:    IntRange{100, 100},
			Dim:        2,
			Regenerate: "per-run",
		},
		Loss:      Loss{Kind: "least-squares", Rho: 0.001},
		Algorithm: Algorithm{Kind: algorithm, StepSize: 0.01},
		Privacy:   Privacy{Scheme: "none", Mechanism: "laplace", Variance: 0.01, SecureAggregation: defaultSecureAggregation(), DP: defaultDP(), Audit: defaultAudit()},
		Output:    Output{Every: 1, SteadyState: 0.1, Plot: true, XAxis: "iteration"},
	}
	switch data {
	case "regression":
		sc.Data.Regression = &Regression{CovarianceScale: 1, NoiseVariance: FloatRange{0.1, 1.1}}
	case "logistic":
		sc.Data.Dim, sc.Data.TestSamples = 22, 1000
		sc.Data.Logistic = &Logistic{CovarianceScale: 1, ScoreSD: 3, MeanShift: 0.5, LabelFlip: FloatRange{0, 0.1}}
	case "click":
		sc.Data.Dim, sc.Data.TestSamples = 1024, 256
		sc.Data.Click = &Click{Active: 8, ZipfExponent: 1.2, Skew: 0.3, ClickRate: 0.17, WeightScale: 0.5, NoiseVariance: FloatRange{0.01, 0.25}}
	case "libsvm":
		sc.Data.TestSamples = 256
		sc.Data.LIBSVM = &LIBSVM{}
	case "idx":
		sc.Data.Dim = 0
		sc.Data.IDX = &IDX{Scale: "unit"}
	case "blobs":
		sc.Data.Dim, sc.Data.TestSamples = 10, 1000
		sc.Data.Blobs = &Blobs{Separation: 1}
	case "directory":
		sc.Data.Dim = 0
		sc.Data.Directory = &Directory{Format: "csv"}
	case "mixture":
		sc.Data.Dim, sc.Data.TestSamples = 10, 1000
		sc.Data.Mixture = &Mixture{Mean: 1, Variance: 1, Positive: 0.5}
	}
	if slices.Contains(pooledKinds, data) {
		sc.Data.Partition = &Partition{Kind: "iid"}
	}
	switch data {
	case "regression":
	case "idx", "blobs":
		sc.Loss.Kind = "softmax"
	default:
		sc.Loss.Kind = "logistic"
	}
	f, ok := LookupFamily(algorithm)
	if !ok || f.OwnAccounting == "" {
		// A family with its own accounting has no accountant section.
		sc.Privacy.Accountant = defaultAccountant()
	}
	if ok {
		sc.Algorithm.Params = f.Defaults(sc)
	}
	return sc
}

// fillDependentDefaults sets the defaults that depend on other fields, for
// fields the scenario does not set itself.
func fillDependentDefaults(c *CurveSpec) {
	sc := c.Scenario
	set := func(field string) bool { _, ok := c.pos[field]; return ok }
	completePrivacy(sc, set)
	completeAudit(sc, set)
	if f, ok := LookupFamily(sc.Algorithm.Kind); ok && f.Complete != nil {
		f.Complete(sc, set)
	}
	if t := sc.Topology; t != nil {
		// A family's default graph comes with its parameters (a radius, a
		// probability); a scenario choosing another graph drops them.
		for _, p := range graphParams {
			if !slices.Contains(p.graphs, t.Graph) && !set(p.field) {
				p.clear(t)
			}
		}
	}
	if l := sc.Data.LIBSVM; l != nil && l.TestFile != "" && !set("data.test_samples") {
		sc.Data.TestSamples = 0 // the test file is the test set
	}
	switch sc.Privacy.Scheme {
	case "graph-homomorphic":
		if sc.Privacy.Form == "" {
			sc.Privacy.Form = "ratio-free"
		}
	case "local-graph-homomorphic":
		if sc.Privacy.Keys == "" {
			sc.Privacy.Keys = "secure"
		}
		if sc.Privacy.Roles == "" {
			sc.Privacy.Roles = "alternating"
		}
		if sc.Privacy.KeyRandomness == "" {
			sc.Privacy.KeyRandomness = "seeded"
		}
		if sc.Topology != nil && !set("topology.min_degree") {
			sc.Topology.MinDegree = 2
		}
	}
	completeModel(sc, set)
	completeSystems(sc, set)
	// The accountant's defaults are in place before the file is decoded, so
	// that a file setting one of its keys keeps the defaults of the others.
	// Without noise, or without an optimum w^o to state the bound with, it
	// only stays when the scenario asks for it.
	if a := sc.Privacy.Accountant; a != nil {
		switch {
		case (sc.Privacy.Scheme == "none" || sc.Loss.Optimum != "solve") && !set("privacy.accountant"):
			sc.Privacy.Accountant = nil
		case sc.Privacy.Mechanism == "gaussian" && !set("privacy.accountant.delta"):
			a.Delta = DefaultDelta
		}
	}
}

// DefaultDelta is the δ of the (ε, δ) report of Gaussian noise when the
// scenario does not set privacy.accountant.delta: far below 1/K for the
// agent counts of the papers (K ≤ 1000), as a δ must be to mean anything.
const DefaultDelta = 1e-5

// defaultAccountant returns the accountant's documented defaults: the
// papers' B = B′ = 1 and their ℓ2 norm convention.
func defaultAccountant() *Accountant {
	return &Accountant{B: 1, BPrime: 1, Norm: accountant.L2.String()}
}

// completeModel fills the defaults of the loss and data fields that depend
// on the loss kind or the partition kind.
func completeModel(sc *Scenario, set func(string) bool) {
	l := &sc.Loss
	if l.Kind == "softmax" || l.Kind == "mlp" || l.Kind == "cnn" {
		if !set("loss.classes") {
			l.Classes = 10
			if sc.Data.Kind == "blobs" {
				l.Classes = 3
			}
		}
		if l.Kind == "mlp" && !set("loss.hidden") {
			l.Hidden = 100
		}
		if l.Kind == "mlp" && !set("loss.activation") {
			l.Activation = "relu"
		}
	}
	if !set("loss.optimum") {
		l.Optimum = "solve"
		if l.Kind == "mlp" || l.Kind == "cnn" {
			l.Optimum = "none"
		}
	}
	for i := range l.Layers {
		ly := &l.Layers[i]
		switch {
		case ly.Stride != 0:
		case ly.Type == "conv":
			ly.Stride = 1
		case ly.Type == "maxpool" || ly.Type == "avgpool":
			ly.Stride = ly.Kernel
		}
	}
	if l.Kind == "least-squares" && slices.Contains([]string{"libsvm", "directory"}, sc.Data.Kind) && !set("data.test_samples") {
		sc.Data.TestSamples = 0 // real targets: no classification test set
	}
	if t := sc.Data.Transform; t != nil && t.Kind == "scatternet" {
		// Tramèr & Boneh's features of 28×28 images: J = 2, L = 8, order 2.
		if !set("data.transform.scales") {
			t.Scales = 2
		}
		if !set("data.transform.angles") {
			t.Angles = 8
		}
		if !set("data.transform.order") {
			t.Order = 2
		}
	}
	if p := sc.Data.Partition; p != nil {
		switch {
		case p.Kind == "dirichlet" && !set("data.partition.alpha"):
			p.Alpha = 0.5
		case p.Kind == "shards" && !set("data.partition.shards"):
			p.Shards = 2
		case p.Kind == "quantity" && !set("data.partition.sigma"):
			p.Sigma = 1
		}
	}
}
