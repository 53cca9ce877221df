// Package scenarios defines maple's scenario files: the schema, the strict
// loader that turns a YAML file (plus command-line overrides) into resolved,
// validated run plans, and the bundled scenarios that reproduce the papers'
// experiments.
//
// A scenario describes a network, its data, an algorithm, a privacy scheme
// and a schedule. Every field has a documented default; the resolved scenario,
// with every default filled in, is written to each run directory. Sweeps and
// curves turn one file into several curves of the same figure.
package scenarios

// Scenario is one resolved experiment: everything a run needs.
type Scenario struct {
	// Name labels outputs; Description is free text.
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	// Seed is the scenario seed every random stream derives from.
	Seed uint64 `yaml:"seed"`
	// Runs is the number of Monte-Carlo runs averaged per curve.
	Runs int `yaml:"runs"`
	// Iterations is the number of rounds (iterations) of each run.
	Iterations int `yaml:"iterations"`
	// Trace records every message of every run in trace.jsonl.zst.
	Trace bool `yaml:"trace"`

	// Data, Loss and Algorithm are the learning problem and how it is solved.
	Data      Data      `yaml:"data"`
	Loss      Loss      `yaml:"loss"`
	Algorithm Algorithm `yaml:"algorithm"`
	// Topology is the graph (and combination matrix) of the families that
	// have one; it must be absent for the others.
	Topology *Topology `yaml:"topology,omitempty"`
	// Privacy, Network and Output are the privacy scheme, the virtual-time
	// model and what to write.
	Privacy Privacy `yaml:"privacy"`
	Network Network `yaml:"network"`
	Output  Output  `yaml:"output"`

	// Curves and Sweep expand the scenario into several curves; see Plan.
	Curves []Curve `yaml:"curves,omitempty"`
	Sweep  Sweep   `yaml:"sweep,omitempty"`
}

// Data describes the agents' local datasets.
type Data struct {
	// Kind is regression (synthetic linear regression, thesis eq. 2.70),
	// logistic (synthetic dense classification, an ijcnn1 stand-in), click
	// (synthetic sparse click-through data, an Avazu stand-in), libsvm (a
	// user-supplied LIBSVM file split across the agents), mixture (two
	// Gaussian classes, paper 003), idx (an image dataset in MNIST's IDX
	// format), blobs (synthetic multi-class Gaussian clusters) or directory
	// (one file per agent, read as is).
	Kind string `yaml:"kind"`
	// Agents is the number of agents holding data (K for federated learning,
	// P for decentralized learning).
	Agents int `yaml:"agents"`
	// Samples is N_k, fixed or drawn per agent from a range.
	Samples IntRange `yaml:"samples"`
	// Dim is the feature dimension M (the model dimension of the
	// generalized linear losses); 0 for idx and directory data means the
	// files' own.
	Dim int `yaml:"dim"`
	// Regenerate is per-run (fresh data every Monte-Carlo run) or once (the
	// data of run 0 for every run).
	Regenerate string `yaml:"regenerate"`
	// TestSamples is the size of the clean held-out test set of the
	// classification kinds.
	TestSamples int `yaml:"test_samples"`
	// Regression, Logistic, Click, LIBSVM and Mixture hold the parameters
	// of their kinds; only the one matching Kind may be present.
	Regression *Regression `yaml:"regression,omitempty"`
	Logistic   *Logistic   `yaml:"logistic,omitempty"`
	Click      *Click      `yaml:"click,omitempty"`
	LIBSVM     *LIBSVM     `yaml:"libsvm,omitempty"`
	Mixture    *Mixture    `yaml:"mixture,omitempty"`
	// IDX, Blobs and Directory hold the parameters of the idx, blobs and
	// directory kinds (see data.go).
	IDX       *IDX       `yaml:"idx,omitempty"`
	Blobs     *Blobs     `yaml:"blobs,omitempty"`
	Directory *Directory `yaml:"directory,omitempty"`
	// Partition deals pooled data (libsvm, idx, blobs) out to the agents.
	Partition *Partition `yaml:"partition,omitempty"`
	// Transform, for idx images, replaces every image's pixels by fixed
	// features computed from them before the run (see data.go).
	Transform *Transform `yaml:"transform,omitempty"`
}

// Mixture parameterizes two-class Gaussian data: y = ±1, x ~ N(y·Mean·1,
// Variance·I) (paper 003 §V); see algorithms/data.MixtureConfig.
type Mixture struct {
	// Mean is the per-coordinate class mean μ of class +1 (−μ for −1).
	Mean float64 `yaml:"mean"`
	// Variance is the per-coordinate variance ν of both classes.
	Variance float64 `yaml:"variance"`
	// Positive is the probability of the label +1.
	Positive float64 `yaml:"positive"`
}

// Logistic parameterizes synthetic dense classification data with labels
// drawn as Bernoulli(σ(xᵀw⋆)); see algorithms/data.LogisticConfig.
type Logistic struct {
	// CovarianceScale and SharedCovariance shape the features as for
	// regression data.
	CovarianceScale  float64 `yaml:"covariance_scale"`
	SharedCovariance bool    `yaml:"shared_covariance"`
	// ScoreSD is the standard deviation of the clean score xᵀw⋆: it sets how
	// separable the classes are.
	ScoreSD float64 `yaml:"score_sd"`
	// MeanShift is the spread of the agents' feature means (covariate shift).
	MeanShift float64 `yaml:"mean_shift"`
	// LabelFlip is the range agents' label-flip probabilities are drawn from.
	LabelFlip FloatRange `yaml:"label_flip"`
}

// Click parameterizes synthetic sparse click-through data: Active categorical
// fields hashed into data.dim slots; see algorithms/data.ClickConfig.
type Click struct {
	Active       int     `yaml:"active"`
	ZipfExponent float64 `yaml:"zipf_exponent"`
	// Skew is the probability an agent draws a field from its own popularity
	// ranking (non-IID popularity).
	Skew float64 `yaml:"skew"`
	// ClickRate is the click probability of the clean distribution.
	ClickRate   float64 `yaml:"click_rate"`
	WeightScale float64 `yaml:"weight_scale"`
	// NoiseVariance is the range of the per-agent feature-noise variance
	// (the thesis's non-IID device), added to active entries only.
	NoiseVariance FloatRange `yaml:"noise_variance"`
}

// LIBSVM reads a user-supplied LIBSVM/svmlight file and deals it out to the
// agents, data.samples giving the shape of the per-agent sizes.
type LIBSVM struct {
	// File is the path of the file, relative to the scenario.
	File string `yaml:"file"`
	// Hash folds feature indices into data.dim slots (feature hashing);
	// without it indices above data.dim are an error.
	Hash bool `yaml:"hash"`
	// NoiseVariance is the range of the per-agent Gaussian feature noise.
	NoiseVariance FloatRange `yaml:"noise_variance"`
	// TestFile, if set, is a LIBSVM file (relative to the scenario) whose
	// samples, read whole and without noise, are the test set — ijcnn1.t for
	// ijcnn1.tr, say — instead of test_samples held out of File.
	TestFile string `yaml:"test_file,omitempty"`
}

// Regression parameterizes synthetic linear-regression data d = uᵀw⋆ + v.
// The papers leave these unstated; see algorithms/data.RegressionConfig.
type Regression struct {
	// CovarianceScale scales the random factor L of R_u = L Lᵀ.
	CovarianceScale float64 `yaml:"covariance_scale"`
	// SharedCovariance uses one R_u for every agent (paper 001) instead of
	// one per agent (thesis ch. 2).
	SharedCovariance bool `yaml:"shared_covariance"`
	// NoiseVariance is the range σ²_{v,k} is drawn from per agent.
	NoiseVariance FloatRange `yaml:"noise_variance"`
}

// Loss is the regularized loss Q(w; x, y) = ℓ(f_w(x), y) + ρ‖w‖².
type Loss struct {
	// Kind is least-squares, logistic, softmax, mlp or cnn.
	Kind string `yaml:"kind"`
	// Rho is the regularization weight ρ.
	Rho float64 `yaml:"rho"`
	// Classes is the number of classes K of softmax, mlp and cnn.
	Classes int `yaml:"classes,omitempty"`
	// Hidden is the hidden width H of mlp, and Activation its
	// nonlinearity (relu or tanh).
	Hidden     int    `yaml:"hidden,omitempty"`
	Activation string `yaml:"activation,omitempty"`
	// Optimum is solve (compute the minimizer w^o and report the MSD
	// against it) or none (no w^o, no MSD: the only choice for mlp and
	// cnn).
	Optimum string `yaml:"optimum,omitempty"`
	// Architecture names the network of cnn (mcmahan-cnn or
	// papernot-cnn); Layers lists one layer by layer instead.
	Architecture string  `yaml:"architecture,omitempty"`
	Layers       []Layer `yaml:"layers,omitempty"`
	// Image is the shape [channels, height, width] of cnn's input images;
	// by default that of the IDX files' images (one channel).
	Image []int `yaml:"image,omitempty"`
}

// Layer is one layer of a cnn's loss.layers; which fields apply depends on
// its type (see docs/scenarios.md).
type Layer struct {
	// Type is conv, maxpool, avgpool, relu, tanh, tempered-sigmoid,
	// groupnorm or dense.
	Type string `yaml:"type"`
	// Channels is a conv's number of output channels.
	Channels int `yaml:"channels,omitempty"`
	// Kernel, Stride and Padding are a conv's or a pooling's window side,
	// step (default 1 for conv, the kernel for pooling) and zero padding
	// (conv only).
	Kernel  int `yaml:"kernel,omitempty"`
	Stride  int `yaml:"stride,omitempty"`
	Padding int `yaml:"padding,omitempty"`
	// Units is a dense layer's number of outputs.
	Units int `yaml:"units,omitempty"`
	// Groups is a groupnorm's number of channel groups.
	Groups int `yaml:"groups,omitempty"`
	// Scale, Temperature and Offset are the s, T and o of a
	// tempered-sigmoid s·σ(T·x) − o.
	Scale       float64 `yaml:"scale,omitempty"`
	Temperature float64 `yaml:"temperature,omitempty"`
	Offset      float64 `yaml:"offset,omitempty"`
}

// Algorithm selects and parameterizes the learning algorithm.
type Algorithm struct {
	// Kind names a registered family (fedavg, diffusion, …); see
	// FamilyKinds.
	Kind string `yaml:"kind"`
	// StepSize is the step size μ of the family's updates.
	StepSize float64 `yaml:"step_size"`
	// Params is the family's parameter section algorithm.<Kind>: a pointer
	// to the struct the family's Defaults returns. The YAML methods of
	// Algorithm (algorithm.go) read and write it under the key Kind.
	Params any `yaml:"-"`
}

// Topology is the communication graph and combination matrix.
type Topology struct {
	// Graph is geometric, erdos-renyi, ring, grid, torus, complete, star,
	// small-world, file (an edge list) or matrix (the support of the
	// combination matrix of weights file).
	Graph string `yaml:"graph"`
	// Radius is the connection radius of geometric graphs (unit square).
	Radius float64 `yaml:"radius,omitempty"`
	// Probability is the edge probability of erdos-renyi graphs.
	Probability float64 `yaml:"probability,omitempty"`
	// Neighbours is the lattice degree k of small-world graphs and Rewire
	// their rewiring probability β.
	Neighbours int     `yaml:"neighbours,omitempty"`
	Rewire     float64 `yaml:"rewire,omitempty"`
	// Rows and Cols shape grid and torus graphs (Rows·Cols = data.agents).
	Rows int `yaml:"rows,omitempty"`
	Cols int `yaml:"cols,omitempty"`
	// MinDegree is the minimum degree random graphs are redrawn until they
	// reach (local graph-homomorphic noise needs 2).
	MinDegree int `yaml:"min_degree"`
	// File is an edge list for graph file.
	File string `yaml:"file,omitempty"`
	// Weights is metropolis, lazy-metropolis, averaging or file.
	Weights string `yaml:"weights"`
	// Matrix is the combination-matrix file of weights file.
	Matrix string `yaml:"matrix,omitempty"`
	// Regenerate is once (one graph for every run, the papers' "generated
	// network") or per-run.
	Regenerate string `yaml:"regenerate"`
	// LinkFailure is the probability that a link of the graph is down in a
	// round (a time-varying graph): the combination weights are recomputed
	// over the live links by the weights rule.
	LinkFailure float64 `yaml:"link_failure,omitempty"`
}

// Privacy selects the privacy scheme.
type Privacy struct {
	// Scheme is none or one of the schemes the algorithm family accepts
	// (Family.Schemes): for fedavg model-noise or update-noise (thesis
	// eqs. 2.56, 2.59–2.60); for diffusion random, graph-homomorphic or
	// local-graph-homomorphic (paper 001 §III).
	Scheme string `yaml:"scheme"`
	// Mechanism is laplace or gaussian.
	Mechanism string `yaml:"mechanism"`
	// Variance is σ_g², the per-coordinate variance of the noise.
	Variance float64 `yaml:"variance"`
	// SelfNoise also perturbs the self term under the random scheme.
	SelfNoise bool `yaml:"self_noise,omitempty"`
	// Form is the graph-homomorphic construction: ratio-free (valid for
	// every left-stochastic A) or ratio (paper 001 eq. 44, doubly stochastic
	// A only).
	Form string `yaml:"form,omitempty"`
	// Keys is how local graph-homomorphic pairs agree on masks: secure
	// (X25519 + HKDF), paper (U×Gamma construction) or oracle.
	Keys string `yaml:"keys,omitempty"`
	// Roles is how receivers split their neighbours into ± sets:
	// alternating or parity.
	Roles string `yaml:"roles,omitempty"`
	// KeyRandomness is where the X25519 key pairs of local
	// graph-homomorphic noise (keys secure) come from: seeded (the agent's
	// key stream, so that reruns are byte-identical, but anyone with the run
	// seeds of summary.json can recompute every key) or os (the operating
	// system's randomness: secret, but the trace's key bytes change from run
	// to run).
	KeyRandomness string `yaml:"key_randomness,omitempty"`
	// Accountant configures the privacy report. It is present, with its
	// defaults, whenever a scheme adds noise; a scenario may also set it
	// when only some curves add noise (the others report no privacy).
	Accountant *Accountant `yaml:"accountant,omitempty"`
	// SecureAggregation and DP, if present, sum each round's replies with
	// secure aggregation and make the training differentially private at
	// the client level (privacy.go); families that model them say so
	// (Family.Privacy).
	SecureAggregation *SecureAggregation `yaml:"secure_aggregation,omitempty"`
	DP                *DP                `yaml:"dp,omitempty"`
	// Audit, if present, bounds the curve's ε from below with canaries
	// (audit.go); families that can be audited say how (Family.Audit).
	Audit *Audit `yaml:"audit,omitempty"`
}

// Accountant parameterizes the privacy report: the high-probability
// sensitivity bound of the papers' ε(i) formulas, and δ for Gaussian noise.
type Accountant struct {
	// B and BPrime bound ‖w̃_i‖ and ‖w̃′_i‖ (paper 001 eq. 29).
	B      float64 `yaml:"b"`
	BPrime float64 `yaml:"b_prime"`
	// Epsilon, if positive, is a target ε at the final iteration for which
	// the summary reports the σ_g that achieves it.
	Epsilon float64 `yaml:"epsilon,omitempty"`
	// Norm is the vector norm of the Laplace density the ε is stated for:
	// l2 (the papers' convention) or l1 (exact for per-coordinate noise,
	// which multiplies ε by √M). Gaussian noise is accounted in ℓ2.
	Norm string `yaml:"norm"`
	// Delta is the δ of the (ε, δ) guarantee of Gaussian noise, which has
	// no pure ε; it does not apply to Laplace noise (δ = 0).
	Delta float64 `yaml:"delta,omitempty"`
}

// Network is the virtual-time model of links and computation.
type Network struct {
	// Latency is the delay of every message in virtual seconds.
	Latency float64 `yaml:"latency"`
	// Jitter adds a uniform random delay in [0, Jitter) per message.
	Jitter float64 `yaml:"jitter"`
	// GradientTime is the virtual compute time of one sample gradient.
	GradientTime float64 `yaml:"gradient_time"`
	// The fields below are the systems model (docs/systems.md; their
	// types and checks are in systems.go). They are off unless set.
	//
	// Bandwidth, if positive, adds size/bandwidth seconds to every
	// message (bytes per second).
	Bandwidth float64 `yaml:"bandwidth,omitempty"`
	// StepTime is the compute time per local step.
	StepTime *StepTime `yaml:"step_time,omitempty"`
	// Classes are the device classes (slow devices, far devices, …).
	Classes []DeviceClass `yaml:"classes,omitempty"`
	// Loss and Duplicate are the probabilities that a message between two
	// network nodes is lost or delivered twice.
	Loss      float64 `yaml:"loss,omitempty"`
	Duplicate float64 `yaml:"duplicate,omitempty"`
	// Dropout is the probability that an agent given a task does not
	// answer it.
	Dropout float64 `yaml:"dropout,omitempty"`
	// Availability is a CSV file of agent,from,to rows: the windows of
	// virtual time in which each listed agent is available.
	Availability string `yaml:"availability,omitempty"`
	// Crashes makes agents stop for good.
	Crashes *Crashes `yaml:"crashes,omitempty"`
}

// Output controls what a run writes.
type Output struct {
	// Every records metrics every Every iterations (and at the last one).
	Every int `yaml:"every"`
	// SteadyState is the fraction of final iterations averaged for the
	// steady-state values of the summary.
	SteadyState float64 `yaml:"steady_state"`
	// Plot writes PNG and SVG figures of the curves.
	Plot bool `yaml:"plot"`
	// GroupBy, a dotted field set by curves or sweep, draws one figure per
	// value of that field (METRIC-VALUE.png) instead of one with every curve.
	GroupBy string `yaml:"group_by,omitempty"`
	// Linear plots mean-square deviations on a linear axis instead of in dB.
	Linear bool `yaml:"linear,omitempty"`
	// PlotFrom leaves the iterations before it out of the figures (not of
	// metrics.csv), so that a linear axis is not dominated by the transient.
	PlotFrom int `yaml:"plot_from,omitempty"`
	// Baseline names one of the listed curves: the summary gives every
	// curve's steady-state gain over it (its counterpart with the same
	// sweep values).
	Baseline string `yaml:"baseline,omitempty"`
	// Claims maps curve labels to what the paper states about them, copied
	// into their summary beside the measured values.
	Claims map[string]string `yaml:"claims,omitempty"`
	// XAxis is iteration (the default) or time: with time, metrics.csv gains
	// the virtual time of every recorded iteration (column time) and every
	// metric is also drawn against it (METRIC-by-time.png).
	XAxis string `yaml:"x_axis"`
}

// Curve is one explicitly listed curve: a label and the fields it sets.
type Curve struct {
	Label string         `yaml:"label"`
	Set   map[string]any `yaml:"set"`
}
