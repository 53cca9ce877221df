package accountant

import (
	"fmt"
	"math"
)

// Conversion is a rule turning a Rényi DP guarantee (α, ρ) into (ε, δ)-DP.
type Conversion int

const (
	// Classic is ε = ρ + ln(1/δ)/(α − 1) (Mironov 2017, Proposition 3), what
	// early TensorFlow Privacy and Opacus releases print.
	Classic Conversion = iota
	// Balle2020 is ε = ρ + ln((α − 1)/α) − (ln δ + ln α)/(α − 1) (Balle,
	// Barthe, Gaboardi, Hsu & Sato, "Hypothesis testing interpretations and
	// Rényi differential privacy", AISTATS 2020, Theorem 21), never larger
	// than Classic for α > 1, what current Opacus and dp-accounting print.
	Balle2020
)

// String names the conversion.
func (c Conversion) String() string {
	switch c {
	case Classic:
		return "classic"
	case Balle2020:
		return "balle2020"
	}
	return fmt.Sprintf("conversion(%d)", int(c))
}

// Epsilon returns the ε of (ε, delta)-DP implied by (alpha, rdp)-RDP,
// clamped at 0.
func (c Conversion) Epsilon(rdp, alpha, delta float64) float64 {
	if !(alpha > 1) {
		panic(fmt.Sprintf("accountant: Rényi order %g must exceed 1", alpha))
	}
	mustProbability("δ", delta)
	var e float64
	switch c {
	case Classic:
		e = rdp + math.Log(1/delta)/(alpha-1)
	case Balle2020:
		e = rdp + math.Log1p(-1/alpha) - (math.Log(delta)+math.Log(alpha))/(alpha-1)
	default:
		panic(fmt.Sprintf("accountant: invalid %v", c))
	}
	return max(e, 0)
}

// DefaultOrders returns the Rényi orders searched by default: 1.1, 1.2, …,
// 10.9 (the fractional orders of Opacus' DEFAULT_ALPHAS and TensorFlow
// Privacy's tutorials) and every integer from 11 to MaxOrder = 1024, with no
// gaps: the Gaussian's best order 1 + √(ln(1/δ)/ρ) passes 256 at strong
// guarantees (ρ < 4.3·10⁻⁴ at δ = 10⁻¹²), where a sparse set costs up to
// a quarter of ε.
func DefaultOrders() []float64 {
	var o []float64
	for x := 1; x < 100; x++ {
		o = append(o, 1+float64(x)/10)
	}
	for a := 11; a <= MaxOrder; a++ {
		o = append(o, float64(a))
	}
	return o
}

// BestEpsilon returns the smallest ε over orders of conv applied to
// (α, rdp(α)), and the order that achieves it. Orders where rdp is +Inf are
// skipped; if all are, ε is +Inf.
func BestEpsilon(orders []float64, rdp func(alpha float64) float64, delta float64, conv Conversion) (epsilon, order float64) {
	mustProbability("δ", delta)
	epsilon = math.Inf(1)
	for _, a := range orders {
		r := rdp(a)
		if math.IsInf(r, 1) {
			continue
		}
		if e := conv.Epsilon(r, a, delta); e < epsilon {
			epsilon, order = e, a
		}
	}
	return epsilon, order
}
