package noise

import (
	"fmt"
	"math"
	"math/rand/v2"

	"maple/internal/enum"
)

// Mechanism is a noise distribution.
type Mechanism int

const (
	// Laplace is the zero-mean Laplace distribution with scale σ/√2.
	Laplace Mechanism = iota
	// Gaussian is the zero-mean normal distribution with standard deviation σ.
	Gaussian
)

var mechanismNames = enum.Of[Mechanism]("noise mechanism", "laplace", "gaussian")

// String returns the scenario-file name of the mechanism.
func (m Mechanism) String() string { return mechanismNames.String(m) }

// ParseMechanism returns the mechanism named s ("laplace" or "gaussian").
func ParseMechanism(s string) (Mechanism, error) { return mechanismNames.Parse(s) }

// LaplaceScale returns the Laplace scale b = std/√2 whose variance 2b² is std².
func LaplaceScale(std float64) float64 {
	return std / math.Sqrt2
}

// Fill overwrites dst with i.i.d. zero-mean draws of standard deviation std
// from r.
func (m Mechanism) Fill(dst []float64, std float64, r *rand.Rand) {
	clear(dst)
	m.Add(dst, std, r)
}

// Add adds to each element of dst an independent zero-mean draw of standard
// deviation std from r. The draws are those Fill would produce.
func (m Mechanism) Add(dst []float64, std float64, r *rand.Rand) {
	switch m {
	case Laplace:
		b := LaplaceScale(std)
		for i := range dst {
			dst[i] += LaplaceFromUint64(r.Uint64(), b)
		}
	case Gaussian:
		for i := range dst {
			dst[i] += std * r.NormFloat64()
		}
	default:
		panic(fmt.Sprintf("noise: invalid %v", m))
	}
}

// LaplaceFromUint64 maps one uniformly random 64-bit word to a zero-mean Laplace
// variate of scale b: the sign is bit 63, and the magnitude is b·(−ln u), the
// inverse CDF of the exponential distribution, with u = (k+1)/2⁵³ ∈ (0, 1] built
// from the low 53 bits k. The two parts use disjoint bits, so they are
// independent, and u is exact in float64 and never 0, so the result is finite;
// its magnitude is at most b·53·ln 2 ≈ 36.7b, a truncation of probability 2⁻⁵³.
//
// The sign is applied by flipping the sign bit of the magnitude, which is what
// negating a float64 does, rather than by a branch on a random bit, which
// the processor mispredicts half the time (a tenth of `decentralized/fig5`'s
// CPU).
func LaplaceFromUint64(x uint64, b float64) float64 {
	u := float64(x&(1<<53-1)+1) * 0x1p-53
	e := -b * math.Log(u)
	return math.Float64frombits(math.Float64bits(e) ^ x&(1<<63))
}
