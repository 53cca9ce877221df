package pairmask

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/floats"

	"maple/internal/enum"
)

// Rule is how a receiver splits its neighbours into the sets N₊ and N₋.
type Rule int

const (
	// Alternating sorts N_k∖{k} and assigns the 1st, 3rd, … to N₊ and the
	// 2nd, 4th, … to N₋, so the sizes differ by at most one.
	Alternating Rule = iota
	// Parity assigns even ids to N₊ and odd ids to N₋, as in the paper's
	// example (agent 1 with neighbours 2…6: N₊ = {2, 4, 6}, N₋ = {3, 5}). If
	// that leaves one set empty it falls back to Alternating.
	Parity
)

var ruleNames = enum.Of[Rule]("role-split rule", "alternating", "parity")

// String returns the scenario-file name of the rule.
func (r Rule) String() string { return ruleNames.String(r) }

// ParseRule returns the rule named s ("alternating" or "parity").
func ParseRule(s string) (Rule, error) { return ruleNames.Parse(s) }

// Role is the set a neighbour belongs to for one receiver.
type Role int8

const (
	// Plus marks ℓ ∈ N₊, which adds its pair masks.
	Plus Role = 1
	// Minus marks m ∈ N₋, which subtracts its pair masks.
	Minus Role = -1
)

// String returns "plus" or "minus".
func (r Role) String() string {
	switch r {
	case Plus:
		return "plus"
	case Minus:
		return "minus"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// Sign returns +1 for Plus and −1 for Minus.
func (r Role) Sign() float64 {
	switch r {
	case Plus, Minus:
		return float64(r)
	}
	panic(fmt.Sprintf("pairmask: invalid %v", r))
}

// SplitRoles splits the neighbours of receiver k, excluding k itself and
// duplicates, into N₊ (plus) and N₋ (minus) by rule. The result depends only on
// the set of neighbours, not on their order. With fewer than two neighbours
// besides k no pair can be formed and the receiver's incoming messages cannot
// be masked: SplitRoles then returns ok = false and nil sets.
func SplitRoles(rule Rule, receiver int, neighbours []int) (plus, minus []int, ok bool) {
	others := slices.DeleteFunc(slices.Clone(neighbours), func(j int) bool { return j == receiver })
	slices.Sort(others)
	others = slices.Compact(others)
	if len(others) < 2 {
		return nil, nil, false
	}
	if rule == Parity {
		plus, minus = splitParity(others)
		if len(plus) > 0 && len(minus) > 0 {
			return plus, minus, true
		}
	} else if rule != Alternating {
		panic(fmt.Sprintf("pairmask: invalid %v", rule))
	}
	plus, minus = splitAlternating(others)
	return plus, minus, true
}

func splitParity(sorted []int) (even, odd []int) {
	for _, j := range sorted {
		if j%2 == 0 {
			even = append(even, j)
		} else {
			odd = append(odd, j)
		}
	}
	return even, odd
}

func splitAlternating(sorted []int) (first, second []int) {
	for i, j := range sorted {
		if i%2 == 0 {
			first = append(first, j)
		} else {
			second = append(second, j)
		}
	}
	return first, second
}

// ApplyMask adds role.Sign()·mask/weight to dst, where weight = a_{jk} > 0 is
// the weight receiver k gives this sender j (paper 001 eqs. 50–51 with the
// receiver's weight on the sender, spec §3.3 step 4). A sender calls it once per
// partner in the opposite set, so that its message to k is
// y_j ± Σ g_{ℓm}/a_{jk}; k's weighted sum Σ_j a_{jk}·(message_j) then equals
// Σ_j a_{jk} y_j.
func ApplyMask(dst, mask []float64, role Role, weight float64) {
	floats.AddScaled(dst, role.Sign()/weight, mask)
}

// SetupMessageBound returns the paper's bound on the extra messages agent k
// sends to set up LGH in one round (paper 001 §III-D, spec §3.3),
//
//	|N_k| + Σ_{j∈N_k} |N_j|/2,
//
// where degree = |N_k| and neighbourDegrees[j] = |N_j| count neighbours
// excluding the agent itself: |N_k| role announcements, and for each neighbour
// j a key agreement with about half of j's neighbourhood.
func SetupMessageBound(degree int, neighbourDegrees []int) float64 {
	sum := 0
	for _, d := range neighbourDegrees {
		sum += d
	}
	return float64(degree) + float64(sum)/2
}
