package rundir

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Every output file of a run directory is written atomically: to a hidden
// temporary file in the same directory, synced, then renamed over its final
// name. A run killed while writing leaves at worst a temporary file
// (.NAME.tmp-*), never a truncated output under its real name.

// WriteAtomic writes path with write, through a temporary file. An error of
// the file system names path, the file the caller asked for, never the
// temporary (a message naming .NAME.tmp-123 in a directory that does not
// exist would send the user looking for the wrong file); errors of write
// itself are returned as they are.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	fail := func(err error) error { return &WriteError{Path: path, Err: WithoutPath(err)} }
	if info, err := os.Stat(path); name == "" || err == nil && info.IsDir() {
		return fail(errors.New("is a directory, not a file"))
	}
	f, err := os.CreateTemp(dir, "."+name+tempInfix+"*")
	if err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(namedWriter{f, path}, 1<<16)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fail(err)
	}
	return nil
}

// WriteError is a failure to write the file Path: Err is the file system's
// reason, without the temporary file's name.
type WriteError struct {
	Path string
	Err  error
}

// Error implements error.
func (e *WriteError) Error() string { return "cannot write " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the file system's reason.
func (e *WriteError) Unwrap() error { return e.Err }

// namedWriter writes to the temporary file of path, reporting a failure
// (a full disk, say) as a WriteError of path.
type namedWriter struct {
	f    *os.File
	path string
}

func (w namedWriter) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if err != nil {
		err = &WriteError{Path: w.path, Err: WithoutPath(err)}
	}
	return n, err
}

// WriteFileAtomic writes data to path through a temporary file.
func WriteFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// tempInfix marks maple's temporary files: .NAME.tmp-RANDOM.
const tempInfix = ".tmp-"

// StageFiles runs write on a hidden staging directory inside dir, then moves
// each file it reports into dir by renaming it (atomic within a file system)
// and removes the staging directory. It returns the files' names.
func StageFiles(dir string, write func(stage string) ([]string, error)) ([]string, error) {
	stage, err := os.MkdirTemp(dir, ".stage"+tempInfix+"*")
	if err != nil {
		return nil, &WriteError{Path: dir, Err: WithoutPath(err)}
	}
	defer os.RemoveAll(stage)
	names, err := write(stage)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if !filepath.IsLocal(name) || strings.ContainsRune(name, filepath.Separator) {
			return nil, errors.New("run: output file name " + name + " leaves the run directory")
		}
		if err := os.Rename(filepath.Join(stage, name), filepath.Join(dir, name)); err != nil {
			return nil, &WriteError{Path: filepath.Join(dir, name), Err: WithoutPath(err)}
		}
	}
	return names, nil
}

// isOutput reports whether a directory entry is one maple writes into a run
// directory: its outputs (scenario.yaml, metrics.csv, summary.json, the
// trace, provenance.json, report.html, timeline.json, the PNG and SVG
// figures) and its temporary files and
// directories (.trace-*.part, .NAME.tmp-*).
func isOutput(e fs.DirEntry) bool {
	name := e.Name()
	if strings.HasPrefix(name, ".") && strings.Contains(name, tempInfix) {
		return true // a temporary file or staging directory
	}
	if e.IsDir() {
		return false
	}
	switch name {
	case "scenario.yaml", "metrics.csv", "summary.json", "trace.jsonl", "trace.jsonl.zst",
		"provenance.json", "report.html", "timeline.json":
		return true
	}
	if strings.HasPrefix(name, ".trace-") && strings.HasSuffix(name, ".part") {
		return true
	}
	ext := filepath.Ext(name)
	return ext == ".png" || ext == ".svg"
}
