package scenarios

import (
	"slices"

	"maple/algorithms/data"
	"maple/algorithms/data/scatter"
	"maple/algorithms/loss"
)

// validateModel checks the loss section and how it fits the data's labels:
// real targets need least squares, ±1 labels logistic regression, class
// labels softmax or mlp.
func (v *Validator) validateModel(sc *Scenario) {
	l := &sc.Loss
	kind, err := loss.ParseKind(l.Kind)
	v.Parse("loss.kind", err)
	v.NonNegative("loss.rho", l.Rho)
	switch sc.Data.Kind {
	case "regression":
		if l.Kind != "least-squares" {
			v.Fail("loss.kind", "regression data need loss least-squares, got %s", l.Kind)
		}
	case "logistic", "click", "mixture":
		if l.Kind != "logistic" {
			v.Fail("loss.kind", "classification data (kind %s) need loss logistic, got %s", sc.Data.Kind, l.Kind)
		}
	case "idx", "blobs":
		if l.Kind != "softmax" && l.Kind != "mlp" {
			v.Fail("loss.kind", "multi-class data (kind %s) need loss softmax or mlp, got %s", sc.Data.Kind, l.Kind)
		}
	}
	if err != nil {
		return
	}
	multi := kind == loss.Softmax || kind == loss.MLP
	if multi {
		v.AtLeast("loss.classes", l.Classes, 2)
	} else {
		v.Unused("loss.classes", "loss.kind "+l.Kind+" has no classes")
	}
	if kind == loss.MLP {
		v.AtLeast("loss.hidden", l.Hidden, 1)
		_, err := loss.ParseActivation(l.Activation)
		v.Parse("loss.activation", err)
	} else {
		v.Unused("loss.hidden", "only loss mlp has a hidden layer")
		v.Unused("loss.activation", "only loss mlp has a hidden layer")
	}
	v.OneOf("loss.optimum", l.Optimum, []string{"solve", "none"})
	if kind == loss.MLP && l.Optimum == "solve" {
		v.Fail("loss.optimum", "the mlp loss is not convex: there is no unique minimizer w^o to measure an MSD against (use none, its default)")
	}
	if l.Optimum == "none" && sc.Privacy.Accountant != nil {
		v.Fail("privacy.accountant", "the papers' ε bound needs the optimum w^o, but loss.optimum is none")
	}
	if kind == loss.LeastSquares && (sc.Data.Kind == "libsvm" || sc.Data.Kind == "directory") {
		v.Absent("data.test_samples", sc.Data.TestSamples != 0, "loss least-squares reads real targets, which have no test metric")
		v.Absent("data.directory.test", sc.Data.Directory != nil && sc.Data.Directory.Test != "", "loss least-squares reads real targets, which have no test metric")
	}
	if p := sc.Data.Partition; p != nil && kind == loss.LeastSquares && (p.Kind == "dirichlet" || p.Kind == "shards") {
		v.Fail("data.partition.kind", "partition %s deals classes out, but loss least-squares reads real targets", p.Kind)
	}
}

// validateTransform checks the transform of idx images.
func (v *Validator) validateTransform(d *Data) {
	t := d.Transform
	if t == nil {
		return
	}
	if d.Kind != "idx" {
		v.Fail("data.transform", "only the images of idx data have a transform, but data.kind is %s", d.Kind)
		return
	}
	v.OneOf("data.transform.kind", t.Kind, []string{"scatternet"})
	if t.Kind != "scatternet" {
		return
	}
	inRange := func(field string, x, lo, hi int) bool {
		if x < lo || x > hi {
			v.Fail(field, "must lie in %d … %d, got %d", lo, hi, x)
			return false
		}
		return true
	}
	ok := inRange("data.transform.scales", t.Scales, 1, scatter.MaxJ)
	ok = inRange("data.transform.angles", t.Angles, 1, scatter.MaxL) && ok
	ok = inRange("data.transform.order", t.Order, 1, 2) && ok
	if c := t.ScatterConfig(); ok && (t.Groups < 0 || (t.Groups > 0 && c.Channels()%t.Groups != 0)) {
		v.Fail("data.transform.groups", "must be 0 or divide the %d channels of scales %d, angles %d, order %d; got %d", c.Channels(), t.Scales, t.Angles, t.Order, t.Groups)
	}
	if d.IDX != nil && d.IDX.Scale == "standardize" {
		v.Fail("data.idx.scale", "standardize uses every training image's pixels, which a transform of each image alone does not; use unit or none (data.transform.groups normalizes each image's coefficients)")
	}
}

// validateDatasets checks the sections of the idx, blobs and directory
// kinds and the partition of pooled data.
func (v *Validator) validateDatasets(d *Data) {
	v.Absent("data.idx", d.IDX != nil && d.Kind != "idx", "data.kind is "+d.Kind)
	v.Absent("data.blobs", d.Blobs != nil && d.Kind != "blobs", "data.kind is "+d.Kind)
	v.Absent("data.directory", d.Directory != nil && d.Kind != "directory", "data.kind is "+d.Kind)
	v.Absent("data.partition", d.Partition != nil && !slices.Contains(pooledKinds, d.Kind),
		"data.kind "+d.Kind+" is not dealt out from a pool (partitions apply to libsvm, idx and blobs)")
	v.validateTransform(d)
	switch d.Kind {
	case "idx":
		x := d.IDX
		if x.Images == "" {
			v.Fail("data.idx.images", "idx data need the path of an IDX file of images")
		}
		if x.Labels == "" {
			v.Fail("data.idx.labels", "idx data need the path of an IDX file of labels")
		}
		if (x.TestImages == "") != (x.TestLabels == "") {
			v.Fail("data.idx.test_images", "test_images and test_labels go together")
		}
		v.OneOf("data.idx.scale", x.Scale, []string{"unit", "standardize", "none"})
		if x.TestImages == "" {
			v.AtLeast("data.test_samples", d.TestSamples, 1)
		} else {
			v.AtLeast("data.test_samples", d.TestSamples, 0)
		}
	case "blobs":
		v.Positive("data.blobs.separation", d.Blobs.Separation)
		v.AtLeast("data.test_samples", d.TestSamples, 1)
	case "directory":
		x := d.Directory
		if x.Path == "" {
			v.Fail("data.directory.path", "directory data need the path of a directory with one file per agent")
		}
		v.OneOf("data.directory.format", x.Format, []string{"csv", "libsvm"})
		v.Absent("data.directory.header", x.Header && x.Format != "csv", "only csv files have a header")
		v.Absent("data.test_samples", d.TestSamples != 0, "directory data are read as is; the test set is data.directory.test")
	}
	p := d.Partition
	if p == nil {
		return
	}
	kind, err := data.ParsePartition(p.Kind)
	v.Parse("data.partition.kind", err)
	if kind == data.Dirichlet {
		v.Positive("data.partition.alpha", p.Alpha)
	} else {
		v.Absent("data.partition.alpha", p.Alpha != 0, "only partition dirichlet has a concentration")
	}
	if kind == data.Shards {
		v.AtLeast("data.partition.shards", p.Shards, 1)
	} else {
		v.Absent("data.partition.shards", p.Shards != 0, "only partition shards has shards")
	}
	if kind == data.Quantity {
		v.NonNegative("data.partition.sigma", p.Sigma)
	} else {
		v.Absent("data.partition.sigma", p.Sigma != 0, "only partition quantity has a size spread")
	}
}
