package diffusion

import (
	"fmt"
	"math"

	"maple/internal/enum"
	"maple/internal/params"
	"maple/privacy/homomorphic"
	"maple/privacy/noise"
	"maple/privacy/pairmask"
)

// Stage indices of the combination steps, as in paper 001 eqs. (21)–(23): stage
// 1 forms φ from w, stage 0 forms ψ from φ (and takes the gradient step), stage
// 2 forms w from ψ. They run in the order 1, 0, 2 within an iteration.
const (
	// Stage0 combines φ into ψ with matrix A0 and takes the gradient step.
	Stage0 = 0
	// Stage1 combines w into φ with matrix A1.
	Stage1 = 1
	// Stage2 combines ψ into w with matrix A2.
	Stage2 = 2
)

// stageOrder is the order in which the stages of one iteration run.
var stageOrder = [3]int{Stage1, Stage0, Stage2}

// stagePos is the inverse of stageOrder: stage j runs stagePos[j]-th.
var stagePos = [3]int{Stage1: 0, Stage0: 1, Stage2: 2}

// ParseStage returns the stage named s ("a0", "a1" or "a2", the matrix of
// that stage in a scenario's list of stages that use A).
func ParseStage(s string) (int, error) {
	switch s {
	case "a0":
		return Stage0, nil
	case "a1":
		return Stage1, nil
	case "a2":
		return Stage2, nil
	}
	return 0, fmt.Errorf("unknown stage %q (expected a0, a1 or a2)", s)
}

// Strategy is a preset choice of (A0, A1, A2), each the network matrix A or
// the identity I (spec §2.2).
type Strategy int

const (
	// Consensus uses A0 = A, A1 = A2 = I: the gradient is taken at the old own
	// iterate w_{p,i−1} (= φ_p, since A1 = I).
	Consensus Strategy = iota
	// CTA (combine then adapt) uses A1 = A.
	CTA
	// ATC (adapt then combine) uses A2 = A.
	ATC
	// General takes the stages that use A from Config.Stages.
	General
)

var strategyNames = enum.Of[Strategy]("strategy", "consensus", "cta", "atc", "general")

// String returns the scenario-file name of the value.
func (v Strategy) String() string { return strategyNames.String(v) }

// ParseStrategy returns the value named s.
func ParseStrategy(s string) (Strategy, error) { return strategyNames.Parse(s) }

// Gradient is the gradient oracle ∇̂J_p.
type Gradient int

const (
	// Full uses the whole local dataset, ∇J_p.
	Full Gradient = iota
	// Sample uses one sample drawn uniformly.
	Sample
	// Batch uses Config.Batch distinct samples drawn uniformly.
	Batch
)

var gradientNames = enum.Of[Gradient]("gradient oracle", "full", "sample", "batch")

// String returns the scenario-file name of the value.
func (v Gradient) String() string { return gradientNames.String(v) }

// ParseGradient returns the value named s.
func ParseGradient(s string) (Gradient, error) { return gradientNames.Parse(s) }

// Scheme is the privacy scheme applied to every message (spec §3).
type Scheme int

const (
	// None sends the plain values.
	None Scheme = iota
	// Random adds independent noise per directed edge, stage and iteration
	// (scheme R, paper 001 eqs. 24–26).
	Random
	// GraphHomomorphic adds one draw per agent, stage and iteration, offset
	// in the sender's own self term so that it cancels in the Perron-weighted
	// network sum (scheme GH, eqs. 43–46).
	GraphHomomorphic
	// LocalGraphHomomorphic adds pairwise masks that cancel in every
	// receiver's aggregate (scheme LGH, eqs. 49–54).
	LocalGraphHomomorphic
)

var schemeNames = enum.Of[Scheme]("privacy scheme", "none", "random", "graph-homomorphic", "local-graph-homomorphic")

// String returns the scenario-file name of the value.
func (v Scheme) String() string { return schemeNames.String(v) }

// ParseScheme returns the value named s.
func ParseScheme(s string) (Scheme, error) { return schemeNames.Parse(s) }

// SchemeNames lists the scenario-file names of the schemes, none first.
func SchemeNames() []string { return schemeNames.Names() }

// Privacy configures the privacy scheme. Its zero value is no privacy; the
// zero values of Form, Keys and Roles are the defaults ratio-free, secure and
// alternating.
type Privacy struct {
	// Scheme is the privacy scheme; None ignores the other fields.
	Scheme Scheme
	// Mechanism is the noise distribution of Random and GraphHomomorphic.
	// LocalGraphHomomorphic masks are Laplace by construction.
	Mechanism noise.Mechanism
	// Std is σ_g, the standard deviation of every noise or mask coordinate
	// (variance σ_g²).
	Std float64
	// SelfNoise also perturbs the self term under Random (spec §3.1: the
	// DP definition only involves the neighbours, so the default is off).
	SelfNoise bool
	// Form is the GH construction; Ratio is refused unless A is doubly
	// stochastic with symmetric support.
	Form homomorphic.Form
	// Keys is how LGH pairs obtain their masks.
	Keys pairmask.Mode
	// Roles is how an LGH receiver splits its neighbours into N₊ and N₋.
	Roles pairmask.Rule
	// Partner is what LGH masks do about a sender's partner that is down in
	// a round of a time-varying graph.
	Partner PartnerPolicy
	// OSKeys draws the LGH X25519 key pairs from the operating system's
	// randomness (pairmask.NewRandomKeyPair) instead of each agent's
	// StreamKey stream: nobody can recompute them from the run seed, and the
	// masks still cancel, but the public keys differ between executions.
	// Secure keys only.
	OSKeys bool
}

// Config is one decentralized-learning set-up: the recursion, its step size,
// its gradient oracle and its privacy scheme.
type Config struct {
	// Strategy chooses which stage matrices are A.
	Strategy Strategy
	// Stages, for General only, says which of A0, A1, A2 (indexed by stage)
	// are the network matrix A; the others are I.
	Stages [3]bool
	// StepSize is μ.
	StepSize float64
	// Gradient is the gradient oracle and Batch its sample count for Batch.
	Gradient Gradient
	Batch    int
	// Privacy is the privacy scheme.
	Privacy Privacy
	// Combine is the receivers' combination step (nil: Linear, the
	// papers').
	Combine Combiner
	// Adapt is the agents' adaptation step (nil: SGD, the papers').
	Adapt Adapter
}

// Uses reports, per stage index, whether that stage's matrix is A (true) or
// the identity (false).
func (c *Config) Uses() [3]bool {
	switch c.Strategy {
	case Consensus:
		return [3]bool{Stage0: true}
	case CTA:
		return [3]bool{Stage1: true}
	case ATC:
		return [3]bool{Stage2: true}
	}
	return c.Stages
}

// Validate reports the first problem with c that does not depend on the
// network or the data.
func (c *Config) Validate() error {
	if c.Strategy < Consensus || c.Strategy > General {
		return fmt.Errorf("invalid strategy %v", c.Strategy)
	}
	if c.Strategy != General && c.Stages != [3]bool{} {
		return fmt.Errorf("stages only apply to strategy general (strategy %v fixes its stages)", c.Strategy)
	}
	if !(c.StepSize > 0) || math.IsInf(c.StepSize, 1) {
		return fmt.Errorf("step size μ = %g must be positive and finite", c.StepSize)
	}
	switch c.Gradient {
	case Full, Sample:
		if c.Batch != 0 {
			return fmt.Errorf("batch size %d only applies to gradient batch", c.Batch)
		}
	case Batch:
		if c.Batch < 1 {
			return fmt.Errorf("batch size %d must be at least 1", c.Batch)
		}
	default:
		return fmt.Errorf("invalid gradient oracle %v", c.Gradient)
	}
	if err := params.Check(c.Combine); err != nil {
		return err
	}
	if err := params.Check(c.Adapt); err != nil {
		return err
	}
	if s := c.Privacy.Scheme; !c.linear() && (s == GraphHomomorphic || s == LocalGraphHomomorphic) {
		return fmt.Errorf("scheme %v cancels its noise only in the linear combination, not with the combination step %T", s, c.Combine)
	}
	return c.Privacy.validate()
}

func (p *Privacy) validate() error {
	if p.Scheme < None || p.Scheme > LocalGraphHomomorphic {
		return fmt.Errorf("invalid privacy scheme %v", p.Scheme)
	}
	if p.Mechanism != noise.Laplace && p.Mechanism != noise.Gaussian {
		return fmt.Errorf("invalid noise mechanism %v", p.Mechanism)
	}
	if p.Scheme == None {
		if p.Std != 0 {
			return fmt.Errorf("noise standard deviation %g given without a privacy scheme", p.Std)
		}
	} else if !(p.Std > 0) || math.IsInf(p.Std, 1) {
		return fmt.Errorf("noise standard deviation σ_g = %g must be positive and finite for scheme %v", p.Std, p.Scheme)
	}
	if p.SelfNoise && p.Scheme != Random {
		return fmt.Errorf("self noise only applies to scheme random, not %v", p.Scheme)
	}
	if p.Form != homomorphic.RatioFree && p.Scheme != GraphHomomorphic {
		return fmt.Errorf("form %v only applies to scheme graph-homomorphic", p.Form)
	}
	if p.Form != homomorphic.RatioFree && p.Form != homomorphic.Ratio {
		return fmt.Errorf("invalid graph-homomorphic form %v", p.Form)
	}
	return p.validateLGH()
}

func (p *Privacy) validateLGH() error {
	if p.Keys < pairmask.Secure || p.Keys > pairmask.Oracle {
		return fmt.Errorf("invalid LGH key mode %v", p.Keys)
	}
	if p.Roles != pairmask.Alternating && p.Roles != pairmask.Parity {
		return fmt.Errorf("invalid LGH role rule %v", p.Roles)
	}
	if p.OSKeys && (p.Scheme != LocalGraphHomomorphic || p.Keys != pairmask.Secure) {
		return fmt.Errorf("key pairs from the operating system's randomness only apply to secure local graph-homomorphic keys")
	}
	if p.Partner < IgnorePartner || p.Partner > Rekeying {
		return fmt.Errorf("invalid dropped-partner policy %v", p.Partner)
	}
	if p.Scheme != LocalGraphHomomorphic {
		if p.Keys != pairmask.Secure || p.Roles != pairmask.Alternating {
			return fmt.Errorf("keys and roles only apply to scheme local-graph-homomorphic")
		}
		if p.Partner != IgnorePartner {
			return fmt.Errorf("dropped-partner policies only apply to scheme local-graph-homomorphic")
		}
		return nil
	}
	if p.Partner != IgnorePartner && p.Keys == pairmask.Paper {
		return fmt.Errorf("dropped-partner policy %v needs secure or oracle keys (paper keys are drawn per iteration along the base graph)", p.Partner)
	}
	if p.Mechanism != noise.Laplace {
		return fmt.Errorf("local graph-homomorphic masks are Laplace by construction; mechanism %v does not apply", p.Mechanism)
	}
	return nil
}

// exchangesKeys reports whether the scheme is LGH with key messages (secure or
// paper mode), i.e. whether there is a set-up protocol.
func (p *Privacy) exchangesKeys() bool {
	return p.Scheme == LocalGraphHomomorphic && p.Keys != pairmask.Oracle
}
