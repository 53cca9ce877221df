package pairmask

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestNames(t *testing.T) {
	for _, r := range []Rule{Alternating, Parity} {
		if got, err := ParseRule(r.String()); err != nil || got != r {
			t.Errorf("ParseRule(%q) = %v, %v", r.String(), got, err)
		}
	}
	for _, m := range []Mode{Secure, Paper, Oracle} {
		if got, err := ParseMode(m.String()); err != nil || got != m {
			t.Errorf("ParseMode(%q) = %v, %v", m.String(), got, err)
		}
	}
	if _, err := ParseRule("even-odd"); err == nil {
		t.Error("ParseRule accepted an unknown name")
	}
	if _, err := ParseMode("dh"); err == nil {
		t.Error("ParseMode accepted an unknown name")
	}
	if Plus.Sign() != 1 || Minus.Sign() != -1 || Plus.String() != "plus" || Minus.String() != "minus" {
		t.Error("Role signs or names are wrong")
	}
}

func TestSplitRoles(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rule        Rule
		receiver    int
		neighbours  []int
		plus, minus []int
	}{
		// The paper's example: agent 1 with neighbours 2…6 (and itself).
		{"paper example", Parity, 1, []int{1, 2, 3, 4, 5, 6}, []int{2, 4, 6}, []int{3, 5}},
		{"alternating", Alternating, 5, []int{9, 5, 2, 7, 3, 2}, []int{2, 7}, []int{3, 9}},
		{"alternating odd count", Alternating, 0, []int{4, 1, 8}, []int{1, 8}, []int{4}},
		{"parity fallback", Parity, 1, []int{6, 2, 4}, []int{2, 6}, []int{4}},
		{"parity unbalanced", Parity, 0, []int{1, 2, 3, 5, 7}, []int{2}, []int{1, 3, 5, 7}},
	} {
		plus, minus, ok := SplitRoles(tc.rule, tc.receiver, tc.neighbours)
		if !ok || !slices.Equal(plus, tc.plus) || !slices.Equal(minus, tc.minus) {
			t.Errorf("%s: SplitRoles = %v, %v, %v; want %v, %v", tc.name, plus, minus, ok, tc.plus, tc.minus)
		}
	}
}

func TestSplitRolesTooFewNeighbours(t *testing.T) {
	for _, nb := range [][]int{nil, {3}, {3, 3}, {7, 3}, {7, 7, 7}} {
		for _, rule := range []Rule{Alternating, Parity} {
			if plus, minus, ok := SplitRoles(rule, 7, nb); ok || plus != nil || minus != nil {
				t.Errorf("%v %v: SplitRoles = %v, %v, %v; want unmaskable", rule, nb, plus, minus, ok)
			}
		}
	}
}

// The split is a partition of N_k∖{k}, independent of the input order, and the
// alternating sets differ in size by at most one.
func TestSplitRolesPartitionAndDeterminism(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for trial := range 200 {
		k := r.IntN(20)
		nb := r.Perm(20)[:2+r.IntN(18)]
		for _, rule := range []Rule{Alternating, Parity} {
			plus, minus, ok := SplitRoles(rule, k, nb)
			shuffled := slices.Clone(nb)
			r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			p2, m2, ok2 := SplitRoles(rule, k, shuffled)
			if ok != ok2 || !slices.Equal(plus, p2) || !slices.Equal(minus, m2) {
				t.Fatalf("trial %d %v: order-dependent split", trial, rule)
			}
			others := slices.DeleteFunc(slices.Clone(nb), func(j int) bool { return j == k })
			if !ok {
				if len(others) >= 2 {
					t.Fatalf("trial %d %v: %d neighbours reported unmaskable", trial, rule, len(others))
				}
				continue
			}
			union := slices.Sorted(slices.Values(append(slices.Clone(plus), minus...)))
			if !slices.Equal(union, slices.Sorted(slices.Values(others))) || len(plus) == 0 || len(minus) == 0 {
				t.Fatalf("trial %d %v: %v ∪ %v is not a split of %v", trial, rule, plus, minus, others)
			}
			if d := len(plus) - len(minus); rule == Alternating && (d < 0 || d > 1) {
				t.Fatalf("trial %d: alternating sizes %d and %d", trial, len(plus), len(minus))
			}
		}
	}
}

// Agent 1 of the paper's example has five neighbours; with neighbour degrees
// 3, 2, 4, 1 and 2 the bound is 5 + (3+2+4+1+2)/2 = 11.
func TestSetupMessageBound(t *testing.T) {
	if got := SetupMessageBound(5, []int{3, 2, 4, 1, 2}); got != 11 {
		t.Fatalf("SetupMessageBound = %g, want 11", got)
	}
	if got := SetupMessageBound(2, []int{1, 2}); got != 3.5 {
		t.Fatalf("SetupMessageBound = %g, want 3.5", got)
	}
}

func TestApplyMask(t *testing.T) {
	dst := []float64{1, 2}
	ApplyMask(dst, []float64{0.5, -1}, Plus, 0.25)
	ApplyMask(dst, []float64{0.25, 0.25}, Minus, 0.5)
	// Every operand is a power of two times a small integer: exact.
	if !slices.Equal(dst, []float64{2.5, -2.5}) {
		t.Fatalf("ApplyMask gave %v, want [2.5 -2.5]", dst)
	}
}
