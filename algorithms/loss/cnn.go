package loss

import (
	"fmt"
	"math"
	"math/rand/v2"

	"maple/internal/enum"
)

// The convolutional networks of Kind CNN: a stack of layers on images of
// shape C×H×W, stored per example channel by channel, row by row (PyTorch's
// NCHW order, so that a flattening dense layer reads the features as
// torch.flatten does), ending in a dense layer with one output per class
// and the softmax cross-entropy of the multi-class models.
//
// Every layer with parameters stores them in the flat vector θ in PyTorch's
// state_dict order: a convolution's Cout×Cin×k×k weights then its Cout
// biases, a dense layer's U×F weights then its U biases, a group
// normalization's C scales γ then its C shifts β; the layers follow one
// another.

// LayerKind is the operation of one layer of a CNN.
type LayerKind int

const (
	// LayerConv is a 2-D convolution with Channels output channels, a
	// Kernel×Kernel window, Stride and zero Padding, and a bias per output
	// channel.
	LayerConv LayerKind = iota
	// LayerMaxPool is the maximum over Kernel×Kernel windows taken every
	// Stride pixels, channel by channel, without padding.
	LayerMaxPool
	// LayerAvgPool is the mean over Kernel×Kernel windows taken every
	// Stride pixels, channel by channel, without padding.
	LayerAvgPool
	// LayerReLU is max(x, 0) elementwise, with derivative 0 at 0.
	LayerReLU
	// LayerTanh is tanh x elementwise.
	LayerTanh
	// LayerTemperedSigmoid is Papernot et al.'s s·σ(T·x) − o elementwise
	// (Scale s, inverse Temperature T, Offset o; tanh is s = 2, T = 2,
	// o = 1).
	LayerTemperedSigmoid
	// LayerGroupNorm normalizes each example's Groups groups of consecutive
	// channels to mean 0 and variance 1 (biased variance, ε = 10⁻⁵, as
	// torch.nn.GroupNorm) and applies a scale and shift per channel. It
	// mixes no examples, unlike batch normalization, so per-example
	// gradients (DP-SGD) stay per example.
	LayerGroupNorm
	// LayerDense is a fully connected layer with Units outputs and biases,
	// on the input flattened.
	LayerDense
)

var layerNames = enum.Of[LayerKind]("layer", "conv", "maxpool", "avgpool", "relu", "tanh", "tempered-sigmoid", "groupnorm", "dense")

// String returns the scenario-file name of the layer kind.
func (k LayerKind) String() string { return layerNames.String(k) }

// ParseLayerKind returns the layer kind named s.
func ParseLayerKind(s string) (LayerKind, error) { return layerNames.Parse(s) }

// groupNormEps is torch.nn.GroupNorm's default ε.
const groupNormEps = 1e-5

// Layer is one layer of a CNN; only the fields of its Kind are read.
type Layer struct {
	Kind LayerKind
	// Channels is a convolution's number of output channels.
	Channels int
	// Kernel, Stride and Padding are a convolution's or a pooling's window
	// side, step and (convolutions only) zero padding on every side.
	Kernel, Stride, Padding int
	// Units is a dense layer's number of outputs.
	Units int
	// Groups is a group normalization's number of channel groups.
	Groups int
	// Scale, Temperature and Offset are the s, T and o of a tempered
	// sigmoid s·σ(T·x) − o.
	Scale, Temperature, Offset float64
}

// Shape is the shape of one example's activations: C channels of H×W.
type Shape struct{ C, H, W int }

// Size returns C·H·W.
func (s Shape) Size() int { return s.C * s.H * s.W }

// String returns "C×H×W".
func (s Shape) String() string { return fmt.Sprintf("%d×%d×%d", s.C, s.H, s.W) }

// Architecture returns the layers of a named network for the given number
// of classes: "mcmahan-cnn" (McMahan et al., AISTATS 2017, the MNIST CNN:
// 5×5 convolutions of 32 then 64 channels with padding 2, each followed by
// ReLU and 2×2 max pooling, a dense layer of 512 ReLU units and the
// softmax output; 1 663 370 parameters on 28×28 images) or "papernot-cnn"
// (Papernot et al., AAAI 2021, the MNIST/Fashion-MNIST CNN: a convolution
// of 16 channels 8×8 with stride 2 and padding 3, tanh, 2×2 max pooling
// with stride 1, a convolution of 32 channels 4×4 with stride 2, tanh, 2×2
// max pooling with stride 1, a dense layer of 32 tanh units and the
// softmax output; 26 010 parameters on 28×28 images).
func Architecture(name string, classes int) ([]Layer, error) {
	switch name {
	case "mcmahan-cnn":
		return []Layer{
			{Kind: LayerConv, Channels: 32, Kernel: 5, Stride: 1, Padding: 2},
			{Kind: LayerReLU},
			{Kind: LayerMaxPool, Kernel: 2, Stride: 2},
			{Kind: LayerConv, Channels: 64, Kernel: 5, Stride: 1, Padding: 2},
			{Kind: LayerReLU},
			{Kind: LayerMaxPool, Kernel: 2, Stride: 2},
			{Kind: LayerDense, Units: 512},
			{Kind: LayerReLU},
			{Kind: LayerDense, Units: classes},
		}, nil
	case "papernot-cnn":
		return []Layer{
			{Kind: LayerConv, Channels: 16, Kernel: 8, Stride: 2, Padding: 3},
			{Kind: LayerTanh},
			{Kind: LayerMaxPool, Kernel: 2, Stride: 1},
			{Kind: LayerConv, Channels: 32, Kernel: 4, Stride: 2},
			{Kind: LayerTanh},
			{Kind: LayerMaxPool, Kernel: 2, Stride: 1},
			{Kind: LayerDense, Units: 32},
			{Kind: LayerTanh},
			{Kind: LayerDense, Units: classes},
		}, nil
	}
	return nil, fmt.Errorf("unknown architecture %q (expected mcmahan-cnn or papernot-cnn)", name)
}

// Net is a CNN's layers with their shapes and the places of their
// parameters in θ. It is immutable once built: copies of a Loss share it.
type Net struct {
	input  Shape
	layers []Layer
	in     []Shape // in[i] is layer i's input shape, in[len(layers)] the logits'
	off    []int   // layer i's parameters are θ[off[i] : off[i+1]]
	// perOff[i] is where layer i's parameters sit among one example's
	// stored gradients of the convolutions and group normalizations
	// (perDim in all); −1 for the other layers.
	perOff []int
	perDim int
}

// NewNet checks the layers on images of the given shape and returns the
// network: every window must fit its input, a group normalization's groups
// must divide its channels, and the last layer must be dense with one unit
// per class. The error names the layer by its index.
func NewNet(input Shape, layers []Layer, classes int) (*Net, error) {
	if input.C < 1 || input.H < 1 || input.W < 1 {
		return nil, fmt.Errorf("image: shape %v must be positive", input)
	}
	if len(layers) == 0 || layers[len(layers)-1].Kind != LayerDense {
		return nil, fmt.Errorf("layers: the last layer must be dense, with one unit per class")
	}
	if u := layers[len(layers)-1].Units; u != classes {
		return nil, fmt.Errorf("layers[%d]: the output layer has %d units but there are %d classes", len(layers)-1, u, classes)
	}
	nt := &Net{input: input, layers: append([]Layer(nil), layers...)}
	nt.in = append(nt.in, input)
	nt.off = append(nt.off, 0)
	cur := input
	for i, ly := range layers {
		var out Shape
		params := 0
		perOff := -1
		window := func() error {
			if ly.Kernel < 1 || ly.Stride < 1 || ly.Padding < 0 {
				return fmt.Errorf("layers[%d] (%v): kernel and stride must be at least 1 and padding non-negative, got %d, %d, %d", i, ly.Kind, ly.Kernel, ly.Stride, ly.Padding)
			}
			h, w := cur.H+2*ly.Padding-ly.Kernel, cur.W+2*ly.Padding-ly.Kernel
			if h < 0 || w < 0 {
				return fmt.Errorf("layers[%d] (%v): a %d×%d window does not fit the %v input", i, ly.Kind, ly.Kernel, ly.Kernel, cur)
			}
			out.H, out.W = h/ly.Stride+1, w/ly.Stride+1
			return nil
		}
		switch ly.Kind {
		case LayerConv:
			if ly.Channels < 1 {
				return nil, fmt.Errorf("layers[%d] (conv): channels must be at least 1, got %d", i, ly.Channels)
			}
			if err := window(); err != nil {
				return nil, err
			}
			out.C = ly.Channels
			params = ly.Channels*cur.C*ly.Kernel*ly.Kernel + ly.Channels
			perOff = nt.perDim
		case LayerMaxPool, LayerAvgPool:
			if ly.Padding != 0 {
				return nil, fmt.Errorf("layers[%d] (%v): pooling takes no padding", i, ly.Kind)
			}
			if err := window(); err != nil {
				return nil, err
			}
			out.C = cur.C
		case LayerReLU, LayerTanh:
			out = cur
		case LayerTemperedSigmoid:
			if !(ly.Scale > 0) || !(ly.Temperature > 0) || math.IsInf(ly.Scale, 0) || math.IsInf(ly.Temperature, 0) || math.IsNaN(ly.Offset) || math.IsInf(ly.Offset, 0) {
				return nil, fmt.Errorf("layers[%d] (tempered-sigmoid): scale and temperature must be positive and finite, offset finite, got %v, %v, %v", i, ly.Scale, ly.Temperature, ly.Offset)
			}
			out = cur
		case LayerGroupNorm:
			if ly.Groups < 1 || cur.C%ly.Groups != 0 {
				return nil, fmt.Errorf("layers[%d] (groupnorm): groups %d must divide the %d channels", i, ly.Groups, cur.C)
			}
			out = cur
			params = 2 * cur.C
			perOff = nt.perDim
		case LayerDense:
			if ly.Units < 1 {
				return nil, fmt.Errorf("layers[%d] (dense): units must be at least 1, got %d", i, ly.Units)
			}
			out = Shape{C: ly.Units, H: 1, W: 1}
			params = ly.Units*cur.Size() + ly.Units
		default:
			return nil, fmt.Errorf("layers[%d]: kind %v", i, ly.Kind)
		}
		if perOff >= 0 {
			nt.perDim += params
		}
		nt.perOff = append(nt.perOff, perOff)
		nt.in = append(nt.in, out)
		nt.off = append(nt.off, nt.off[i]+params)
		cur = out
	}
	return nt, nil
}

// Input returns the shape of the images the network reads.
func (nt *Net) Input() Shape { return nt.input }

// Dim returns the number of parameters.
func (nt *Net) Dim() int { return nt.off[len(nt.layers)] }

// Classes returns the number of outputs.
func (nt *Net) Classes() int { return nt.in[len(nt.layers)].C }

// MultiplyAdds returns the multiply-adds of one example's forward pass
// through the convolutions and dense layers: a convolution's every output
// value takes a window of Cin·k·k inputs, a dense unit all of its inputs.
// A convolution's weights serve every pixel, so this is far more than the
// parameters (McMahan's CNN: 12.3 M against 1.66 M); the other layers' few
// operations per value are left out.
func (nt *Net) MultiplyAdds() int {
	n := 0
	for i, ly := range nt.layers {
		in, out := nt.in[i], nt.in[i+1]
		switch ly.Kind {
		case LayerConv:
			n += out.Size() * in.C * ly.Kernel * ly.Kernel
		case LayerDense:
			n += out.C * in.Size()
		}
	}
	return n
}

// init draws PyTorch's default initialization from r, layer by layer in θ's
// order: a convolution's or dense layer's weights are kaiming_uniform_ with
// a = √5, uniform on ±gain·√(3/fan_in) with gain √(2/(1 + 5)), which is
// ±1/√fan_in, and its biases uniform on ±1/√fan_in (fan_in = Cin·k·k for a
// convolution, the input size for a dense layer); a group normalization's
// scales are 1 and shifts 0.
func (nt *Net) init(r *rand.Rand) []float64 {
	theta := make([]float64, nt.Dim())
	for i, ly := range nt.layers {
		p := theta[nt.off[i]:nt.off[i+1]]
		switch ly.Kind {
		case LayerConv, LayerDense:
			fanIn := nt.in[i].Size()
			if ly.Kind == LayerConv {
				fanIn = nt.in[i].C * ly.Kernel * ly.Kernel
			}
			bound := 1 / math.Sqrt(float64(fanIn))
			for j := range p {
				p[j] = bound * (2*r.Float64() - 1)
			}
		case LayerGroupNorm:
			for j := range nt.in[i].C {
				p[j] = 1
			}
		}
	}
	return theta
}
