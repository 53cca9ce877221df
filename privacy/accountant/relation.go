package accountant

import (
	"fmt"

	"maple/internal/enum"
)

// Relation is the neighbouring relation a guarantee is stated for: which
// pairs of data sets (of records: examples for DP-SGD, clients for
// DP-FedAvg) the mechanism must not tell apart.
type Relation int

const (
	// AddRemove: one data set holds one record more than the other. For a
	// sum of contributions clipped to ℓ2 norm C the two sums differ by the
	// one contribution, ‖Δ‖ ≤ C: the sensitivity is C. Under Poisson
	// sampling the record is absent from the smaller set and drawn with
	// probability q from the larger, so one round is dominated by the pair
	// ((1 − q)N(0, σ²) + qN(C, σ²), N(0, σ²)) in one direction ("remove")
	// and the same pair swapped in the other ("add"); the direction is the
	// same in every round, so each is composed on its own and δ is the
	// larger of the two.
	AddRemove Relation = iota
	// ReplaceOne (substitution): the two data sets differ in one record's
	// value, x in one and x′ in the other, both clipped to C. The two sums
	// differ by x − x′, ‖Δ‖ ≤ 2C: the sensitivity is 2C. Under Poisson
	// sampling the record is drawn with the same probability q from both,
	// and the rest of the sum is common to both, so one round is dominated
	// by the pair ((1 − q)N(0, σ²) + qN(C, σ²), (1 − q)N(0, σ²) + qN(−C,
	// σ²)) — the two values at opposite ends of the ball, not a single
	// component shifted by 2C (at q = 1 it is the Gaussian mechanism of
	// sensitivity 2C).
	ReplaceOne
)

var relationNames = enum.Of[Relation]("neighbouring relation", "add-remove", "replace-one")

// String returns the relation's name: add-remove or replace-one.
func (r Relation) String() string { return relationNames.String(r) }

// ParseRelation returns the relation named s ("add-remove" or
// "replace-one").
func ParseRelation(s string) (Relation, error) { return relationNames.Parse(s) }

// Sensitivity returns the ℓ2 sensitivity that the relation implies for a
// sum of contributions clipped to ℓ2 norm clip: clip for AddRemove, 2·clip
// for ReplaceOne. (The privacy-loss accountant does not reduce ReplaceOne
// to a shift of 2·clip when records are sampled: see ReplaceOne.)
func (r Relation) Sensitivity(clip float64) float64 {
	switch r {
	case AddRemove:
		return clip
	case ReplaceOne:
		return 2 * clip
	}
	panic(fmt.Sprintf("accountant: invalid %v", r))
}
