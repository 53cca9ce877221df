package trace

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"maple/internal/fileio"
	"maple/internal/fileio/fileiotest"
)

// alter returns the store good with its index changed by change, the blocks
// untouched: what someone editing the index (decompress, edit, recompress)
// would write.
func alter(t *testing.T, good []byte, change func(ix *Index)) []byte {
	t.Helper()
	ix := openStore(t, good).Index
	ix.Types, ix.Actors = slices.Clone(ix.Types), slices.Clone(ix.Actors)
	ix.Blocks = slices.Clone(ix.Blocks)
	for i := range ix.Blocks {
		ix.Blocks[i].Types = slices.Clone(ix.Blocks[i].Types)
		ix.Blocks[i].Actors = slices.Clone(ix.Blocks[i].Actors)
	}
	change(&ix)
	return withIndex(t, good, ix)
}

// An index whose counts, names or ranges were altered does not describe its
// blocks: reading them reports it, naming the file and the block, instead
// of believing the index — a filter on a renamed type found nothing and a
// count printed whatever the index said.
func TestAlteredIndexIsDetected(t *testing.T) {
	good := writeStore(t, synthetic("c", 0, 4, 10))
	if ix := openStore(t, good).Index; len(ix.Blocks) != 1 || !slices.Equal(ix.Types, []string{"Done", "Stage" + "Share", "Start", "Tick"}) {
		t.Fatalf("the test expects one block of types Done, StageShare, Start, Tick; got %d blocks of %v", len(ix.Blocks), ix.Types)
	}
	cases := []struct {
		name   string
		change func(ix *Index)
		filter Filter
		want   string
	}{
		{"one record more", func(ix *Index) { ix.Blocks[0].Records++ }, Filter{}, "t.zst: block 0 at byte 0: 161 records, the index says 162"},
		{"one record less", func(ix *Index) { ix.Blocks[0].Records-- }, Filter{}, "records, the index says 160"},
		{"count altered, rounds filtered", func(ix *Index) { ix.Blocks[0].Records += 5 }, Filter{Rounds: []int{3}}, "161 records, the index says 166"},
		{"type renamed", func(ix *Index) { ix.Types[3] = "Tock" }, Filter{}, "type Tick, which the index does not list for the block"},
		{"type renamed, filter on the new name", func(ix *Index) { ix.Types[3] = "Tock" }, Filter{Types: []string{"Tock"}}, "type Tick, which the index does not list"},
		{"type added", func(ix *Index) {
			ix.Types = append(ix.Types, "Update")
			ix.Blocks[0].Types = append(ix.Blocks[0].Types, 4)
		}, Filter{}, "no record of type Update, which the index lists for the block"},
		{"actor renamed", func(ix *Index) { ix.Actors[len(ix.Actors)-1] = "server" }, Filter{}, "actor scheduler, whom the index does not list"},
		{"rounds narrowed", func(ix *Index) { ix.Blocks[0].MaxRound = 5 }, Filter{Rounds: []int{2}}, "round 6, outside the rounds 0–5"},
		{"times narrowed", func(ix *Index) { ix.Blocks[0].MaxTime = 3 }, Filter{}, "time 3.5, outside the block's times 0–3"},
		{"run changed", func(ix *Index) { ix.Blocks[0].Run = 7 }, Filter{}, "a record of run 0 of curve \"c\" in the block of run 7"},
		{"types out of order", func(ix *Index) { ix.Types[0], ix.Types[1] = ix.Types[1], ix.Types[0] }, Filter{}, "the index's types are not sorted and distinct"},
		{"block types not ascending", func(ix *Index) { ix.Blocks[0].Types[0], ix.Blocks[0].Types[1] = 1, 0 }, Filter{}, "block 0 names types [1 0 2 3] of 4: not ascending"},
		{"no records claimed", func(ix *Index) { ix.Blocks[0].Records = 0 }, Filter{}, "claims 0 records"},
	}
	for _, c := range cases {
		b := alter(t, good, c.change)
		s, err := ReadStore(bytes.NewReader(b), int64(len(b)), "t.zst")
		if err == nil {
			err = s.Scan(c.filter, func(*Record) error { return nil })
		}
		if err == nil || !strings.HasPrefix(err.Error(), "t.zst") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error naming t.zst and saying %q", c.name, err, c.want)
		}
	}
}

// A trace without records says so, whether a store with an empty index (what
// a traced run of a family without messages writes) or an empty file of JSON
// lines; a trace with records does not.
func TestEmptyTraceIsReported(t *testing.T) {
	var empty bytes.Buffer
	if err := NewStoreWriter(&empty).Close(); err != nil {
		t.Fatal(err)
	}
	recs := synthetic("c", 0, 2, 1)
	for _, c := range []struct {
		name    string
		content []byte
		empty   bool
	}{
		{StoreFile, empty.Bytes(), true},
		{JSONLFile, nil, true},
		{StoreFile, writeStore(t, recs), false},
		{JSONLFile, jsonLines(t, recs), false},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, c.name), c.content, 0o600); err != nil {
			t.Fatal(err)
		}
		tr, err := Open(dir)
		if err != nil {
			t.Fatalf("Open of %s (empty %v): %v", c.name, c.empty, err)
		}
		if got := tr.Empty(); got != c.empty {
			t.Errorf("%s of %d bytes: Empty() = %v, want %v", c.name, len(c.content), got, c.empty)
		}
		tr.Close()
	}
}

// A trace that is not a regular file is refused by name: a named pipe would
// block the reader until something writes to it.
func TestOpenRefusesANamedPipe(t *testing.T) {
	for _, name := range []string{StoreFile, JSONLFile} {
		path := fileiotest.FIFO(t, name, `{"seq":1}`+"\n")
		tr, err := Open(filepath.Dir(path))
		if err == nil {
			tr.Close()
		}
		if !errors.Is(err, fileio.ErrNotRegular) || !strings.Contains(err.Error(), path) {
			t.Errorf("Open with %s a named pipe: %v; want a refusal naming it", name, err)
		}
	}
}

// A flipped byte anywhere in a store is reported as corruption of the part
// it fell in — the block, named by its position in the index and its byte
// offset, or the index, or its trailer — not as whatever the zstd decoder
// stumbled on ("output bigger than max block size"), or it changed nothing
// that was written: the records read back are the same (zstd checks a
// checksum of every frame's content, so a flip in the content cannot pass).
// A store of four blocks (2 KB) has bytes flipped, in two ways, at the
// start of every frame (magic, frame and block headers), in its middle and
// at its end (the checksum), in the index's frame headers and the trailer,
// and every 31st byte besides.
func TestFlippedByteNamesTheCorruptBlock(t *testing.T) {
	defer func(target, limit int) { blockTarget, blockLimit = target, limit }(blockTarget, blockLimit)
	blockTarget, blockLimit = 4<<10, 8<<10
	good := writeStore(t, synthetic("c", 0, 4, 8))
	s := openStore(t, good)
	if len(s.Index.Blocks) < 4 {
		t.Fatalf("the test expects at least four blocks, got %d", len(s.Index.Blocks))
	}
	want := scanLines(t, s, Filter{})
	// partOf describes the part of the store byte i is in: the prefix every
	// error about it starts with.
	partOf := func(i int64) string {
		for k, b := range s.Index.Blocks {
			if i >= b.Offset && i < b.Offset+b.Length {
				return fmt.Sprintf("t.zst: block %d at byte %d (%d bytes) is corrupt: ", k, b.Offset, b.Length)
			}
		}
		if i < int64(len(good))-trailerSize {
			return "t.zst: the index "
		}
		return "t.zst: " // the trailer
	}
	var positions []int64
	span := func(from, to int64) {
		for i := max(from, 0); i < min(to, int64(len(good))); i++ {
			positions = append(positions, i)
		}
	}
	for _, b := range s.Index.Blocks {
		span(b.Offset, b.Offset+12)
		span(b.Offset+b.Length/2, b.Offset+b.Length/2+2)
		span(b.Offset+b.Length-6, b.Offset+b.Length)
	}
	span(s.end, s.end+20)                                // the index's skippable frame header and its zstd frame's
	span(int64(len(good))-trailerSize, int64(len(good))) // the trailer
	for i := int64(0); i < int64(len(good)); i += 31 {
		positions = append(positions, i)
	}
	for _, i := range positions {
		for _, mask := range []byte{0x01, 0x5a} {
			b := slices.Clone(good)
			b[i] ^= mask
			var got []Record
			st, err := ReadStore(bytes.NewReader(b), int64(len(b)), "t.zst")
			if err == nil {
				err = st.Scan(Filter{}, func(r *Record) error { got = append(got, *r); return nil })
			}
			part := partOf(i)
			switch {
			case err == nil:
				if !bytes.Equal(jsonLines(t, got), want) {
					t.Fatalf("byte %d ^ %#x: no error, but other records", i, mask)
				}
			case part == "t.zst: ": // the trailer: its magic and ID make the file a store
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotStore) || !strings.HasPrefix(err.Error(), part) {
					t.Fatalf("byte %d ^ %#x, in the trailer: %v", i, mask, err)
				}
			case !errors.Is(err, ErrCorrupt) || !strings.HasPrefix(err.Error(), part) || !strings.Contains(err.Error(), "corrupt"):
				t.Fatalf("byte %d ^ %#x: %v\nwant an error starting %q", i, mask, err, part)
			}
		}
	}
}
