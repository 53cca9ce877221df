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

// WriteAtomic writes path with write, through a temporary file.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+tempInfix+"*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := bufio.NewWriterSize(f, 1<<16)
	if err := write(w); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
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
		return nil, err
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
			return nil, err
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
