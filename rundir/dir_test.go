package rundir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A failed write leaves neither the file nor a temporary.
func TestWriteAtomicFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "metrics.csv")
	err := WriteAtomic(path, func(w io.Writer) error {
		fmt.Fprint(w, "half a file")
		return errors.New("disk full")
	})
	if err == nil {
		t.Fatal("writeAtomic reported no error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed write left %v", entries)
	}
}

func TestCreateDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runs")
	// A directory that exists and holds something is refused without force.
	out := t.TempDir()
	for _, f := range []string{"summary.json", "trace.jsonl", "msd.png", ".trace-0000-000001.part"} {
		if err := os.WriteFile(filepath.Join(out, f), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := CreateDir(out, root, "x", false); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a non-empty --out without --force: %v", err)
	}
	// Force clears maple's files.
	if _, err := CreateDir(out, root, "x", true); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("--force left %v", entries)
	}
	// Anything else stops force.
	os.WriteFile(filepath.Join(out, "notes.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(out, "metrics.csv"), nil, 0o644)
	if _, err := CreateDir(out, root, "x", true); err == nil || !strings.Contains(err.Error(), "notes.txt, which maple did not write") {
		t.Errorf("--force on a directory with a foreign file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "metrics.csv")); err != nil {
		t.Error("a refused --force deleted files")
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Error("the output root was created for an explicit --out")
	}
}

// Concurrent executions of the same scenario get distinct default run
// directories, all inside the root whatever the scenario's name; discarding
// an unused directory removes the root CreateDir made.
func TestDefaultRunDirectories(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runs")
	const n = 20
	dirs := make([]*Dir, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := CreateDir("", root, "../../escape\n", false)
			if err != nil {
				t.Error(err)
				return
			}
			dirs[i] = d
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == nil {
			t.FailNow()
		}
		rel, err := filepath.Rel(root, d.Path)
		if err != nil || !filepath.IsLocal(rel) || strings.ContainsAny(rel, "/\n") || !strings.HasPrefix(rel, "escape-") {
			t.Errorf("run directory %q is not a plain directory of %s", d.Path, root)
		}
		if seen[d.Path] {
			t.Errorf("two executions got %s", d.Path)
		}
		seen[d.Path] = true
	}
	for _, d := range dirs {
		os.Remove(d.Path)
	}
	root = filepath.Join(t.TempDir(), "new", "runs")
	d, err := CreateDir("", root, "s", false)
	if err != nil {
		t.Fatal(err)
	}
	d.Discard()
	if _, err := os.Stat(filepath.Dir(root)); !os.IsNotExist(err) {
		t.Errorf("Discard left the directories it created: %v", err)
	}
}

// A write that fails in the file system names the file asked for, never the
// hidden temporary it goes through (maple report -o /proc/nope.html named
// /proc/.nope.html.tmp-1044728073), and leaves nothing behind.
func TestWriteAtomicNamesThePath(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		filepath.Join(dir, "missing", "x.html"): "no such file or directory",
		dir:                                     "is a directory, not a file",
		dir + string(filepath.Separator):        "is a directory, not a file",
	}
	if _, err := os.Stat("/proc/self"); err == nil {
		cases["/proc/nope.html"] = "cannot write /proc/nope.html: " // procfs refuses new files
	}
	for path, want := range cases {
		err := WriteFileAtomic(path, []byte("x"))
		var we *WriteError
		if !errors.As(err, &we) || !strings.HasPrefix(err.Error(), "cannot write "+path+": ") || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), tempInfix) {
			t.Errorf("writing %s: %v; want one error naming it and saying %q", path, err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed writes left %v", entries)
	}
}
