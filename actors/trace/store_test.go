package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// synthetic returns the records of a run of a small diffusion-like protocol:
// per round, the scheduler ticks every agent and every agent sends a share to
// its two ring neighbours and Done, so a block holds several rounds.
func synthetic(curve string, run, agents, rounds int) []Record {
	var recs []Record
	seq := uint64(0)
	add := func(r Record) {
		seq++
		r.Seq, r.Run, r.Curve = seq, run, curve
		recs = append(recs, r)
	}
	add(Record{From: "env", To: "scheduler", Type: "Start"})
	for i := 1; i <= rounds; i++ {
		t := float64(i)
		for p := range agents {
			add(Record{Time: t, Round: i, From: "scheduler", To: fmt.Sprintf("agent/%d", p), Type: "Tick", Cause: seq})
		}
		for p := range agents {
			for _, q := range []int{(p + 1) % agents, (p + agents - 1) % agents} {
				add(Record{Time: t + 0.5, Round: i, From: fmt.Sprintf("agent/%d", p), To: fmt.Sprintf("agent/%d", q),
					Type: "StageShare", Size: 23, Dim: 2, Norm: math.Sqrt(float64(i*p + 1)), Fields: map[string]any{"stage": float64(2)}})
			}
		}
		for p := range agents {
			add(Record{Time: t + 0.75, Round: i, From: fmt.Sprintf("agent/%d", p), To: "scheduler", Type: "Done"})
		}
	}
	return recs
}

// writeStore writes recs as a store and returns its bytes.
func writeStore(t *testing.T, recs []Record) []byte {
	t.Helper()
	return writeStoreCompressing(t, recs, 0)
}

// writeStoreCompressing is writeStore with at most compressing blocks
// compressed at once (0: as many as the writer chooses).
func writeStoreCompressing(t *testing.T, recs []Record, compressing int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewStoreWriter(&buf)
	if compressing > 0 {
		w.compressing = compressing
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jsonLines(t *testing.T, recs []Record) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func openStore(t *testing.T, b []byte) *Store {
	t.Helper()
	s, err := ReadStore(bytes.NewReader(b), int64(len(b)), "t.zst")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// scanLines returns the JSON lines of the records a scan yields.
func scanLines(t *testing.T, s *Store, f Filter) []byte {
	t.Helper()
	var recs []Record
	if err := s.Scan(f, func(r *Record) error { recs = append(recs, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	return jsonLines(t, recs)
}

// Two runs written separately and concatenated read back as the JSON lines
// of all their records, in order; the blocks are cut at round boundaries and
// the index describes them.
func TestStoreRoundTripAndConcat(t *testing.T) {
	a, b := synthetic("atc", 0, 30, 120), synthetic("atc", 1, 30, 120)
	s := openStore(t, writeStore(t, a))
	if len(s.Index.Blocks) < 3 {
		t.Fatalf("%d blocks for %d records; want several", len(s.Index.Blocks), len(a))
	}
	for i, blk := range s.Index.Blocks[:len(s.Index.Blocks)-1] {
		next := s.Index.Blocks[i+1]
		if blk.MaxRound >= next.MinRound || blk.LastSeq+1 != next.FirstSeq {
			t.Errorf("block %d (rounds %d–%d, seq ≤ %d) and block %d (rounds %d–%d, seq ≥ %d) are not cut at a round boundary",
				i, blk.MinRound, blk.MaxRound, blk.LastSeq, i+1, next.MinRound, next.MaxRound, next.FirstSeq)
		}
	}
	var merged bytes.Buffer
	if err := Concat(&merged, []*Store{s, openStore(t, writeStore(t, b))}); err != nil {
		t.Fatal(err)
	}
	all := append(append([]Record{}, a...), b...)
	want := jsonLines(t, all)
	m := openStore(t, merged.Bytes())
	if got := scanLines(t, m, Filter{}); !bytes.Equal(got, want) {
		t.Fatalf("concatenated store reads back %d bytes, want the %d bytes of the JSON lines", len(got), len(want))
	}
	if m.Index.Records() != len(all) || len(m.Index.Curves) != 1 || len(m.Index.Actors) != 32 || strings.Join(m.Index.Types, ",") != "Done,StageShare,Start,Tick" {
		t.Errorf("index: %d records, curves %v, %d actors, types %v", m.Index.Records(), m.Index.Curves, len(m.Index.Actors), m.Index.Types)
	}
	if ratio := float64(len(want)) / float64(merged.Len()); ratio < 5 {
		t.Errorf("compression ratio %.1f, want at least 5", ratio)
	}
	// The same records give the same bytes.
	if !bytes.Equal(writeStore(t, a), writeStore(t, a)) {
		t.Error("writing the same records twice gave different stores")
	}
}

// The file is a zstd stream whose frames decompress to the JSON lines, so
// zstdcat reads it; the check runs where the zstd command is installed.
func TestStoreIsAZstdStream(t *testing.T) {
	zstd, err := exec.LookPath("zstd")
	if err != nil {
		t.Skip("zstd command not installed; the decoder test below covers the format")
	}
	recs := synthetic("c", 0, 5, 40)
	path := filepath.Join(t.TempDir(), StoreFile)
	if err := os.WriteFile(path, writeStore(t, recs), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(zstd, "-d", "-c", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, jsonLines(t, recs)) {
		t.Errorf("zstd -d printed %d bytes, want the %d bytes of the JSON lines", len(out), len(jsonLines(t, recs)))
	}
}

// A filter reads only the blocks that can hold its records, and returns
// exactly the records a full scan would.
func TestStoreScanSkipsBlocks(t *testing.T) {
	recs := synthetic("c", 0, 30, 200)
	s := openStore(t, writeStore(t, recs))
	since, until := 57.0, 58.6
	for _, f := range []Filter{
		{Rounds: []int{3}},
		{Rounds: []int{150, 7}, Types: []string{"Done"}},
		{From: []string{"agent/3"}, To: []string{"agent/4"}},
		{Since: &since, Until: &until},
		{Runs: []int{1}},
		{Curve: "other"},
		{Actors: []string{"nobody"}},
	} {
		var want []Record
		for i := range recs {
			if f.Match(&recs[i]) {
				want = append(want, recs[i])
			}
		}
		if got := scanLines(t, s, f); !bytes.Equal(got, jsonLines(t, want)) {
			t.Errorf("%+v: scan differs from filtering every record", f)
		}
		read := 0
		for i := range s.Index.Blocks {
			if f.mayMatch(&s.Index, &s.Index.Blocks[i]) {
				read++
			}
		}
		if len(f.Rounds) > 0 && read > len(f.Rounds) || len(want) == 0 && read > 0 {
			t.Errorf("%+v: reads %d of %d blocks", f, read, len(s.Index.Blocks))
		}
	}
}

// withIndex returns the blocks of the store good followed by the index ix:
// a store whose index says what the test wants.
func withIndex(t testing.TB, good []byte, ix Index) []byte {
	t.Helper()
	s, err := ReadStore(bytes.NewReader(good), int64(len(good)), "good")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Write(good[:s.end])
	if err := writeIndex(&buf, s.end, &ix); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// overflowing is an index whose block lengths wrap int64 around: block 1
// is 2⁶³−1 bytes long and block 2 starts at the wrapped (negative) offset,
// so that the offsets add up to the end of the blocks again.
func overflowing(t testing.TB, good []byte) []byte {
	t.Helper()
	s, err := ReadStore(bytes.NewReader(good), int64(len(good)), "good")
	if err != nil {
		t.Fatal(err)
	}
	ix := s.Index
	b := ix.Blocks[0]
	b0, b1, b2, b3 := b, b, b, b
	b0.Offset, b0.Length = 0, s.end
	b1.Offset, b1.Length = s.end, math.MaxInt64
	b2.Offset, b2.Length = s.end+math.MaxInt64, math.MaxInt64 // wraps to a negative offset
	b3.Offset, b3.Length = s.end-2, 2
	ix.Blocks = []Block{b0, b1, b2, b3}
	return withIndex(t, good, ix)
}

// readAll opens b as a store and scans it whole, returning the first error.
func readAll(b []byte) error {
	s, err := ReadStore(bytes.NewReader(b), int64(len(b)), "t.zst")
	if err != nil {
		return err
	}
	return s.Scan(Filter{}, func(*Record) error { return nil })
}

// A damaged or foreign file is an error naming the file and the byte offset
// of what is wrong, never a panic: every truncation, every flipped byte, and
// indexes crafted to mislead the reader (block lengths that overflow, sizes
// that do not match the blocks, a block claiming gigabytes).
func TestReadStoreRejectsDamage(t *testing.T) {
	good := writeStore(t, synthetic("c", 0, 4, 10))
	s := openStore(t, good)
	wrongBytes, huge := s.Index, s.Index
	wrongBytes.Blocks = slices.Clone(s.Index.Blocks)
	wrongBytes.Blocks[0].Bytes--
	huge.Blocks = slices.Clone(s.Index.Blocks)
	huge.Blocks[0].Bytes = 60 << 30
	cases := map[string]struct {
		b    []byte
		want string // in the error, after the file name
	}{
		"empty":       {nil, "too short"},
		"jsonl":       {jsonLines(t, synthetic("c", 0, 4, 10)), "no index trailer in the last 24 bytes (at byte"},
		"truncated":   {good[:len(good)-5], "no index trailer"},
		"offset":      {append(append([]byte{}, good[:len(good)-8]...), 0xff, 0xff, 0, 0, 0, 0, 0, 0), "beyond the file"},
		"overflow":    {overflowing(t, good), "block 1 (offset"},
		"wrong bytes": {withIndex(t, good, wrongBytes), fmt.Sprintf("block 0 at byte 0 (%d bytes) is corrupt: its zstd frame does not decompress into the %d bytes", s.Index.Blocks[0].Length, wrongBytes.Blocks[0].Bytes)},
		"huge block":  {withIndex(t, good, huge), "block 0 at byte 0 claims"},
	}
	for name, c := range cases {
		err := readAll(c.b)
		if err == nil || !strings.HasPrefix(err.Error(), "t.zst: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming t.zst and saying %q", name, err, c.want)
		}
	}
	// A damaged block is reported when read, with its offset.
	bad := append([]byte{}, good...)
	bad[20] ^= 0xff
	if err := readAll(bad); err == nil || !strings.Contains(err.Error(), "t.zst: block 0 at byte 0") {
		t.Errorf("damaged block: %v", err)
	}
	// Every prefix and every single flipped byte: an error naming the file,
	// or (a flip inside a JSON number or string) records read back.
	for n := range good {
		if err := readAll(good[:n]); err == nil || !strings.HasPrefix(err.Error(), "t.zst") {
			t.Fatalf("the first %d of %d bytes: %v", n, len(good), err)
		}
	}
	for i := range good {
		b := slices.Clone(good)
		b[i] ^= 0x5a
		if err := readAll(b); err != nil && !strings.HasPrefix(err.Error(), "t.zst") {
			t.Fatalf("byte %d flipped: error %q does not name the file", i, err)
		}
	}
}

func FuzzReadStore(f *testing.F) {
	var buf bytes.Buffer
	w := NewStoreWriter(&buf)
	for _, r := range synthetic("c", 0, 3, 3) {
		if err := w.Write(&r); err != nil {
			f.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(overflowing(f, buf.Bytes()))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ReadStore(bytes.NewReader(b), int64(len(b)), "fuzz")
		if err == nil {
			err = s.Scan(Filter{}, func(*Record) error { return nil })
		}
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz") {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}

func TestSortNamesOrdersNumbersNumerically(t *testing.T) {
	got := SortNames([]string{"agent/10", "agent/2", "env", "agent/0", "agent/1", "scheduler", "agent/11"})
	want := []string{"agent/0", "agent/1", "agent/2", "agent/10", "agent/11", "env", "scheduler"}
	if !slices.Equal(got, want) {
		t.Errorf("SortNames = %v, want %v", got, want)
	}
}

// The fast round check reads the record's own round, not text in its curve
// label or its fields.
func TestRoundFilterIgnoresLookalikes(t *testing.T) {
	recs := synthetic(`tricky "round":7, round 7`, 0, 3, 9)
	for i := range recs {
		recs[i].Fields = map[string]any{"round": float64(7)}
	}
	s := openStore(t, writeStore(t, recs))
	var want []Record
	for i := range recs {
		if recs[i].Round == 2 {
			want = append(want, recs[i])
		}
	}
	if got := scanLines(t, s, Filter{Rounds: []int{2}}); !bytes.Equal(got, jsonLines(t, want)) || len(want) == 0 {
		t.Errorf("round 2 of a run whose label and fields mention round 7: got\n%s", got)
	}
}

// Stopping a scan early (or failing) leaves no decoding goroutine behind,
// and a full scan delivers every record in order at any parallelism.
func TestScanStopsItsWorkers(t *testing.T) {
	recs := synthetic("c", 0, 30, 150)
	s := openStore(t, writeStore(t, recs))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 2, 7} {
		runtime.GOMAXPROCS(procs)
		seq := uint64(0)
		err := s.Scan(Filter{}, func(r *Record) error {
			if r.Seq != seq+1 {
				return fmt.Errorf("record %d after %d", r.Seq, seq)
			}
			seq = r.Seq
			return nil
		})
		if err != nil || seq != uint64(len(recs)) {
			t.Fatalf("GOMAXPROCS=%d: scanned up to %d of %d: %v", procs, seq, len(recs), err)
		}
	}
	n := 0
	err := s.Scan(Filter{}, func(*Record) error {
		if n++; n == 10 {
			return ErrStop
		}
		return nil
	})
	if err != nil || n != 10 {
		t.Fatalf("scan stopped after %d records with %v", n, err)
	}
	goleak.VerifyNone(t)
}

// The index is only an accelerator: for random stores (several curves and
// runs, written separately and concatenated as maple run does, cut into
// small blocks) and random filters combining every field,
// a scan returns exactly the records, in order, that testing every record
// with Filter.Match returns — and reads no block whose index entry rules it
// out while holding a match.
func TestStoreFiltersMatchAFullScan(t *testing.T) {
	// Blocks of about 4 kB: runs of a few thousand records span dozens.
	defer func(target, limit int) { blockTarget, blockLimit = target, limit }(blockTarget, blockLimit)
	blockTarget, blockLimit = 4<<10, 32<<10
	r := rand.New(rand.NewPCG(13, 31))
	curveNames := []string{"a", "b, \"c\""}
	for trial := range 6 {
		var stores []*Store
		var all []Record
		for c := range 1 + r.IntN(len(curveNames)) {
			for run := range 1 + r.IntN(3) {
				recs := synthetic(curveNames[c], run, 4+r.IntN(9), []int{3, 30, 120}[r.IntN(3)])
				stores = append(stores, openStore(t, writeStore(t, recs)))
				all = append(all, recs...)
			}
		}
		var merged bytes.Buffer
		if err := Concat(&merged, stores); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, merged.Bytes())
		actorsOf := []string{"env", "scheduler", "agent/0", "agent/3", "agent/17", "nobody"}
		types := []string{"Start", "Tick", "StageShare", "Done", "Other"}
		pick := func(from []string) []string {
			var out []string
			for range 1 + r.IntN(2) {
				out = append(out, from[r.IntN(len(from))])
			}
			return out
		}
		for range 30 {
			var f Filter
			if r.IntN(3) == 0 {
				for range 1 + r.IntN(3) {
					f.Rounds = append(f.Rounds, r.IntN(125)-1)
				}
			}
			if r.IntN(3) == 0 {
				f.Actors = pick(actorsOf)
			}
			if r.IntN(3) == 0 {
				f.Types = pick(types)
			}
			if r.IntN(3) == 0 {
				f.Runs = []int{r.IntN(4)}
			}
			if r.IntN(3) == 0 {
				f.Curve = append(curveNames, "other")[r.IntN(3)]
			}
			if r.IntN(4) == 0 {
				f.From = pick(actorsOf)
			}
			if r.IntN(4) == 0 {
				f.To = pick(actorsOf)
			}
			// Times on the records' own grid (i, i + 0.5, i + 0.75) test
			// the window's closed ends.
			at := func() *float64 { v := float64(r.IntN(125)) + []float64{0, 0.5, 0.75, 0.3}[r.IntN(4)]; return &v }
			if r.IntN(4) == 0 {
				f.Since = at()
			}
			if r.IntN(4) == 0 {
				f.Until = at()
			}
			// Records are told apart by (curve, run, seq).
			type key struct {
				curve string
				run   int
				seq   uint64
			}
			var want, got []key
			for i := range all {
				if f.Match(&all[i]) {
					want = append(want, key{all[i].Curve, all[i].Run, all[i].Seq})
				}
			}
			err := s.Scan(f, func(rec *Record) error {
				got = append(got, key{rec.Curve, rec.Run, rec.Seq})
				return nil
			})
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("trial %d, filter %+v: the scan returns %d records (%v), testing every record %d", trial, f, len(got), err, len(want))
			}
		}
		if len(s.Index.Blocks) < 2*len(stores) {
			t.Errorf("trial %d: %d blocks for %d runs; the test needs a run spanning several blocks", trial, len(s.Index.Blocks), len(stores))
		}
	}
}

// Blocks are compressed on goroutines of their own, several at once, and
// written in order: the store's bytes are the same whatever the number
// compressed at once (1, as a single goroutine would, up to more than the
// machine has processors), and decode to the records' lines.
func TestStoreDoesNotDependOnParallelCompression(t *testing.T) {
	defer func(target, limit int) { blockTarget, blockLimit = target, limit }(blockTarget, blockLimit)
	blockTarget, blockLimit = 4<<10, 32<<10
	recs := synthetic("atc", 0, 12, 200)
	one := writeStoreCompressing(t, recs, 1)
	s := openStore(t, one)
	if len(s.Index.Blocks) < 20 {
		t.Fatalf("%d blocks; the test needs many blocks in flight", len(s.Index.Blocks))
	}
	if got, want := scanLines(t, s, Filter{}), jsonLines(t, recs); !bytes.Equal(got, want) {
		t.Fatal("the store does not decode to the records' lines")
	}
	for _, n := range []int{2, 4, 16} {
		if !bytes.Equal(writeStoreCompressing(t, recs, n), one) {
			t.Errorf("compressing %d blocks at once changes the store's bytes", n)
		}
	}
	goleak.VerifyNone(t)
}

// failAfter is a writer that fails once it has taken n bytes.
type failAfter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errDiskFull
	}
	f.n -= len(p)
	return len(p), nil
}

// Blocks are written by the writer's own goroutine: an error writing one
// reaches the caller through a later Write or through Close, every Write
// after it fails too, and Close stops the goroutine whatever happened.
func TestStoreWriterReportsWriteErrorsAndStops(t *testing.T) {
	defer func(target, limit int) { blockTarget, blockLimit = target, limit }(blockTarget, blockLimit)
	blockTarget, blockLimit = 4<<10, 32<<10
	recs := synthetic("atc", 0, 30, 120)
	w := NewStoreWriter(&failAfter{n: 10000})
	var failed error
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			failed = err
			break
		}
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) || failed != nil && !errors.Is(failed, errDiskFull) {
		t.Errorf("Write returned %v and Close %v, want %v", failed, err, errDiskFull)
	}
	if err := w.Write(&recs[0]); !errors.Is(err, errDiskFull) {
		t.Errorf("Write after the failure returned %v, want %v", err, errDiskFull)
	}
	// A writer closed after an encoding error stops its goroutine as well.
	w = NewStoreWriter(io.Discard)
	for i := range recs[:len(recs)/2] {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	bad := recs[0]
	bad.Norm = math.NaN()
	if err := w.Write(&bad); err == nil {
		t.Error("a NaN norm was written")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after an encoding error reported no error")
	}
	goleak.VerifyNone(t)
}

// A block's name set holds exactly the names seen since the last block,
// whatever their order and repetition (the empty name included), and the
// table gives each name one position.
func TestNamesOfABlock(t *testing.T) {
	ns := names{table: map[string]int{}}
	for _, n := range []string{"", "a", "", "b", "b", "a", "c", ""} {
		ns.see(n)
	}
	got := ns.endBlock()
	slices.Sort(got)
	if len(ns.table) != 4 || !slices.Equal(got, []int{0, 1, 2, 3}) {
		t.Errorf("table %v, block %v; want 4 names, all in the block", ns.table, got)
	}
	for _, n := range []string{"c", "a", "c"} {
		ns.see(n)
	}
	got = ns.endBlock()
	slices.Sort(got)
	if want := []int{ns.table["a"], ns.table["c"]}; !slices.Equal(got, want) && !slices.Equal(got, []int{want[1], want[0]}) {
		t.Errorf("second block %v, want the positions of a and c, %v", got, want)
	}
}

// BenchmarkStoreWriter measures a writer's throughput when its caller only
// writes records (the cost of a traced run's cheapest messages): encoding
// and compressing are the writer's, on its goroutines.
func BenchmarkStoreWriter(b *testing.B) {
	recs := synthetic("atc", 0, 30, 400)
	for i := range recs {
		recs[i].Fields = nil // the encoding is the writer goroutine's
	}
	var enc encoder
	var lines []byte
	for i := range recs {
		var err error
		if lines, err = enc.appendRecord(lines, &recs[i]); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(lines)))
	for b.Loop() {
		w := NewStoreWriter(io.Discard)
		for i := range recs {
			if err := w.Write(&recs[i]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
