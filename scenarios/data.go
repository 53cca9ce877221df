package scenarios

import "maple/algorithms/data/scatter"

// IDX reads an image dataset in the IDX format of MNIST and Fashion-MNIST
// (gzip-compressed or plain): a training pair, dealt out by data.partition,
// and optionally a test pair.
type IDX struct {
	// Images and Labels are the training files, relative to the scenario
	// or absolute.
	Images string `yaml:"images"`
	Labels string `yaml:"labels"`
	// TestImages and TestLabels are the test files; without them the test
	// set is held out of the training data (data.test_samples).
	TestImages string `yaml:"test_images,omitempty"`
	TestLabels string `yaml:"test_labels,omitempty"`
	// Scale is unit (pixels / 255, in [0, 1]), standardize (every feature
	// to mean 0 and variance 1 over the training set) or none.
	Scale string `yaml:"scale"`
	// Package names the Debian package that installs the files, for the
	// message when one is missing.
	Package string `yaml:"package,omitempty"`
}

// Blobs is synthetic multi-class data: loss.classes Gaussian clusters of
// unit spread whose centres have coordinates N(0, separation²), pooled and
// dealt out by data.partition.
type Blobs struct {
	// Separation is the standard deviation of the centres' coordinates.
	Separation float64 `yaml:"separation"`
}

// Directory reads one file per agent, named by the agent's index (0.csv,
// 1.csv, … or 0.svm, …), each used as is: no shuffling, no re-dealing, no
// noise.
type Directory struct {
	// Path is the directory, relative to the scenario or absolute.
	Path string `yaml:"path"`
	// Format is csv (target first, then the features) or libsvm.
	Format string `yaml:"format"`
	// Header skips the first line of every CSV file.
	Header bool `yaml:"header,omitempty"`
	// Test is the file of the test set, in the same format.
	Test string `yaml:"test,omitempty"`
}

// Partition is how pooled data are dealt out to the agents.
type Partition struct {
	// Kind is iid, dirichlet, shards or quantity.
	Kind string `yaml:"kind"`
	// Alpha is the Dirichlet concentration of dirichlet label skew.
	Alpha float64 `yaml:"alpha,omitempty"`
	// Shards is the number of label-sorted shards per agent of shards.
	Shards int `yaml:"shards,omitempty"`
	// Sigma is the standard deviation of the log sizes of quantity skew.
	Sigma float64 `yaml:"sigma,omitempty"`
}

// Transform is a fixed transform of the images of idx data: each training
// and test image, scaled by data.idx.scale, is replaced by its coefficients
// once, before the run, and the model learns from them. It reads one image
// at a time, so a private model's guarantee covers it unchanged.
type Transform struct {
	// Kind is scatternet: the wavelet scattering transform of order 1 or 2
	// (Kymatio's Scattering2D; Oyallon & Mallat 2015), the features of
	// Tramèr & Boneh's private linear models (ICLR 2021).
	Kind string `yaml:"kind"`
	// Scales is J: wavelets of scales 2^0 … 2^(J−1), averaging and
	// subsampling by 2^J (1 … 6, and 2^J smaller than the images' sides).
	Scales int `yaml:"scales"`
	// Angles is L, the orientations over half a turn (1 … 16).
	Angles int `yaml:"angles"`
	// Order is the largest order of the coefficients, 1 or 2.
	Order int `yaml:"order"`
	// Groups, if not 0, normalizes each image's 1 + JL (+ L²J(J−1)/2 at
	// order 2) channels in that many groups (group normalization without an
	// affine map): each group's coefficients centred and divided by the
	// square root of their variance plus 10⁻⁵. It must divide the number of
	// channels.
	Groups int `yaml:"groups,omitempty"`
}

// ScatterConfig returns the transform's parameters.
func (t *Transform) ScatterConfig() scatter.Config {
	return scatter.Config{J: t.Scales, L: t.Angles, Order: t.Order, Groups: t.Groups}
}

// pooledKinds are the data kinds read or drawn as one pool that
// data.partition deals out.
var pooledKinds = []string{"libsvm", "idx", "blobs"}
