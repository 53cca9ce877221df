package inputs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gonum.org/v1/gonum/floats"
	"gopkg.in/yaml.v3"

	"maple/algorithms/data"
	"maple/algorithms/data/scatter"
	"maple/algorithms/loss"
	"maple/algorithms/rng"
	"maple/internal/fileio"
	"maple/rundir"
	"maple/scenarios"
)

// modelLoss returns the loss of a curve's scenario, without its origin.
func modelLoss(c *scenarios.CurveSpec) (loss.Loss, error) {
	sl := &c.Scenario.Loss
	kind, err := loss.ParseKind(sl.Kind)
	if err != nil {
		return loss.Loss{}, c.Errorf("loss.kind", "%v", err)
	}
	l := loss.Loss{Kind: kind, Rho: sl.Rho, Classes: sl.Classes, Hidden: sl.Hidden}
	if kind == loss.MLP {
		if l.Activation, err = loss.ParseActivation(sl.Activation); err != nil {
			return loss.Loss{}, c.Errorf("loss.activation", "%v", err)
		}
	}
	if kind == loss.CNN {
		return l, nil // the network is built on the data (cnnNet)
	}
	if err := l.Validate(); err != nil {
		return loss.Loss{}, c.Errorf("loss", "%v", err)
	}
	return l, nil
}

// cnnNet builds the network of a cnn loss on the data's features: images
// of the shape loss.image, by default image (the IDX data's own,
// sampleImage), which must hold the features.
func cnnNet(c *scenarios.CurveSpec, image []int, features int) (*loss.Net, error) {
	sl := &c.Scenario.Loss
	nt, err := sl.Net(features, image)
	if err != nil {
		return nil, c.Errorf(sl.NetField(err), "%v", err)
	}
	if in := nt.Input(); in.Size() != features {
		return nil, c.Errorf("loss.image", "images of %v are %d values, but the data have %d features", in, in.Size(), features)
	}
	return nt, nil
}

// targets says how the readers interpret a file's target column for the
// scenario's loss: real targets for least squares, ±1 labels for logistic
// regression, classes for the multi-class models.
func targets(sc *scenarios.Scenario) (data.Targets, int) {
	switch sc.Loss.Kind {
	case "least-squares":
		return data.RealTargets, 0
	case "logistic":
		return data.BinaryTargets, 0
	}
	return data.ClassTargets, sc.Loss.Classes
}

// partitionConfig is the partition of a curve's pooled data: data.partition
// on top of split.
func partitionConfig(c *scenarios.CurveSpec, split data.SplitConfig) (data.PartitionConfig, error) {
	cfg := data.PartitionConfig{SplitConfig: split}
	if p := c.Scenario.Data.Partition; p != nil {
		kind, err := data.ParsePartition(p.Kind)
		if err != nil {
			return cfg, c.Errorf("data.partition.kind", "%v", err)
		}
		cfg.Kind, cfg.Alpha, cfg.Shards, cfg.Sigma = kind, p.Alpha, p.Shards, p.Sigma
	}
	return cfg, nil
}

// partition deals pooled data out to the agents by data.partition.
func partition(c *scenarios.CurveSpec, all *data.Set, split data.SplitConfig, runSeed uint64) ([]*data.Set, *data.Set, error) {
	cfg, err := partitionConfig(c, split)
	if err != nil {
		return nil, nil, err
	}
	return data.Partition(all, cfg, runSeed)
}

// finish checks the labels against the loss, gives the MLP its random
// origin (from the stream ("model", "init") of the data seed, so that the
// curves of a run start from the same network) and summarizes the partition;
// add, if not nil, is given every agent's dataset too, in agent order.
//
// It passes over the agents once (data.Fold): for generated data held
// lazily it draws them one at a time, and checks them on every core,
// stopping once ctx is done.
func (p *Problem) finish(ctx context.Context, c *scenarios.CurveSpec, runSeed uint64, add func(s *data.Set)) error {
	var summary data.Summary
	classes := p.Loss.Classification()
	err := data.Fold(p.Data, func(_ int, sets []*data.Set, out []error) {
		for i, s := range sets {
			out[i] = p.Loss.CheckLabels(s)
		}
	}, func(k int, s *data.Set, labels *error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if *labels != nil {
			return c.Errorf("data", "agent %d: %v", k, *labels)
		}
		summary.Add(s, classes)
		if add != nil {
			add(s)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if p.Test != nil && classes {
		if err := p.Loss.CheckLabels(p.Test); err != nil {
			return c.Errorf("data", "test set: %v", err)
		}
	}
	if p.Loss.Kind == loss.CNN {
		nt, err := cnnNet(c, p.image, p.Data.Set(0).Dim)
		if err != nil {
			return err
		}
		p.Loss.Net = nt
		if err := p.Loss.Validate(); err != nil {
			return c.Errorf("loss", "%v", err)
		}
	}
	p.Loss.Origin = p.Loss.Init(p.Data.Set(0).Dim, rng.New(runSeed, "model", "init"))
	p.summary = summary.Summary(p.Test, classes)
	return nil
}

// PartitionSummary describes how the samples are spread over the agents.
func (p *Problem) PartitionSummary() data.PartitionSummary { return p.summary }

// maxRecordedOptimum is the largest w^o written to summary.json in full;
// above it the summary gives its norm.
const maxRecordedOptimum = 2048

// Details returns the facts about the problem the summary reports: how the
// samples are spread over the agents, and w^o (or its norm) with how it was
// found — the latter once its gradient norm is computed (Settle adds it
// after the run otherwise).
func (p *Problem) Details() map[string]any {
	d := map[string]any{"partition": p.summary}
	switch {
	case p.WOpt == nil:
		d["optimum"] = "none (loss.optimum: none)"
	case len(p.WOpt) > maxRecordedOptimum:
		d["optimum_norm"] = floats.Norm(p.WOpt, 2)
	default:
		d["optimum"] = p.WOpt
	}
	if p.WOpt != nil && p.gradient == nil {
		d["solver"] = p.Solver
	}
	return d
}

// The largest files a job reads, so that a file that is not the one meant
// cannot make it read without end; how much memory the data take is checked
// against the machine before anything runs (the runner's preflight.go).
const (
	// maxDataBytes bounds a LIBSVM or IDX file: the largest sets the
	// scenarios use (Avazu, about 1.3 GB decompressed) are far below it.
	maxDataBytes = 64 << 30
	// maxAgentBytes bounds one agent's file of directory data.
	maxAgentBytes = 1 << 30
	// maxTableBytes bounds a topology edge list or matrix, a step-time
	// table and an availability CSV.
	maxTableBytes = 1 << 30
)

// openData opens the data file path (resolved) named by field: a regular
// file of at most limit bytes (fileio), read until ctx is done. A missing
// file names the Debian package that installs it, if the scenario says
// which.
func openData(ctx context.Context, c *scenarios.CurveSpec, field, path, pkg string, limit int64) (*fileio.File, string, error) {
	f, err := filesOf(c).Open(ctx, path, limit)
	if err == nil {
		return f, path, nil
	}
	if errors.Is(err, fs.ErrNotExist) && pkg != "" {
		return nil, path, c.Errorf(field, "%s does not exist: install the Debian package %s (apt-get install %s)", path, pkg, pkg)
	}
	return nil, path, c.Errorf(field, "cannot open %s: %v", path, rundir.WithoutPath(err))
}

// readIDXFile reads one IDX file named by field.
func readIDXFile(ctx context.Context, c *scenarios.CurveSpec, dir, field, path, pkg string) (*data.IDX, string, error) {
	f, name, err := openData(ctx, c, field, Resolve(dir, path), pkg, maxDataBytes)
	if err != nil {
		return nil, name, err
	}
	defer f.Close()
	a, err := data.ReadIDX(f, name)
	if err != nil {
		return nil, name, c.Errorf(field, "%v", err)
	}
	return a, name, nil
}

// idxPair is an images file and its checked labels, and the transform of
// its images (data.transform), if any.
type idxPair struct {
	images    *data.IDX
	labels    []float64
	name      string
	transform *scatter.Transform
}

// features returns the number of features of a sample: the transform's
// coefficients, or the pixels.
func (p *idxPair) features() int {
	if p.transform != nil {
		return p.transform.Features()
	}
	return p.images.Features()
}

// readIDXPair reads an images file and its labels.
func readIDXPair(ctx context.Context, c *scenarios.CurveSpec, dir, imagesField, images, labelsField, labels string) (*idxPair, error) {
	x := c.Scenario.Data.IDX
	img, imgName, err := readIDXFile(ctx, c, dir, imagesField, images, x.Package)
	if err != nil {
		return nil, err
	}
	lab, labName, err := readIDXFile(ctx, c, dir, labelsField, labels, x.Package)
	if err != nil {
		return nil, err
	}
	y, err := data.IDXLabels(img, imgName, lab, labName, c.Scenario.Loss.Classes, idxScale(c))
	if err != nil {
		field := labelsField
		var fe *data.IDXFileError
		if errors.As(err, &fe) && fe.Images {
			field = imagesField // the images' element type or shape, not the labels
		}
		return nil, c.Errorf(field, "%v", err)
	}
	pair := &idxPair{images: img, labels: y, name: imgName}
	if t := c.Scenario.Data.Transform; t != nil {
		tr, err := data.NewScatter(img, imgName, t.ScatterConfig())
		var fe *data.IDXFileError
		switch {
		case errors.As(err, &fe):
			return nil, c.Errorf(imagesField, "%v", err)
		case err != nil:
			return nil, c.Errorf("data.transform.scales", "%s holds %v images: %v", imgName, img.Dims[1:], err)
		}
		pair.transform = tr
	}
	if d := c.Scenario.Data.Dim; d != 0 && d != pair.features() {
		what := "features"
		if pair.transform != nil {
			what = "transform coefficients"
		}
		return nil, c.Errorf("data.dim", "%s has %d %s per sample, not %d (0 takes the file's)", imgName, pair.features(), what, d)
	}
	return pair, nil
}

// idxScale is the scaling of the pixels: unit, or none (standardization
// comes after, over the training set).
func idxScale(c *scenarios.CurveSpec) data.IDXScale {
	if c.Scenario.Data.IDX.Scale == "unit" {
		return data.ScaleUnit
	}
	return data.ScaleNone
}

// subset builds the set of samples idx of the pair: coded rows that share
// the file's bytes (data.IDXRows), float64 rows for standardization, which
// rewrites them, or the coefficients of the transform (data.transform),
// computed on every core until ctx is done.
func (p *idxPair) subset(ctx context.Context, c *scenarios.CurveSpec, idx []int) (*data.Set, error) {
	switch {
	case p.transform != nil:
		s, err := data.IDXTransformed(ctx, p.images, p.labels, idx, idxScale(c), p.transform)
		if err != nil {
			return nil, fmt.Errorf("transforming the images of %s: interrupted: %w", p.name, err)
		}
		return s, nil
	case c.Scenario.Data.IDX.Scale == "standardize":
		return data.IDXSubset(p.images, p.labels, idx, idxScale(c)), nil
	}
	return data.IDXRows(p.images, p.labels, idx, idxScale(c)), nil
}

// readIDX reads the scenario's IDX files, deals the training samples out by
// data.partition and returns the test set: the test files (their first
// data.test_samples samples, if set) or samples held out of the training
// file, and the shape of a sample as an image (a cnn's default loss.image):
// the files' own, or the transform's channels and grid. The agents' sets are the rows of the files' bytes they were dealt
// (see data.IDXRows), so the training set is held once, in the file's own
// encoding.
//
// Decompressing the files is most of the time of reading them, so the test
// files are read while the training files are; the errors are reported in
// the order of a sequential read (training files, test files, then how they
// fit together), so nothing depends on which finishes first.
func readIDX(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64) ([]*data.Set, *data.Set, []int, error) {
	d := &c.Scenario.Data
	x := d.IDX
	var testPair *idxPair
	var test *data.Set
	var testErr error
	tested := make(chan struct{})
	if x.TestImages != "" {
		go func() {
			defer close(tested)
			testPair, test, testErr = readIDXTest(ctx, c, dir)
		}()
	} else {
		close(tested)
	}
	train, err := readIDXPair(ctx, c, dir, "data.idx.images", x.Images, "data.idx.labels", x.Labels)
	<-tested
	if err != nil {
		return nil, nil, nil, err
	}
	if testErr != nil {
		return nil, nil, nil, testErr
	}
	held := d.TestSamples
	if testPair != nil {
		held = 0
		if m := testPair.images.Features(); m != train.images.Features() {
			return nil, nil, nil, c.Errorf("data.idx.test_images", "test samples have %d features, training samples %d", m, train.images.Features())
		}
		if a, b := testPair.images.Dims[1:], train.images.Dims[1:]; train.transform != nil && !slices.Equal(a, b) {
			return nil, nil, nil, c.Errorf("data.idx.test_images", "test images are %v, training images %v: the transform needs one shape", a, b)
		}
		if n := len(testPair.labels); d.TestSamples > n {
			return nil, nil, nil, c.Errorf("data.test_samples", "%d test samples asked for, the test files hold %d", d.TestSamples, n)
		}
	}
	cfg, err := partitionConfig(c, data.SplitConfig{Agents: d.Agents, SamplesMin: d.Samples.Min, SamplesMax: d.Samples.Max, TestSamples: held})
	if err != nil {
		return nil, nil, nil, err
	}
	lists, heldOut, err := data.PartitionIndices(train.labels, cfg, runSeed)
	if err != nil {
		return nil, nil, nil, c.Errorf("data", "dealing out %s: %v", train.name, err)
	}
	sets := make([]*data.Set, len(lists))
	for k, idx := range lists {
		if sets[k], err = train.subset(ctx, c, idx); err != nil {
			return nil, nil, nil, err
		}
	}
	if test == nil {
		if test, err = train.subset(ctx, c, heldOut); err != nil {
			return nil, nil, nil, err
		}
	}
	if x.Scale == "standardize" {
		data.Standardize(sets, test)
	}
	image := sampleImage(train.images.Dims)
	if train.transform != nil {
		channels, rows, cols := train.transform.Shape()
		image = []int{channels, rows, cols}
	}
	return sets, test, image, nil
}

// transformed is the last transformed IDX data a job read, shared by every
// worker of the process: the curves of a run have the same data, and its
// transform (data.transform) costs a minute of every core for the 70 000
// Fashion-MNIST images and holds 2.2 GB, which each worker building its
// own (ProblemCache is per worker) would double. The sets are read-only
// once built, as every problem's are.
var transformed struct {
	mu    sync.Mutex
	key   string
	entry *sharedIDX
}

// sharedIDX is one read of transformed IDX data, done once done is closed.
type sharedIDX struct {
	done  chan struct{}
	sets  []*data.Set
	test  *data.Set
	image []int
	err   error
}

// readIDXShared is readIDX, sharing the data between the jobs of the
// process when they are transformed: a job asking for the data another is
// transforming waits for them (or for ctx).
func readIDXShared(ctx context.Context, c *scenarios.CurveSpec, dir string, runSeed uint64) ([]*data.Set, *data.Set, []int, error) {
	if c.Scenario.Data.Transform == nil {
		return readIDX(ctx, c, dir, runSeed)
	}
	spec, err := yaml.Marshal(c.Scenario.Data)
	if err != nil {
		return nil, nil, nil, err
	}
	key := fmt.Sprintf("%s\x00%d\x00%s", dir, runSeed, spec)
	t := &transformed
	t.mu.Lock()
	if e := t.entry; e != nil && t.key == key {
		t.mu.Unlock()
		select {
		case <-e.done:
			return e.sets, e.test, e.image, e.err
		case <-ctx.Done():
			return nil, nil, nil, fmt.Errorf("waiting for the transformed images: interrupted: %w", ctx.Err())
		}
	}
	e := &sharedIDX{done: make(chan struct{})}
	t.key, t.entry = key, e
	t.mu.Unlock()
	e.sets, e.test, e.image, e.err = readIDX(ctx, c, dir, runSeed)
	close(e.done)
	return e.sets, e.test, e.image, e.err
}

// readIDXTest reads the scenario's test files and decodes the test set:
// their first data.test_samples samples, or all of them. It leaves the set
// nil when data.test_samples asks for more samples than the files hold
// (readIDX reports it).
func readIDXTest(ctx context.Context, c *scenarios.CurveSpec, dir string) (*idxPair, *data.Set, error) {
	d := &c.Scenario.Data
	pair, err := readIDXPair(ctx, c, dir, "data.idx.test_images", d.IDX.TestImages, "data.idx.test_labels", d.IDX.TestLabels)
	if err != nil {
		return nil, nil, err
	}
	n := len(pair.labels)
	if d.TestSamples > n {
		return pair, nil, nil
	}
	if d.TestSamples > 0 {
		n = d.TestSamples
	}
	first := make([]int, n)
	for i := range first {
		first[i] = i
	}
	test, err := pair.subset(ctx, c, first)
	return pair, test, err
}

// drawBlobs draws the Gaussian-cluster pool and deals it out.
func drawBlobs(c *scenarios.CurveSpec, runSeed uint64) ([]*data.Set, *data.Set, error) {
	d := &c.Scenario.Data
	cfg := data.BlobsConfig{
		Agents: d.Agents, SamplesMin: d.Samples.Min, SamplesMax: d.Samples.Max, Dim: d.Dim,
		Classes: c.Scenario.Loss.Classes, Separation: d.Blobs.Separation, TestSamples: d.TestSamples,
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, c.Errorf("data", "%v", err)
	}
	pool, test := data.Blobs(cfg, runSeed)
	split := data.SplitConfig{Agents: d.Agents, SamplesMin: d.Samples.Min, SamplesMax: d.Samples.Max}
	sets, _, err := partition(c, pool, split, runSeed)
	if err != nil {
		return nil, nil, c.Errorf("data", "%v", err)
	}
	return sets, test, nil
}

// readDirectory reads one file per agent, 0.<ext> … (K−1).<ext>, each as is,
// and the optional test file. Every agent must hold a number of samples in
// the range data.samples: the algorithms' mini-batch checks rely on its
// minimum, the pre-run estimates of memory and time on its maximum. An
// agent's file must be a regular file (a named pipe or a device is refused
// by name), and the reading stops once ctx is done.
func readDirectory(ctx context.Context, c *scenarios.CurveSpec, dir string) ([]*data.Set, *data.Set, error) {
	d := &c.Scenario.Data
	x := d.Directory
	path := Resolve(dir, x.Path)
	entries, err := filesOf(c).ReadDir(path)
	if err != nil {
		return nil, nil, c.Errorf("data.directory.path", "cannot read %s: %v", path, rundir.WithoutPath(err))
	}
	files := make([]string, d.Agents)
	for _, e := range entries {
		name := e.Name()
		base := strings.TrimSuffix(name, filepath.Ext(name))
		if e.IsDir() || !isAgentFile(base) {
			continue // not an agent's file (a test file, a README, …)
		}
		k, err := strconv.Atoi(base)
		switch {
		case err != nil || strconv.Itoa(k) != base:
			return nil, nil, c.Errorf("data.directory.path", "%s: agent files are named by their index without leading zeros or signs", filepath.Join(path, name))
		case k >= d.Agents:
			return nil, nil, c.Errorf("data.agents", "%s holds a file for agent %d (%s), but data.agents is %d", path, k, name, d.Agents)
		case files[k] != "":
			return nil, nil, c.Errorf("data.directory.path", "%s holds two files for agent %d: %s and %s", path, k, files[k], name)
		}
		files[k] = name
	}
	if k := slices.Index(files, ""); k >= 0 {
		return nil, nil, c.Errorf("data.directory.path", "%s holds no file for agent %d (expected one file per agent, named 0 … %d with any extension)", path, k, d.Agents-1)
	}
	read := func(field, name string) (*data.Set, error) {
		f, full, err := openData(ctx, c, field, name, "", maxAgentBytes)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var s *data.Set
		t, classes := targets(c.Scenario)
		if x.Format == "csv" {
			s, err = data.ReadCSV(f, full, data.CSVOptions{Header: x.Header, Targets: t, Classes: classes})
		} else {
			s, err = data.ReadLIBSVM(f, full, data.LIBSVMOptions{Dim: d.Dim, Targets: t, Classes: classes})
		}
		if err != nil {
			return nil, c.Errorf(field, "%v", err)
		}
		return s, nil
	}
	sets := make([]*data.Set, d.Agents)
	for k, name := range files {
		if sets[k], err = read("data.directory.path", filepath.Join(path, name)); err != nil {
			return nil, nil, err
		}
		switch n := sets[k].Len(); {
		case n < d.Samples.Min:
			return nil, nil, c.Errorf("data.samples", "agent %d's file %s holds %d samples, fewer than data.samples min %d (set data.samples to the range of the files' sizes)", k, name, n, d.Samples.Min)
		case n > d.Samples.Max:
			return nil, nil, c.Errorf("data.samples", "agent %d's file %s holds %d samples, more than data.samples max %d (set data.samples to the range of the files' sizes)", k, name, n, d.Samples.Max)
		}
	}
	var test *data.Set
	if x.Test != "" {
		if test, err = read("data.directory.test", Resolve(dir, x.Test)); err != nil {
			return nil, nil, err
		}
	}
	if err := unifyDim(c, append(slices.Clone(sets), test), files, x.Format); err != nil {
		return nil, nil, err
	}
	return sets, test, nil
}

// unifyDim gives every set the same feature dimension: CSV files must agree
// (and match data.dim when it is set); sparse LIBSVM sets take the largest.
func unifyDim(c *scenarios.CurveSpec, sets []*data.Set, files []string, format string) error {
	dim := c.Scenario.Data.Dim
	for _, s := range sets {
		if s != nil && format == "libsvm" {
			dim = max(dim, s.Dim)
		}
	}
	for k, s := range sets {
		if s == nil {
			continue
		}
		if format == "libsvm" {
			s.Dim = dim
			continue
		}
		name := "the test file"
		if k < len(files) {
			name = files[k]
		}
		if dim == 0 {
			dim = s.Dim
		}
		if s.Dim != dim {
			return c.Errorf("data.directory.path", "%s has %d features, %s", name, s.Dim, dimSource(c, files[0], dim))
		}
	}
	return nil
}

// dimSource says where the expected dimension comes from.
func dimSource(c *scenarios.CurveSpec, first string, dim int) string {
	if c.Scenario.Data.Dim != 0 {
		return fmt.Sprintf("data.dim says %d", dim)
	}
	return fmt.Sprintf("%s has %d", first, dim)
}

// headBytes is how much of a data file Features reads to find the number of
// features of a directory's LIBSVM files.
const headBytes = 64 << 10

// Features returns the feature dimension M of sc's data for the estimates:
// data.dim, or, for idx and directory data without it, the files' own, read
// from their first bytes — the IDX header of the training images (rows ×
// columns), the first record of agent 0's CSV file, the largest index in the
// first lines of its LIBSVM file. A file that cannot be read, or is not a
// regular file (fileio), counts as one feature: the checks that read the
// data, or the run, will report it.
func Features(sc *scenarios.Scenario, dir string) int {
	d := &sc.Data
	if d.Dim > 0 {
		return d.Dim
	}
	m := 0
	switch {
	case d.Kind == "idx" && d.IDX != nil:
		if a, err := IDXHeader(dir, d.IDX.Images); err == nil {
			m = a.Features()
			if d.Transform != nil {
				m = TransformFeatures(d.Transform, a)
			}
		}
	case d.Kind == "directory" && d.Directory != nil:
		m = directoryFeatures(Resolve(dir, d.Directory.Path), d.Directory.Format)
	}
	return max(m, 1)
}

// sampleImage is the shape [channels, rows, cols] in which a cnn reads
// one sample of an untransformed IDX array of dimensions dims (the count
// first) unless loss.image says otherwise: rows × columns images in one
// channel, or an array's own three dimensions per sample, channels first;
// nil for arrays of other ranks.
func sampleImage(dims []int) []int {
	switch len(dims) {
	case 3:
		return []int{1, dims[1], dims[2]}
	case 4:
		return slices.Clone(dims[1:])
	}
	return nil
}

// ImageShape returns the shape [channels, rows, cols] in which a cnn
// reads one sample of sc's IDX data unless loss.image says otherwise, from
// the images file's header alone: sampleImage's, or with data.transform
// the coefficients' channels and grid. It returns nil for other data, a
// header that cannot be read or a transform the images do not admit (the
// checks that read the data report those).
func ImageShape(sc *scenarios.Scenario, dir string) []int {
	d := &sc.Data
	if d.Kind != "idx" || d.IDX == nil {
		return nil
	}
	a, err := IDXHeader(dir, d.IDX.Images)
	if err != nil {
		return nil
	}
	if d.Transform == nil {
		return sampleImage(a.Dims)
	}
	if c, rows, cols, ok := transformShape(d.Transform, a); ok {
		return []int{c, rows, cols}
	}
	return nil
}

// TransformFeatures returns the number of coefficients the transform t
// gives each image of the IDX array a (its header is enough), or 0 when the
// array does not hold images the transform accepts (the checks that read
// the data report it).
func TransformFeatures(t *scenarios.Transform, a *data.IDX) int {
	c, rows, cols, _ := transformShape(t, a)
	return c * rows * cols
}

// transformShape returns the channels and grid of the coefficients the
// transform t gives each image of the IDX array a, and false (and zeros)
// when the array does not hold images the transform accepts.
func transformShape(t *scenarios.Transform, a *data.IDX) (channels, rows, cols int, ok bool) {
	cfg := t.ScatterConfig()
	if len(a.Dims) != 3 || cfg.Validate() != nil {
		return 0, 0, 0, false
	}
	oh, err1 := cfg.OutputSize(a.Dims[1])
	ow, err2 := cfg.OutputSize(a.Dims[2])
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return cfg.Channels(), oh, ow, true
}

// IDXHeader reads the header of the IDX file named file (relative to the
// scenario's directory dir): its dimensions and element type, decompressing
// no more of a gzip file than the header's bytes, so that what a file
// announces — a few kilobytes of gzip can announce gigabytes — is known
// before it is read.
func IDXHeader(dir, file string) (*data.IDX, error) {
	f, err := fileio.Open(Resolve(dir, file), maxDataBytes)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return data.ReadIDXHeader(f, f.Name())
}

// directoryFeatures returns the number of features of agent 0's file in the
// directory path (0 if it cannot be read): the fields of its first record
// but the target for CSV, the largest 1-based index in its first headBytes
// for LIBSVM.
func directoryFeatures(path, format string) int {
	names, _ := filepath.Glob(filepath.Join(path, "0.*"))
	if _, err := os.Stat(filepath.Join(path, "0")); err == nil {
		names = append(names, filepath.Join(path, "0"))
	}
	if len(names) == 0 {
		return 0
	}
	f, err := fileio.Open(names[0], maxAgentBytes) // a named pipe is refused, not waited on
	if err != nil {
		return 0
	}
	defer f.Close()
	m := 0
	lines := bufio.NewScanner(io.LimitReader(f, headBytes))
	for lines.Scan() {
		line, _, _ := strings.Cut(lines.Text(), "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if format == "csv" {
			return strings.Count(line, ",")
		}
		for _, tok := range strings.Fields(line)[1:] {
			if i, _, ok := strings.Cut(tok, ":"); ok {
				if k, err := strconv.Atoi(i); err == nil {
					m = max(m, k)
				}
			}
		}
	}
	return m
}

// CheckData reads the data files a plan names (LIBSVM files, the agents'
// files of directory data) and deals them out as run 0 would, so that a
// missing, malformed or special file (a named pipe, a device) is reported
// before anything runs — and before the run directory exists. Curves with
// the same data section share one check.
func CheckData(ctx context.Context, plan *scenarios.Plan) error {
	seen := map[string]bool{}
	for _, c := range plan.Curves {
		sc := c.Scenario
		if sc.Data.Kind != "libsvm" && sc.Data.Kind != "directory" {
			continue
		}
		key, err := yaml.Marshal(sc.Data)
		if err != nil {
			return err
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		read := func() error {
			_, _, err := readLIBSVM(ctx, c, plan.Dir, rng.RunSeed(sc.Seed, 0))
			return err
		}
		if sc.Data.Kind == "directory" {
			read = func() error { _, _, err := readDirectory(ctx, c, plan.Dir); return err }
		}
		if err := read(); err != nil {
			return err
		}
	}
	return nil
}
