package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"gonum.org/v1/gonum/floats"
	"gopkg.in/yaml.v3"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/scenarios"
)

// Problem is the learning problem of one Monte-Carlo run: the agents' data,
// the loss and the minimizer w^o that deviations are measured against.
type Problem struct {
	// Sets are the agents' data and Test the test set (nil for regression).
	Sets []*data.Set
	Test *data.Set
	// Loss is the model's loss, WOpt the minimizer w^o (nil with
	// loss.optimum none) and Solver how it was found.
	Loss   loss.Loss
	WOpt   []float64
	Solver optimum.Report
	// summary describes how the samples are spread over the agents.
	summary data.PartitionSummary
}

// problemCache keeps the last problem a worker built. Jobs come in (run,
// curve) order and the curves of a run share its data seed, so consecutive
// jobs usually need the same data and optimum: building them once per run
// instead of once per curve. Problems are read-only once built.
type problemCache struct {
	key string
	p   *Problem
}

// get returns the problem of curve c for the data seed, building it unless
// the previous call had the same data, loss and seed.
func (pc *problemCache) get(ctx context.Context, c *scenarios.CurveSpec, dir string, seed uint64) (*Problem, error) {
	spec, err := yaml.Marshal(struct {
		Data scenarios.Data
		Loss scenarios.Loss
	}{c.Scenario.Data, c.Scenario.Loss})
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%s", dir, seed, spec)
	if pc.p == nil || pc.key != key {
		pc.p = nil // the previous problem can be collected while this one is built
		p, err := BuildProblem(ctx, c, dir, seed)
		if err != nil {
			return nil, err
		}
		pc.key, pc.p = key, p
	}
	return pc.p, nil
}

// BuildProblem generates (or reads and splits) the data of a run and, unless
// loss.optimum is none, solves for w^o, the minimizer of the uniformly
// averaged risk (1/K) Σ_k J_k (thesis eq. 2.1, paper 001 eq. 1). Once ctx
// is done the reading and the solve stop with an error.
func BuildProblem(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64) (*Problem, error) {
	p, err := buildData(ctx, c, dir, runSeed)
	if err != nil || c.Scenario.Loss.Optimum == "none" {
		return p, err
	}
	p.WOpt, p.Solver, err = optimum.SolveContext(ctx, p.Loss, p.Sets, optimum.Uniform(len(p.Sets)))
	if err != nil {
		return nil, c.Errorf("loss", "cannot compute the minimizer w^o: %v", err)
	}
	return p, nil
}

// buildData generates (or reads and deals out) the data of a run and sets up
// the model, without solving for w^o.
func buildData(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64) (*Problem, error) {
	sc := c.Scenario
	l, err := modelLoss(c)
	if err != nil {
		return nil, err
	}
	p := &Problem{Loss: l}
	d := &sc.Data
	switch d.Kind {
	case "regression":
		cfg := data.RegressionConfig{
			Agents: d.Agents, SamplesMin: d.Samples.Min, SamplesMax: d.Samples.Max, Dim: d.Dim,
			CovScale: d.Regression.CovarianceScale, SharedCovariance: d.Regression.SharedCovariance,
			NoiseVarMin: d.Regression.NoiseVariance.Min, NoiseVarMax: d.Regression.NoiseVariance.Max,
		}
		if err := cfg.Validate(); err != nil {
			return nil, c.Errorf("data", "%v", err)
		}
		p.Sets, _ = data.Regression(cfg, runSeed)
	case "logistic":
		l := d.Logistic
		cfg := data.LogisticConfig{
			Agents: d.Agents, SamplesMin: d.Samples.Min, SamplesMax: d.Samples.Max, Dim: d.Dim,
			CovScale: l.CovarianceScale, SharedCovariance: l.SharedCovariance, ScoreSD: l.ScoreSD,
			MeanShift: l.MeanShift, FlipMin: l.LabelFlip.Min, FlipMax: l.LabelFlip.Max, TestSamples: d.TestSamples,
		}
		if err := cfg.Validate(); err != nil {
			return nil, c.Errorf("data", "%v", err)
		}
		p.Sets, p.Test, _ = data.Logistic(cfg, runSeed)
	case "click":
		k := d.Click
		cfg := data.ClickConfig{
			Agents: d.Agents, SamplesMin: d.Samples.Min, SamplesMax: d.Samples.Max, Dim: d.Dim,
			Active: k.Active, ZipfExponent: k.ZipfExponent, Skew: k.Skew, ClickRate: k.ClickRate,
			WeightScale: k.WeightScale, NoiseVarMin: k.NoiseVariance.Min, NoiseVarMax: k.NoiseVariance.Max,
			TestSamples: d.TestSamples,
		}
		if err := cfg.Validate(); err != nil {
			return nil, c.Errorf("data", "%v", err)
		}
		p.Sets, p.Test, _ = data.Click(cfg, runSeed)
	case "libsvm":
		if p.Sets, p.Test, err = readLIBSVM(ctx, c, dir, runSeed); err != nil {
			return nil, err
		}
	case "idx":
		p.Sets, p.Test, err = readIDX(ctx, c, dir, runSeed)
	case "blobs":
		p.Sets, p.Test, err = drawBlobs(c, runSeed)
	case "directory":
		p.Sets, p.Test, err = readDirectory(ctx, c, dir)
	case "mixture":
		m := d.Mixture
		cfg := data.MixtureConfig{
			Agents: d.Agents, SamplesMin: d.Samples.Min, SamplesMax: d.Samples.Max, Dim: d.Dim,
			Mean: m.Mean, Variance: m.Variance, Positive: m.Positive, TestSamples: d.TestSamples,
		}
		if err := cfg.Validate(); err != nil {
			return nil, c.Errorf("data", "%v", err)
		}
		p.Sets, p.Test = data.Mixture(cfg, runSeed)
	default:
		return nil, c.Errorf("data.kind", "unknown data kind %q", d.Kind)
	}
	if err != nil {
		return nil, err
	}
	return p, p.finish(c, runSeed)
}

// readLIBSVM reads the scenario's LIBSVM file and deals it out to the agents.
// The test set is data.libsvm.test_file when given, read whole, or else
// data.test_samples clean samples held out of the file.
func readLIBSVM(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64) ([]*data.Set, *data.Set, error) {
	d := &c.Scenario.Data
	opt := data.LIBSVMOptions{Dim: d.Dim}
	if d.LIBSVM.Hash {
		opt = data.LIBSVMOptions{HashDim: d.Dim}
	}
	opt.Targets, opt.Classes = targets(c.Scenario)
	read := func(field, path string) (*data.Set, error) {
		if err := checkLIBSVMFile(c, dir, field, path); err != nil {
			return nil, err
		}
		return readFile(ctx, c, dir, field, path, maxDataBytes, func(r io.Reader, name string) (*data.Set, error) {
			return data.ReadLIBSVM(r, name, opt)
		})
	}
	all, err := read("data.libsvm.file", d.LIBSVM.File)
	if err != nil {
		return nil, nil, err
	}
	split := data.SplitConfig{
		Agents: d.Agents, SamplesMin: d.Samples.Min, SamplesMax: d.Samples.Max, TestSamples: d.TestSamples,
		NoiseVarMin: d.LIBSVM.NoiseVariance.Min, NoiseVarMax: d.LIBSVM.NoiseVariance.Max,
	}
	if err := split.Validate(); err != nil {
		return nil, nil, c.Errorf("data", "%v", err)
	}
	sets, test, err := partition(c, all, split, runSeed)
	if err != nil {
		return nil, nil, c.Errorf("data", "splitting %s: %v", d.LIBSVM.File, err)
	}
	if d.LIBSVM.TestFile != "" {
		if test, err = read("data.libsvm.test_file", d.LIBSVM.TestFile); err != nil {
			return nil, nil, err
		}
		if test.Dim != all.Dim {
			return nil, nil, c.Errorf("data.libsvm.test_file", "%s has %d features, the training file %d: set data.dim", d.LIBSVM.TestFile, test.Dim, all.Dim)
		}
	}
	return sets, test, nil
}

// libsvmSource is where the LIBSVM versions of the thesis's datasets (ijcnn1,
// Avazu) are published.
const libsvmSource = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html"

// checkLIBSVMFile turns a LIBSVM file that does not exist into a scenario
// error that says where to get it: maple does not download data.
func checkLIBSVMFile(c *scenarios.CurveSpec, dir, field, path string) error {
	full := path
	if !filepath.IsAbs(full) {
		full = filepath.Join(dir, full)
	}
	if _, err := filesOf(c).Stat(full); errors.Is(err, fs.ErrNotExist) {
		return c.Errorf(field, "missing LIBSVM file %s: get it from %s (ijcnn1: ijcnn1.tr.bz2 and ijcnn1.t.bz2; Avazu: avazu-app.bz2), decompress it with bunzip2 and point %s at it", full, libsvmSource, field)
	}
	return nil
}

// MSD returns ‖w − w^o‖².
func MSD(w, wOpt []float64) float64 {
	d := floats.Distance(w, wOpt, 2)
	return d * d
}
