package cluster

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/cluster/wire"
	"maple/internal/fileio"
)

// Builds are compatible when version, toolchain and platform match and
// either both clean revisions or the executables do.
func TestCompatibleBuilds(t *testing.T) {
	base := &wire.Build{Version: "1", GoVersion: "go1.26", Platform: "linux/amd64", Revision: "abc", BinarySha256: "x"}
	with := func(f func(b *wire.Build)) *wire.Build {
		b := &wire.Build{Version: base.Version, GoVersion: base.GoVersion, Platform: base.Platform, Revision: base.Revision, BinarySha256: base.BinarySha256}
		f(b)
		return b
	}
	for _, c := range []struct {
		b    *wire.Build
		want string // "" for compatible, else part of the reason
	}{
		{with(func(*wire.Build) {}), ""},
		{with(func(b *wire.Build) { b.BinarySha256 = "y" }), ""}, // the same clean commit, built elsewhere
		{with(func(b *wire.Build) { b.Revision = "def" }), "built from commit def"},
		{with(func(b *wire.Build) { b.Version = "2" }), "runs maple 2"},
		{with(func(b *wire.Build) { b.Platform = "linux/arm64" }), "for linux/arm64"},
		{with(func(b *wire.Build) { b.GoVersion = "go1.25" }), "built with go1.25"},
		{with(func(b *wire.Build) { b.Modified, b.BinarySha256 = true, "y" }), "modified work tree"},
		{with(func(b *wire.Build) { b.Modified = true }), ""}, // modified, but the very same executable
		{with(func(b *wire.Build) { b.Revision, b.BinarySha256 = "", "y" }), "not stamped"},
		{nil, "did not say"},
	} {
		got := compatible(base, c.b)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("compatible(%v) = %q, want %q", c.b, got, c.want)
		}
	}
}

// A worker's jobs see exactly the files the coordinator shipped: their
// bytes, the listings of directories, missing files as missing, and nothing
// else.
func TestShippedFilesAreAllAJobSees(t *testing.T) {
	src := t.TempDir()
	data := []byte(strings.Repeat("x", 2*chunkSize+10)) // two chunks and a bit
	os.WriteFile(filepath.Join(src, "a.csv"), data, 0o644)
	os.Mkdir(filepath.Join(src, "dir"), 0o755)
	os.WriteFile(filepath.Join(src, "dir", "0.csv"), []byte("1,2\n"), 0o644)
	entries := []*wire.FileEntry{{Path: filepath.Join(src, "missing"), Missing: true},
		{Path: filepath.Join(src, "dir"), Dir: true, Entries: []*wire.DirEntry{{Name: "0.csv"}, {Name: "sub", Dir: true}}}}
	s := newStore(t.TempDir())
	for _, name := range []string{"a.csv", "dir/0.csv"} {
		path := filepath.Join(src, name)
		sum, size, err := hashFile(path)
		if err != nil {
			t.Fatal(err)
		}
		reads := 0
		if err := s.fetch(sum, size, func(off int64) ([]byte, error) { reads++; return readChunk(path, off) }); err != nil {
			t.Fatal(err)
		}
		if err := s.fetch(sum, size, func(int64) ([]byte, error) { return nil, errors.New("fetched twice") }); err != nil {
			t.Errorf("a file held is fetched again: %v", err)
		}
		if name == "a.csv" && reads != 3 {
			t.Errorf("%d reads of %d bytes, want 3 chunks", reads, size)
		}
		entries = append(entries, &wire.FileEntry{Path: path, Sha256: sum, Size: size})
	}
	fsys := newShipped(s, entries)
	f, err := fsys.Open(context.Background(), filepath.Join(src, "a.csv"), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, data) {
		t.Error("the shipped file's bytes differ")
	}
	list, err := fsys.ReadDir(filepath.Join(src, "dir"))
	if err != nil || len(list) != 2 || list[0].Name() != "0.csv" || list[0].IsDir() || !list[1].IsDir() {
		t.Errorf("listing %v, %v", list, err)
	}
	if _, err := fsys.Open(context.Background(), filepath.Join(src, "missing"), 1<<30); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want it not to exist", err)
	}
	if _, err := fsys.Open(context.Background(), filepath.Join(src, "a.csv"), int64(len(data)-1)); !errors.Is(err, fileio.ErrTooLarge) || !strings.Contains(err.Error(), filepath.Join(src, "a.csv")) {
		t.Errorf("a shipped file beyond its reader's bound: %v, want it refused by the name the job gave", err)
	}
	if _, err := fsys.Stat(filepath.Join(src, "dir", "..", "a.csv")); err != nil {
		t.Errorf("a shipped file by an unclean path: %v", err)
	}
	for _, p := range []string{"/etc/passwd", filepath.Join(src, "dir", "1.csv")} {
		if _, err := fsys.Open(context.Background(), p, 1<<30); !errors.Is(err, errNotShipped) {
			t.Errorf("%s: %v, want it refused as not shipped", p, err)
		}
	}
}

// A file whose bytes do not match its hash is not kept.
func TestStoreRefusesBytesThatDoNotMatch(t *testing.T) {
	s := newStore(t.TempDir())
	sum, size, _ := hashFile(os.Args[0])
	err := s.fetch(sum, size, func(off int64) ([]byte, error) { return make([]byte, min(size-off, chunkSize)), nil })
	if err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Errorf("err = %v", err)
	}
	if left, _ := os.ReadDir(s.dir); len(left) != 0 {
		t.Errorf("the store kept %d files", len(left))
	}
}
