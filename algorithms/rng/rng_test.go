package rng

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

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

// A saved position resumes its stream exactly, at every point of the
// generator's internal reseeding cycle (every 124 values) and through every
// method of rand.Rand.
func TestPositionResumesTheStream(t *testing.T) {
	for _, used := range []int{0, 1, 31, 32, 123, 124, 125, 1000, 4099} {
		src := Source(RunSeed(5, 1), "agent/3", "batch")
		r := rand.New(src)
		for range used {
			r.Uint64()
		}
		p := Save(src)
		resumed := rand.New(p.Resume())
		for i := range 300 {
			var a, b uint64
			switch i % 3 {
			case 0:
				a, b = r.Uint64(), resumed.Uint64()
			case 1:
				a, b = uint64(r.IntN(1000)), uint64(resumed.IntN(1000))
			default:
				a, b = math.Float64bits(r.NormFloat64()), math.Float64bits(resumed.NormFloat64())
			}
			if a != b {
				t.Fatalf("after %d values, draw %d: %d vs %d", used, i, a, b)
			}
		}
	}
}

// New draws what rand.New of Source draws.
func TestNewIsSource(t *testing.T) {
	a, b := New(9, "server", "participation"), rand.New(Source(9, "server", "participation"))
	for i := range 10 {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("draw %d: %d vs %d", i, x, y)
		}
	}
}

// Key hashes the domain, the run seed and the two length-prefixed names, as
// it always has: a stream's key, hence its values, never change.
func TestKeyIsTheHashOfTheNames(t *testing.T) {
	for _, name := range []string{"agent/3", strings.Repeat("x", 200)} {
		h := sha256.New()
		h.Write([]byte("maple/stream\x00"))
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], 77)
		h.Write(buf[:])
		for _, part := range []string{name, "batch"} {
			binary.LittleEndian.PutUint64(buf[:], uint64(len(part)))
			h.Write(buf[:])
			h.Write([]byte(part))
		}
		if got := Key(77, name, "batch"); !bytes.Equal(got[:], h.Sum(nil)) {
			t.Errorf("%q: key %x, want %x", name, got, h.Sum(nil))
		}
	}
	if n := testing.AllocsPerRun(100, func() { Key(1, "agent/123456", "batch") }); n != 0 {
		t.Errorf("Key allocates %v times", n)
	}
}

// IndexedKey is Key of the name with the index appended, for either part,
// every number of digits, and names whose bytes no longer fit the stack
// buffer; it allocates nothing.
func TestIndexedKeyIsKeyOfTheName(t *testing.T) {
	long := strings.Repeat("y", 150)
	for _, k := range []int{0, 7, 10, 99, 12345, 99999999, 100000000, 1 << 40, -3} {
		for _, c := range []struct{ actor, purpose string }{{"agent/", "schedule"}, {"data", "agent/"}, {"", ""}, {long, "x"}} {
			name := strconv.Itoa(k)
			if got, want := IndexedKey(5, c.actor, c.purpose, 0, k), Key(5, c.actor+name, c.purpose); got != want {
				t.Errorf("(%q+%d, %q): %x, want %x", c.actor, k, c.purpose, got, want)
			}
			if got, want := IndexedKey(5, c.actor, c.purpose, 1, k), Key(5, c.actor, c.purpose+name); got != want {
				t.Errorf("(%q, %q+%d): %x, want %x", c.actor, c.purpose, k, got, want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { IndexedKey(1, "data", "agent/", 1, 12345678) }); n != 0 {
		t.Errorf("IndexedKey allocates %v times", n)
	}
}
