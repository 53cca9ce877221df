package rng

import "testing"

func TestStreamsAreReproducible(t *testing.T) {
	a := New(RunSeed(7, 3), "agent/12", "batch")
	b := New(RunSeed(7, 3), "agent/12", "batch")
	for i := 0; i < 100; i++ {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("draw %d differs: %d vs %d", i, x, y)
		}
	}
}

func TestStreamsAreDistinct(t *testing.T) {
	base := RunSeed(7, 0)
	names := []struct {
		seed           uint64
		actor, purpose string
	}{
		{base, "agent/1", "batch"},
		{base, "agent/1", "noise"},
		{base, "agent/11", "batch"},
		{base, "agent/1b", "atch"}, // same concatenation as agent/1 + batch without prefixes
		{RunSeed(7, 1), "agent/1", "batch"},
		{RunSeed(8, 0), "agent/1", "batch"},
	}
	seen := map[uint64]int{}
	for i, n := range names {
		first := New(n.seed, n.actor, n.purpose).Uint64()
		if j, dup := seen[first]; dup {
			t.Fatalf("streams %d and %d start with the same value", j, i)
		}
		seen[first] = i
	}
}

func TestRunSeedsDiffer(t *testing.T) {
	seen := map[uint64]bool{}
	for run := 0; run < 1000; run++ {
		s := RunSeed(1, run)
		if seen[s] {
			t.Fatalf("run seed %d repeats", run)
		}
		seen[s] = true
	}
}
