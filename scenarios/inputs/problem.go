package inputs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"maple/algorithms/data"
	"maple/algorithms/loss"
	"maple/algorithms/optimum"
	"maple/scenarios"
)

// Problem is the learning problem of one Monte-Carlo run: the agents' data,
// the loss and the minimizer w^o that deviations are measured against.
type Problem struct {
	// Data gives the agents' data one at a time. For a family that reads
	// them only through it (the runner's Family.Lazy) and generated data,
	// it draws agent k's dataset from the seed and k whenever asked, and
	// Sets is nil; otherwise Sets holds every dataset and Data gives them.
	// Test is the test set (nil for regression).
	Data data.Source
	Sets []*data.Set
	Test *data.Set
	// Loss is the model's loss, WOpt the minimizer w^o (nil with
	// loss.optimum none) and Solver how it was found.
	Loss   loss.Loss
	WOpt   []float64
	Solver optimum.Report
	// summary describes how the samples are spread over the agents.
	summary data.PartitionSummary
	// image is the shape of an IDX file's images (its dimensions after
	// the first), a cnn's default loss.image.
	image []int
	// gradient, when not nil, is the sum of the agents' gradients at w^o
	// that Solver's GradNorm is still to be computed from, by the next pass
	// over the agents (Pass, Settle).
	gradient *optimum.Gradient
}

// ProblemCache keeps the last problem a worker built. Jobs come in (run,
// curve) order and the curves of a run share its data seed, so consecutive
// jobs usually need the same data and optimum: building them once per run
// instead of once per curve. Problems are read-only once built. The zero
// value is an empty cache.
type ProblemCache struct {
	key string
	p   *Problem
}

// Get returns the problem of curve c for the data seed, building it unless
// the previous call had the same data, loss and seed; lazy leaves generated
// data to be drawn agent by agent (Problem.Data), for a family that reads
// them only through it.
func (pc *ProblemCache) Get(ctx context.Context, c *scenarios.CurveSpec, dir string, seed uint64, lazy bool) (*Problem, error) {
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
		p, err := buildProblem(ctx, c, dir, seed, lazy)
		if err != nil {
			return nil, err
		}
		pc.key, pc.p = key, p
	}
	return pc.p, nil
}

// BuildProblem generates (or reads and splits) the data of a run, every
// dataset in memory (Problem.Sets), and, unless loss.optimum is none, solves
// for w^o, the minimizer of the uniformly averaged risk (1/K) Σ_k J_k
// (thesis eq. 2.1, paper 001 eq. 1). Once ctx is done the reading and the
// solve stop with an error.
func BuildProblem(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64) (*Problem, error) {
	return buildProblem(ctx, c, dir, runSeed, false)
}

// buildProblem is BuildProblem, leaving generated data to be drawn agent by
// agent when lazy (Problem.Data): the checks, the summary and w^o then pass
// over the agents without holding them (data.Fold). For least squares the
// checks, the summary and the normal equations take one pass together, and
// the gradient norm of the solver's report is left to the next pass over the
// agents (Pass, Settle): two passes over millions of agents fewer.
func buildProblem(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64, lazy bool) (*Problem, error) {
	p, err := buildSource(ctx, c, dir, runSeed)
	if err != nil {
		return nil, err
	}
	if !lazy {
		p.Sets = data.Collect(p.Data)
		p.Data = data.Sets(p.Sets)
	}
	solve := c.Scenario.Loss.Optimum != "none"
	if solve && data.Generated(p.Data) && p.Loss.Kind == loss.LeastSquares {
		if err := p.finishLeastSquares(ctx, c, runSeed); err != nil {
			return nil, err
		}
		return p, nil
	}
	if err := p.finish(ctx, c, runSeed, nil); err != nil || !solve {
		return p, err
	}
	p.WOpt, p.Solver, err = optimum.SolveSource(ctx, p.Loss, p.Data, nil)
	if err != nil {
		return nil, c.Errorf("loss", "cannot compute the minimizer w^o: %v", err)
	}
	return p, nil
}

// finishLeastSquares is finish and the closed form of least squares
// (optimum.SolveSource) in one pass over generated data held lazily: the
// normal equations are summed, agent by agent in agent order, with the
// checks and the summary, and solved as SolveSource solves them — the same
// w^o, bit for bit. The report's gradient norm at w^o needs another pass,
// left to the next one over the agents (Pass) or to Settle.
func (p *Problem) finishLeastSquares(ctx context.Context, c *scenarios.CurveSpec, runSeed uint64) error {
	K := p.Data.Agents()
	uniform := 1 / float64(K) // the weight of SolveSource's uniform average
	eq := optimum.NewNormalEquations(p.Data.Set(0).Dim)
	if err := p.finish(ctx, c, runSeed, func(s *data.Set) { eq.Add(uniform, s) }); err != nil {
		return err
	}
	fail := func(err error) error { return c.Errorf("loss", "cannot compute the minimizer w^o: %v", err) }
	if err := optimum.CheckLeastSquares(p.Loss, p.Data, nil); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(fmt.Errorf("optimum: interrupted: %w", err))
	}
	w, err := eq.Solve(p.Loss.Rho)
	if err != nil {
		return fail(err)
	}
	p.WOpt, p.Solver = w, optimum.Report{Method: "closed-form"}
	p.gradient = optimum.NewGradient(p.Loss, K, nil, w)
	return nil
}

// Pass passes over the agents of p once, as data.Fold does, for what a
// family computes from every agent's data (at w^o, say): work computes a
// chunk's results on every core, each takes them in agent order. When the
// gradient norm of p's solver report is still to be computed (lazily held
// generated data, finishLeastSquares), the pass computes it too, on the
// goroutine that calls each, before each: the pass a family makes for its
// summary serves the report as well. Once ctx is done the pass stops with
// an error wrapping ctx.Err().
func Pass[T any](ctx context.Context, p *Problem, work func(lo int, sets []*data.Set, out []T), each func(k int, set *data.Set, v *T) error) error {
	g := p.gradient
	err := data.Fold(p.Data, work, func(k int, set *data.Set, v *T) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("a pass over the agents: interrupted: %w", err)
		}
		if g != nil {
			g.Add(k, set)
		}
		return each(k, set, v)
	})
	if err == nil && g != nil {
		p.Solver.GradNorm, p.gradient = g.Norm(), nil
	}
	return err
}

// Settle completes the details of a job that Details gave before its run:
// the solver's report, once its gradient norm is computed, by a pass of its
// own if no pass of the family's (Pass) computed it during the run.
func (p *Problem) Settle(ctx context.Context, details map[string]any) error {
	if p.gradient != nil {
		if err := Pass(ctx, p, func(int, []*data.Set, []struct{}) {}, func(int, *data.Set, *struct{}) error { return nil }); err != nil {
			return err
		}
	}
	if p.WOpt != nil {
		details["solver"] = p.Solver
	}
	return nil
}

// BuildData generates (or reads and deals out) the data of a run and sets up
// the model, as a family that reads them lazily gets them (generated data
// are drawn when asked, Problem.Data), without solving for w^o: the data
// maple data describes (Problem.PartitionSummary).
func BuildData(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64) (*Problem, error) {
	p, err := buildSource(ctx, c, dir, runSeed)
	if err != nil {
		return nil, err
	}
	return p, p.finish(ctx, c, runSeed, nil)
}

// buildSource sets up the model and the data of a run: the source of
// generated data, or the datasets read and dealt out.
func buildSource(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64) (*Problem, error) {
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
		p.Data, _ = data.RegressionSource(cfg, runSeed)
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
		p.Data, p.Test, _ = data.LogisticSource(cfg, runSeed)
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
		p.Data, p.Test, _ = data.ClickSource(cfg, runSeed)
	case "libsvm":
		if p.Sets, p.Test, err = readLIBSVM(ctx, c, dir, runSeed); err != nil {
			return nil, err
		}
	case "idx":
		p.Sets, p.Test, p.image, err = readIDXShared(ctx, c, dir, runSeed)
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
		p.Data, p.Test = data.MixtureSource(cfg, runSeed)
	default:
		return nil, c.Errorf("data.kind", "unknown data kind %q", d.Kind)
	}
	if err != nil {
		return nil, err
	}
	if p.Data == nil {
		p.Data = data.Sets(p.Sets)
	}
	return p, nil
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

// ClassMetrics is the number of metrics Problem.Classify computes.
const ClassMetrics = 3

// Classify sets dst[:ClassMetrics] to the test error, accuracy and mean
// cross-entropy of w on the test set, in the order of the runner's
// ClassColumns, and reports whether it did: not for regression, nor without
// a test set (the columns then stay empty).
func (p *Problem) Classify(dst []float64, w []float64) bool {
	if p.Test == nil || !p.Loss.Classification() {
		return false
	}
	e := p.Loss.Evaluate(w, p.Test)
	dst[0], dst[1], dst[2] = e.Error, e.Accuracy, e.CrossEntropy
	return true
}
