package fileio_test

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
	"testing/iotest"

	"maple/internal/fileio"
	"maple/internal/fileio/fileiotest"
)

func write(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadFileReadsARegularFile(t *testing.T) {
	for _, content := range []string{"", "a,b\n1,2\n", strings.Repeat("x", 100)} {
		path := write(t, "f.csv", content)
		got, err := fileio.ReadFile(path, 100)
		if err != nil || string(got) != content {
			t.Errorf("ReadFile(%d bytes) = %q, %v; want the content", len(content), got, err)
		}
	}
}

// What is not a regular file is refused by name, without blocking on it: a
// named pipe (which would wait for a writer), a link to /dev/zero (which
// never ends), a directory.
func TestOpenRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.csv")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct{ path, want string }{
		"fifo":      {fileiotest.FIFO(t, "pipe.yaml", "name: x\n"), "a named pipe (FIFO)"},
		"dev/zero":  {zero, "a character device"},
		"directory": {dir, "a directory"},
	}
	for name, c := range cases {
		f, err := fileio.Open(c.path, 1<<20)
		if err == nil {
			f.Close()
		}
		var pe *fs.PathError
		if !errors.Is(err, fileio.ErrNotRegular) || !errors.As(err, &pe) || pe.Path != c.path || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Open = %v; want a path error naming %s, wrapping ErrNotRegular and saying %q", name, err, c.path, c.want)
		}
	}
}

// A file larger than the bound is refused before it is read; one that grows
// past the bound after it was opened fails the read that crosses it.
func TestBoundIsEnforced(t *testing.T) {
	path := write(t, "big", strings.Repeat("x", 11))
	if _, err := fileio.ReadFile(path, 10); !errors.Is(err, fileio.ErrTooLarge) || !strings.Contains(err.Error(), path+": larger than 10 bytes") {
		t.Errorf("ReadFile of 11 bytes with bound 10: %v", err)
	}
	if got, err := fileio.ReadFile(path, 11); err != nil || len(got) != 11 {
		t.Errorf("ReadFile of 11 bytes with bound 11 = %d bytes, %v", len(got), err)
	}

	path = write(t, "growing", "12345")
	f, err := fileio.Open(path, 8)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.WriteFile(path, []byte("123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	if !errors.Is(err, fileio.ErrTooLarge) || string(got) != "12345678" {
		t.Errorf("reading a file grown to 9 bytes with bound 8: %q, %v; want the 8 bytes and ErrTooLarge", got, err)
	}
	// Seek back to the start: the bound counts from there again.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(f); !errors.Is(err, fileio.ErrTooLarge) || len(got) != 8 {
		t.Errorf("after Seek(0): %d bytes, %v", len(got), err)
	}
	var p [4]byte
	if _, err := f.ReadAt(p[:], 6); !errors.Is(err, fileio.ErrTooLarge) {
		t.Errorf("ReadAt across the bound: %v", err)
	}
	if n, err := f.ReadAt(p[:], 2); n != 4 || err != nil || string(p[:]) != "3456" {
		t.Errorf("ReadAt(2) = %q, %v", p[:n], err)
	}
}

// zeros is an endless stream, like /dev/zero.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestLimitStopsAnEndlessStream(t *testing.T) {
	got, err := io.ReadAll(fileio.Limit(zeros{}, 1000, "stdin"))
	if !errors.Is(err, fileio.ErrTooLarge) || len(got) != 1000 || !strings.HasPrefix(err.Error(), "stdin: larger than 1000 bytes") {
		t.Errorf("Limit(zeros, 1000): %d bytes, %v", len(got), err)
	}
	got, err = io.ReadAll(fileio.Limit(bytes.NewReader(make([]byte, 1000)), 1000, "stdin"))
	if err != nil || len(got) != 1000 {
		t.Errorf("Limit on exactly 1000 bytes: %d bytes, %v", len(got), err)
	}
}

// Once its context is done, an open file reads nothing more.
func TestReadObservesTheContext(t *testing.T) {
	path := write(t, "f", "abcdef")
	ctx, cancel := context.WithCancel(context.Background())
	f, err := fileio.OpenContext(ctx, path, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var p [3]byte
	if n, err := f.Read(p[:]); n != 3 || err != nil {
		t.Fatalf("Read before cancel: %d, %v", n, err)
	}
	cancel()
	if n, err := f.Read(p[:]); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancel: %d, %v; want context.Canceled", n, err)
	}
	if _, err := fileio.OpenContext(ctx, path, 100); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenContext with a done context: %v", err)
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{1 << 20: "1 MiB", 3 << 30: "3 GiB", 1500: "1500 bytes", 2048: "2 KiB", 1<<20 + 1: "1048577 bytes"} {
		if got := fileio.Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestLimitLinesStopsAnEndlessLine(t *testing.T) {
	got, err := io.ReadAll(fileio.LimitLines(zeros{}, 1<<16, "zero.csv"))
	if !errors.Is(err, fileio.ErrLineTooLong) || len(got) != 1<<16 || err.Error() != "zero.csv:1: line longer than 65536 bytes" {
		t.Errorf("LimitLines(zeros): %d bytes, %v", len(got), err)
	}
	for src, want := range map[string]string{
		"ab\ncd\n":   "",
		"ab\ncd":     "",
		"ab\ncde\nf": "t:2: line longer than 2 bytes",
		"\n\nabc":    "t:3: line longer than 2 bytes",
	} {
		// One byte at a time and all at once: the count carries across reads.
		for _, r := range []io.Reader{strings.NewReader(src), iotest.OneByteReader(strings.NewReader(src))} {
			got, err := io.ReadAll(fileio.LimitLines(r, 2, "t"))
			switch {
			case want == "" && (err != nil || string(got) != src):
				t.Errorf("LimitLines(%q, 2) = %q, %v; want it all", src, got, err)
			case want != "" && (err == nil || err.Error() != want):
				t.Errorf("LimitLines(%q, 2): %q, %v; want %q", src, got, err, want)
			}
		}
	}
}
