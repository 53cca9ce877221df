package accountant

import (
	"fmt"
	"math"

	"maple/internal/enum"
)

// DecentralizedEpsilon returns the bound (√2·P/σ_g)(B + B′ + √P·optDist)·i of
// paper 001 eq. (31) for P agents, noise standard deviation sigma = σ_g,
// user-chosen bounds B, B′ on the two runs' network errors, optDist =
// ‖w^o − w′^o‖ and iteration i.
func DecentralizedEpsilon(P int, sigma, B, Bprime, optDist float64, i int) float64 {
	mustPositive("σ_g", sigma)
	return epsilonScale(P, sigma) * sensitivityBound(P, B, Bprime, optDist) * iterations(i)
}

// DecentralizedSigma returns the σ_g for which DecentralizedEpsilon equals
// epsilon: √2·P·(B + B′ + √P·optDist)·i/ε.
func DecentralizedSigma(P int, epsilon, B, Bprime, optDist float64, i int) float64 {
	mustPositive("ε", epsilon)
	return math.Sqrt2 * float64(agents(P)) * sensitivityBound(P, B, Bprime, optDist) * iterations(i) / epsilon
}

// FederatedEpsilon returns the bound (√2/σ_g)(B + B′ + optDist)·i of thesis
// eq. (2.69) for federated learning with one server: DecentralizedEpsilon with
// P = 1.
func FederatedEpsilon(sigma, B, Bprime, optDist float64, i int) float64 {
	return DecentralizedEpsilon(1, sigma, B, Bprime, optDist, i)
}

// FederatedSigma returns the σ_g for which FederatedEpsilon equals epsilon:
// √2·(B + B′ + optDist)·i/ε.
func FederatedSigma(epsilon, B, Bprime, optDist float64, i int) float64 {
	return DecentralizedSigma(1, epsilon, B, Bprime, optDist, i)
}

// epsilonScale returns √2·P/σ_g.
func epsilonScale(P int, sigma float64) float64 {
	return math.Sqrt2 * float64(agents(P)) / sigma
}

func sensitivityBound(P int, B, Bprime, optDist float64) float64 {
	mustNonNegative("B", B)
	mustNonNegative("B′", Bprime)
	mustNonNegative("‖w^o − w′^o‖", optDist)
	return B + Bprime + math.Sqrt(float64(agents(P)))*optDist
}

func agents(P int) int {
	if P < 1 {
		panic(fmt.Sprintf("accountant: P = %d agents", P))
	}
	return P
}

func iterations(i int) float64 {
	if i < 0 {
		panic(fmt.Sprintf("accountant: iteration %d", i))
	}
	return float64(i)
}

func mustPositive(name string, x float64) {
	if !(x > 0) || math.IsInf(x, 1) {
		panic(fmt.Sprintf("accountant: %s = %g must be positive and finite", name, x))
	}
}

func mustNonNegative(name string, x float64) {
	if !(x >= 0) || math.IsInf(x, 1) {
		panic(fmt.Sprintf("accountant: %s = %g must be nonnegative and finite", name, x))
	}
}

// Norm is the vector norm in the exponent of the Laplace density the ε is
// stated for.
type Norm int

const (
	// L2 is the papers' convention, density ∝ exp(−√2‖x‖₂/σ_g).
	L2 Norm = iota
	// L1 is exact for i.i.d. per-coordinate Laplace noise.
	L1
)

var normNames = enum.Of[Norm]("privacy norm", "l2", "l1")

// String returns the scenario-file name of the norm.
func (n Norm) String() string { return normNames.String(n) }

// ParseNorm returns the norm named s ("l2" or "l1").
func ParseNorm(s string) (Norm, error) { return normNames.Parse(s) }

// NormFactor returns the factor by which ε (and σ_g for a target ε) computed
// from ℓ2 sensitivities is multiplied under the norm convention: 1 for L2, √M
// for L1 with M coordinates per message, from ‖x‖₁ ≤ √M‖x‖₂.
func NormFactor(norm Norm, M int) float64 {
	if M < 1 {
		panic(fmt.Sprintf("accountant: dimension M = %d", M))
	}
	switch norm {
	case L2:
		return 1
	case L1:
		return math.Sqrt(float64(M))
	}
	panic(fmt.Sprintf("accountant: invalid %v", norm))
}
