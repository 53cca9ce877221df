package randomwalk

import (
	"fmt"
	"math"

	"maple/internal/enum"
	"maple/internal/params"
)

// Protocol is the algorithm: random-walk SGD or the gossip baseline.
type Protocol int

const (
	// Walk is random-walk SGD (Algorithms 1–3).
	Walk Protocol = iota
	// Gossip is asynchronous pairwise gossip SGD.
	Gossip
)

var protocolNames = enum.Of[Protocol]("protocol", "walk", "gossip")

// String returns the scenario-file name of the value.
func (v Protocol) String() string { return protocolNames.String(v) }

// ParseProtocol returns the value named s.
func ParseProtocol(s string) (Protocol, error) { return protocolNames.Parse(s) }

// Target is the stationary distribution the walk samples nodes from.
type Target int

const (
	// Uniform is π_i = 1/N (Algorithm 1).
	Uniform Target = iota
	// Importance is π_i ∝ L_i, or ∝ R(L_i) under a privacy mechanism
	// (Algorithms 2 and 3).
	Importance
)

var targetNames = enum.Of[Target]("walk", "uniform", "importance")

// String returns the scenario-file name of the value.
func (v Target) String() string { return targetNames.String(v) }

// ParseTarget returns the value named s.
func ParseTarget(s string) (Target, error) { return targetNames.Parse(s) }

// Mechanism privatizes the L_i an importance walk announces.
type Mechanism int

const (
	// NoMechanism announces L_i itself (Algorithm 2).
	NoMechanism Mechanism = iota
	// GammaMechanism announces R ~ Gamma(L_i/θ, θ) (Algorithm 3).
	GammaMechanism
	// TruncatedGamma clips the Gamma draw to [Privacy.Low, Privacy.High].
	TruncatedGamma
	// LaplaceMechanism announces L_i + Lap(b), raised to Privacy.Low when
	// below it (the paper's baseline; the raise is post-processing).
	LaplaceMechanism
)

var mechanismNames = enum.Of[Mechanism]("privacy scheme", "none", "gamma", "truncated-gamma", "laplace")

// String returns the scenario-file name of the value.
func (v Mechanism) String() string { return mechanismNames.String(v) }

// ParseMechanism returns the value named s.
func ParseMechanism(s string) (Mechanism, error) { return mechanismNames.Parse(s) }

// MechanismNames lists the mechanisms' names, none first.
func MechanismNames() []string { return mechanismNames.Names() }

// Weighting is the gradient weight c_i of an importance walk.
type Weighting int

const (
	// TrueL is c_i = L̄/L_i with the true constants, as Algorithm 3 is
	// printed: unbiased on average over the noise only (spec §2.4).
	TrueL Weighting = iota
	// NoisyR is c_i = R̄/R_i = 1/(N·π_i) with the announced values:
	// unbiased for every draw of the noise.
	NoisyR
)

var weightingNames = enum.Of[Weighting]("gradient weight", "true-l", "noisy-r")

// String returns the scenario-file name of the value.
func (v Weighting) String() string { return weightingNames.String(v) }

// ParseWeighting returns the value named s.
func ParseWeighting(s string) (Weighting, error) { return weightingNames.Parse(s) }

// Init is how the walks' (or gossip nodes') initial models are drawn.
type Init int

const (
	// UniformBall draws the initial model uniformly on W (the paper).
	UniformBall Init = iota
	// Zero starts from w = 0.
	Zero
)

var initNames = enum.Of[Init]("initial model", "uniform", "zero")

// String returns the scenario-file name of the value.
func (v Init) String() string { return initNames.String(v) }

// ParseInit returns the value named s.
func ParseInit(s string) (Init, error) { return initNames.Parse(s) }

// Order is when gossip's two nodes take their SGD steps.
type Order int

const (
	// StepThenAverage: both step on their own model, exchange and average
	// (the paper's "updated, exchanged and averaged").
	StepThenAverage Order = iota
	// AverageThenStep: both average, then step from the average on their
	// own data (Ram, Nedić and Veeravalli).
	AverageThenStep
)

var orderNames = enum.Of[Order]("gossip order", "step-then-average", "average-then-step")

// String returns the scenario-file name of the value.
func (v Order) String() string { return orderNames.String(v) }

// ParseOrder returns the value named s.
func ParseOrder(s string) (Order, error) { return orderNames.Parse(s) }

// StepRule is gossip's step-size counter.
type StepRule int

const (
	// GlobalStep uses γ₀/k^q with the global iteration k.
	GlobalStep StepRule = iota
	// NodeStep uses γ₀/n^q with the node's own update count n.
	NodeStep
)

var stepRuleNames = enum.Of[StepRule]("gossip step rule", "global", "per-node")

// String returns the scenario-file name of the value.
func (v StepRule) String() string { return stepRuleNames.String(v) }

// ParseStepRule returns the value named s.
func ParseStepRule(s string) (StepRule, error) { return stepRuleNames.Parse(s) }

// Privacy configures the mechanism of a private importance walk. The
// privacy targets (ε, δ) and the input range are resolved into these values
// by the caller (see privacy/gamma.Theta).
type Privacy struct {
	// Mechanism is the mechanism.
	Mechanism Mechanism
	// Theta is the Gamma noise θ > 0 (gamma and truncated-gamma).
	Theta float64
	// Low and High are the clipping range of truncated-gamma; Low is also
	// the floor Laplace outputs are raised to.
	Low, High float64
	// Scale is the Laplace scale b > 0.
	Scale float64
	// Inputs, if set, are the values the nodes privatize, one per node, in
	// place of their L_i (which still set their gradient weights): a privacy
	// audit's canary sets one node's input to an end of the mechanism's
	// input range (families/randomwalk). Nil privatizes each L_i, as the
	// paper does.
	Inputs []float64
}

// GossipConfig configures the gossip baseline.
type GossipConfig struct {
	// Order is when the two nodes step.
	Order Order
	// Step is the step-size counter.
	Step StepRule
}

// Config is one random-walk (or gossip) run's algorithm.
type Config struct {
	// Protocol is Walk or Gossip.
	Protocol Protocol
	// Target is the walk's stationary distribution.
	Target Target
	// Walks is the number of independent walks (Walk only), at least 1.
	Walks int
	// StepSize is γ₀ and Exponent is q of the step γ₀/k^q, q ∈ (1/2, 1].
	StepSize, Exponent float64
	// Radius is the radius of the ℓ2 ball W the iterates are projected on.
	Radius float64
	// Init is how initial models are drawn.
	Init Init
	// Weighting is the gradient weight of importance walks.
	Weighting Weighting
	// Privacy is the mechanism of importance walks.
	Privacy Privacy
	// Gossip configures the gossip protocol.
	Gossip GossipConfig
	// Node is what a walk's node does at each step it holds the token (nil:
	// SGD, the paper's step); gossip nodes take their own SGD steps.
	Node NodeRule
}

// Validate reports the first impossible setting.
func (c *Config) Validate() error {
	positive := func(x float64) bool { return x > 0 && !math.IsInf(x, 1) }
	switch {
	case c.Protocol != Walk && c.Protocol != Gossip:
		return fmt.Errorf("invalid %v", c.Protocol)
	case c.Protocol == Walk && c.Walks < 1:
		return fmt.Errorf("walks: need at least 1, got %d", c.Walks)
	case c.Protocol == Gossip && c.Walks != 1:
		return fmt.Errorf("walks: gossip has no walks, got %d", c.Walks)
	case !positive(c.StepSize):
		return fmt.Errorf("step size γ₀ must be positive and finite, got %v", c.StepSize)
	case !(c.Exponent > 0.5 && c.Exponent <= 1):
		return fmt.Errorf("exponent q must lie in (1/2, 1], got %v", c.Exponent)
	case !positive(c.Radius):
		return fmt.Errorf("radius of W must be positive and finite, got %v", c.Radius)
	case c.Target != Uniform && c.Target != Importance:
		return fmt.Errorf("invalid %v", c.Target)
	case c.Init != UniformBall && c.Init != Zero:
		return fmt.Errorf("invalid %v", c.Init)
	case c.Weighting != TrueL && c.Weighting != NoisyR:
		return fmt.Errorf("invalid %v", c.Weighting)
	}
	p := c.Privacy
	if p.Mechanism != NoMechanism && (c.Protocol != Walk || c.Target != Importance) {
		return fmt.Errorf("privacy mechanism %v only applies to importance walks (uniform walks and gossip announce no L)", p.Mechanism)
	}
	switch p.Mechanism {
	case NoMechanism:
	case GammaMechanism:
		if !positive(p.Theta) {
			return fmt.Errorf("gamma noise θ must be positive and finite, got %v", p.Theta)
		}
	case TruncatedGamma:
		if !positive(p.Theta) {
			return fmt.Errorf("gamma noise θ must be positive and finite, got %v", p.Theta)
		}
		if !(p.Low > 0 && p.High >= p.Low && !math.IsInf(p.High, 1)) {
			return fmt.Errorf("truncation range needs 0 < low ≤ high < ∞, got [%v, %v]", p.Low, p.High)
		}
	case LaplaceMechanism:
		if !positive(p.Scale) {
			return fmt.Errorf("the Laplace scale b must be positive and finite, got %v", p.Scale)
		}
		if !positive(p.Low) {
			return fmt.Errorf("the Laplace floor must be positive and finite, got %v", p.Low)
		}
	default:
		return fmt.Errorf("invalid %v", p.Mechanism)
	}
	if err := c.checkNode(); err != nil {
		return err
	}
	if c.Protocol == Gossip {
		if c.Gossip.Order != StepThenAverage && c.Gossip.Order != AverageThenStep {
			return fmt.Errorf("invalid %v", c.Gossip.Order)
		}
		if c.Gossip.Step != GlobalStep && c.Gossip.Step != NodeStep {
			return fmt.Errorf("invalid %v", c.Gossip.Step)
		}
	}
	return nil
}

// checkNode reports a node rule the configuration cannot run: one with a
// parameter out of its range, one on gossip, whose nodes hold no token, or
// one whose Check refuses the configuration.
func (c *Config) checkNode() error {
	if c.Node == nil {
		return nil
	}
	if c.Protocol == Gossip {
		return fmt.Errorf("node rule %T: gossip has no walk (its nodes take their own SGD steps)", c.Node)
	}
	if err := params.Check(c.Node); err != nil {
		return err
	}
	if ch, ok := c.Node.(Checker); ok {
		return ch.Check(c)
	}
	return nil
}

// Step returns γ₀/k^q for k ≥ 1.
func (c *Config) Step(k int) float64 {
	return c.StepSize / math.Pow(float64(k), c.Exponent)
}
