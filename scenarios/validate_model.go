package scenarios

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"maple/algorithms/data"
	"maple/algorithms/data/scatter"
	"maple/algorithms/loss"
)

// validateModel checks the loss section and how it fits the data's labels:
// real targets need least squares, ±1 labels logistic regression, class
// labels softmax, mlp or cnn.
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
	case "idx":
		if l.Kind != "softmax" && l.Kind != "mlp" && l.Kind != "cnn" {
			v.Fail("loss.kind", "multi-class data (kind idx) need loss softmax, mlp or cnn, got %s", l.Kind)
		}
	case "blobs":
		if l.Kind != "softmax" && l.Kind != "mlp" {
			v.Fail("loss.kind", "multi-class data (kind blobs) need loss softmax or mlp, got %s", l.Kind)
		}
	}
	if err != nil {
		return
	}
	multi := kind == loss.Softmax || kind == loss.MLP || kind == loss.CNN
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
	if kind == loss.CNN {
		v.validateCNN(sc)
	} else {
		v.Unused("loss.architecture", "only loss cnn has a network")
		v.Unused("loss.layers", "only loss cnn has layers")
		v.Unused("loss.image", "only loss cnn reads images")
	}
	v.OneOf("loss.optimum", l.Optimum, []string{"solve", "none"})
	if (kind == loss.MLP || kind == loss.CNN) && l.Optimum == "solve" {
		v.Fail("loss.optimum", "the %s loss is not convex: there is no unique minimizer w^o to measure an MSD against (use none, its default)", l.Kind)
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

// validateCNN checks a cnn's network: exactly one of loss.architecture and
// loss.layers, every layer's type and the fields that apply to it, and the
// image shape; with loss.image set, the layers must fit it.
func (v *Validator) validateCNN(sc *Scenario) {
	l := &sc.Loss
	if sc.Data.Kind != "idx" {
		v.Fail("loss.kind", "the cnn reads images: it needs data.kind idx, got %s", sc.Data.Kind)
	}
	switch {
	case l.Architecture == "" && len(l.Layers) == 0:
		v.Fail("loss.architecture", "the cnn needs its network: loss.architecture (mcmahan-cnn or papernot-cnn) or loss.layers")
	case l.Architecture != "" && len(l.Layers) != 0:
		v.Fail("loss.layers", "does not apply: loss.architecture %s names the network", l.Architecture)
	case l.Architecture != "":
		_, err := loss.Architecture(l.Architecture, l.Classes)
		v.Parse("loss.architecture", err)
	}
	for i, ly := range l.Layers {
		f := fmt.Sprintf("loss.layers[%d]", i)
		kind, err := loss.ParseLayerKind(ly.Type)
		v.Parse(f+".type", err)
		if err != nil {
			continue
		}
		window := kind == loss.LayerConv || kind == loss.LayerMaxPool || kind == loss.LayerAvgPool
		v.Absent(f+".channels", ly.Channels != 0 && kind != loss.LayerConv, "only a conv layer has output channels")
		v.Absent(f+".kernel", ly.Kernel != 0 && !window, "only conv and pooling layers have a window")
		v.Absent(f+".stride", ly.Stride != 0 && !window, "only conv and pooling layers have a stride")
		v.Absent(f+".padding", ly.Padding != 0 && kind != loss.LayerConv, "only a conv layer is padded")
		v.Absent(f+".units", ly.Units != 0 && kind != loss.LayerDense, "only a dense layer has units")
		v.Absent(f+".groups", ly.Groups != 0 && kind != loss.LayerGroupNorm, "only a groupnorm layer has groups")
		tempered := kind == loss.LayerTemperedSigmoid
		v.Absent(f+".scale", ly.Scale != 0 && !tempered, "only a tempered-sigmoid layer has a scale")
		v.Absent(f+".temperature", ly.Temperature != 0 && !tempered, "only a tempered-sigmoid layer has a temperature")
		v.Absent(f+".offset", ly.Offset != 0 && !tempered, "only a tempered-sigmoid layer has an offset")
		switch kind {
		case loss.LayerConv:
			v.AtLeast(f+".channels", ly.Channels, 1)
		case loss.LayerDense:
			v.AtLeast(f+".units", ly.Units, 1)
		case loss.LayerGroupNorm:
			v.AtLeast(f+".groups", ly.Groups, 1)
		case loss.LayerTemperedSigmoid:
			v.Positive(f+".scale", ly.Scale)
			v.Positive(f+".temperature", ly.Temperature)
		}
		if window {
			v.AtLeast(f+".kernel", ly.Kernel, 1)
			v.AtLeast(f+".stride", ly.Stride, 1)
			v.AtLeast(f+".padding", ly.Padding, 0)
		}
	}
	if n := len(l.Layers); n > 0 && v.err == nil {
		last := l.Layers[n-1]
		if last.Type != "dense" || last.Units != l.Classes {
			v.Fail(fmt.Sprintf("loss.layers[%d]", n-1), "the last layer must be dense with one unit per class (%d), got %s with %d units", l.Classes, last.Type, last.Units)
		}
	}
	if l.Image != nil {
		if len(l.Image) != 3 || slices.Min(l.Image) < 1 {
			v.Fail("loss.image", "must be [channels, height, width], all positive, got %v", l.Image)
			return
		}
	}
	if v.err != nil || l.Image == nil {
		return
	}
	if _, err := l.Net(0, nil); err != nil {
		v.Fail(l.NetField(err), "%v", err)
	}
}

// NetField names the scenario field an error of Net is about: a layer of
// loss.layers, or loss.architecture or loss.image.
func (l *Loss) NetField(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "image") {
		return "loss.image"
	}
	if l.Architecture != "" {
		return "loss.architecture"
	}
	if i := strings.IndexByte(msg, ']'); strings.HasPrefix(msg, "layers[") && i > 0 {
		return "loss." + msg[:i+1]
	}
	return "loss.layers"
}

// CNNLayers returns the layers of a validated cnn loss: its named
// architecture's or its loss.layers.
func (l *Loss) CNNLayers() []loss.Layer {
	if l.Architecture != "" {
		layers, _ := loss.Architecture(l.Architecture, l.Classes) // validated
		return layers
	}
	layers := make([]loss.Layer, len(l.Layers))
	for i, ly := range l.Layers {
		kind, _ := loss.ParseLayerKind(ly.Type) // validated
		layers[i] = loss.Layer{Kind: kind, Channels: ly.Channels, Kernel: ly.Kernel, Stride: ly.Stride, Padding: ly.Padding,
			Units: ly.Units, Groups: ly.Groups, Scale: ly.Scale, Temperature: ly.Temperature, Offset: ly.Offset}
	}
	return layers
}

// Net returns the network of a validated cnn loss on images of the shape
// loss.image; without it, of the data's own shape image ([channels, rows,
// cols]: the runner passes the IDX files' or the transform's), or, for
// data without one (image nil), of features pixels in one square channel.
func (l *Loss) Net(features int, image []int) (*loss.Net, error) {
	shape, err := l.imageShape(features, image)
	if err != nil {
		return nil, err
	}
	return loss.NewNet(shape, l.CNNLayers(), l.Classes)
}

// imageShape returns loss.image as a shape, or image, or a square
// single-channel image of features pixels.
func (l *Loss) imageShape(features int, image []int) (loss.Shape, error) {
	if l.Image != nil {
		image = l.Image
	}
	if len(image) == 3 {
		return loss.Shape{C: image[0], H: image[1], W: image[2]}, nil
	}
	side := int(math.Round(math.Sqrt(float64(features))))
	if side < 1 || side*side != features {
		return loss.Shape{}, fmt.Errorf("image: %d features are not a square image; set loss.image to [channels, height, width]", features)
	}
	return loss.Shape{C: 1, H: side, W: side}, nil
}
