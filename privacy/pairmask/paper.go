package pairmask

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// PaperParams holds the parameters of the paper mode, the construction of paper 001
// Definition 2, eqs. (52)–(54) / thesis eqs. (4.58)–(4.60).
type PaperParams struct {
	// T is the positive integer t of the multiplier a = tπ of the "×a mod π"
	// step. The ratio of two residues cancels π, so the step is
	// v = frac(t·e^{−v_ℓ v_m}), which is U(0, 1) for every integer t ≥ 1. T = 1
	// keeps full precision; larger T loses log₂T bits.
	T int
	// Sigma is σ_g, the intended standard deviation of each mask coordinate.
	Sigma float64
	// Literal applies the printed scale √2/σ_g (variance 4/σ_g²) instead of
	// σ_g/√2, to reproduce the erratum. Never use it in a run.
	Literal bool
}

// Validate reports whether the parameters are usable.
func (p PaperParams) Validate() error {
	if p.T < 1 {
		return fmt.Errorf("paper-mode multiplier t = %d must be a positive integer", p.T)
	}
	if !(p.Sigma > 0) || math.IsInf(p.Sigma, 1) {
		return fmt.Errorf("paper-mode σ_g = %g must be positive and finite", p.Sigma)
	}
	return nil
}

// scale returns the Laplace scale of the masks: σ_g/√2, or √2/σ_g if Literal.
func (p PaperParams) scale() float64 {
	if p.Literal {
		return math.Sqrt2 / p.Sigma
	}
	return p.Sigma / math.Sqrt2
}

// PaperKeys are one agent's secret keys for one pair in the paper mode: two
// keys v, v′ per coordinate, U(0, 1) for an agent in N₊ and Gamma(2, 1) for an
// agent in N₋. Draw fresh keys for every pair, slot and coordinate: keys shared
// by two pairs would make their masks dependent. The keys are sealed and
// format as "[paper keys]". Copies of a PaperKeys share its keys.
type PaperKeys struct {
	keys *sealed[[]float64] // v_c at 2c, v′_c at 2c+1
}

// NewPaperKeys returns zero keys for masks of dim coordinates; call Draw
// before use.
func NewPaperKeys(dim int) PaperKeys {
	keys := make([]float64, 2*dim)
	return PaperKeys{keys: seal(&keys)}
}

// Draw draws fresh keys for role from r, the agent's own key stream: U[0, 1)
// for Plus, Gamma(2, 1) for Minus (gonum's distuv.Gamma with shape Alpha = 2
// and rate Beta = 1).
func (k PaperKeys) Draw(role Role, r *rand.Rand) {
	v := *k.keys.v
	switch role {
	case Plus:
		for i := range v {
			v[i] = r.Float64()
		}
	case Minus:
		gamma := distuv.Gamma{Alpha: 2, Beta: 1, Src: r}
		for i := range v {
			v[i] = gamma.Rand()
		}
	default:
		panic(fmt.Sprintf("pairmask: invalid %v", role))
	}
}

// Public writes the values the agent sends its partner (relayed by the
// receiver): e^{−v_c} at 2c and e^{−v′_c} at 2c+1. len(dst) must be 2·dim.
func (k PaperKeys) Public(dst []float64) {
	keys := *k.keys.v
	if len(dst) != len(keys) {
		panic(fmt.Sprintf("pairmask: Public into %d values, want %d", len(dst), len(keys)))
	}
	for i, v := range keys {
		dst[i] = math.Exp(-v)
	}
}

// Format prints "[paper keys]" whatever the verb.
func (PaperKeys) Format(f fmt.State, _ rune) { fmt.Fprint(f, "[paper keys]") }

// Mask overwrites dst with the pair's mask from this agent's keys and its
// partner's public values (as written by the partner's Public):
//
//	g_c = scale · ln(frac(t·e^{−v_ℓ v_m}) / frac(t·e^{−v′_ℓ v′_m})),
//
// scale = σ_g/√2. U·Gamma(2,1) is Exp(1) (paper 001 App. E), so e^{−v_ℓ v_m} and
// frac(t·e^{−v_ℓ v_m}) are U(0, 1), and the log-ratio of two independent
// uniforms is a standard Laplace. Both agents of the pair get bit-identical
// masks. The residues are taken in (0, 1] rather than [0, 1) so the logarithm
// is finite; the two differ on a set of probability zero.
//
// Bit-identical masks need a symmetric evaluation: ℓ computing
// (e^{−v_m})^{v_ℓ} and m computing (e^{−v_ℓ})^{v_m} round differently. Both
// sides therefore use the keys as the partner sees them, ṽ = −ln(e^{−v}), and
// evaluate e^{−ṽ_ℓ ṽ_m} with a commutative product. That this needs only the two
// public values is the weakness of the real-valued exchange (spec §3.3): the
// "secret" is computable by anyone who relays the public values.
func (p PaperParams) Mask(dst []float64, mine PaperKeys, peerPublic []float64) {
	keys := *mine.keys.v
	if len(peerPublic) != 2*len(dst) || len(keys) != 2*len(dst) {
		panic(fmt.Sprintf("pairmask: Mask of %d coordinates with %d keys and %d public values", len(dst), len(keys), len(peerPublic)))
	}
	b, t := p.scale(), float64(p.T)
	for c := range dst {
		u := sharedUniform(keys[2*c], peerPublic[2*c], t)
		u2 := sharedUniform(keys[2*c+1], peerPublic[2*c+1], t)
		dst[c] = b * (math.Log(u) - math.Log(u2))
	}
}

// sharedUniform returns frac(t·e^{−v_ℓ v_m}) in (0, 1] from one side's key v
// and the other side's public value e^{−v_peer}.
func sharedUniform(v, peerPublic, t float64) float64 {
	lnOwn, lnPeer := math.Log(math.Exp(-v)), math.Log(peerPublic)
	x := t * math.Exp(-(lnOwn * lnPeer))
	if r := x - math.Floor(x); r > 0 {
		return r
	}
	return 1
}
