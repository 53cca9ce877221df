package trace

import (
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"maple/internal/fileio"
)

// Trace is the message trace of a run directory, compressed (StoreFile) or
// plain JSON lines (JSONLFile); readers need not know which.
type Trace struct {
	// Path is the file read.
	Path  string
	file  *fileio.File
	store *Store // nil for JSON lines
}

// MaxFileBytes bounds the trace file Open reads (1 TiB): far beyond what any
// run writes, it only refuses what cannot be a trace. What a reader holds in
// memory is bounded otherwise: by the index and block limits of a store, by
// one line of JSON lines.
const MaxFileBytes = 1 << 40

// Open opens the trace of run directory dir, preferring the compressed
// store. If dir has neither file the error wraps fs.ErrNotExist; a trace
// that is not a regular file (a named pipe would block the reader) is
// refused (fileio.ErrNotRegular).
func Open(dir string) (*Trace, error) {
	path := filepath.Join(dir, StoreFile)
	f, err := fileio.Open(path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		path = filepath.Join(dir, JSONLFile)
		if f, err = fileio.Open(path, MaxFileBytes); err != nil {
			return nil, err
		}
		return &Trace{Path: path, file: f}, nil
	}
	if err != nil {
		return nil, err
	}
	s, err := ReadStore(f, f.Size(), path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Trace{Path: path, file: f, store: s}, nil
}

// Close closes the trace's file.
func (t *Trace) Close() error { return t.file.Close() }

// Indexed reports whether the trace is a compressed store, whose index lets
// Scan skip what a filter excludes.
func (t *Trace) Indexed() bool { return t.store != nil }

// Scan calls fn for every record f matches, in trace order. Returning ErrStop
// from fn ends the scan early without error.
func (t *Trace) Scan(f Filter, fn func(*Record) error) error {
	if t.store != nil {
		return t.store.Scan(f, fn)
	}
	if _, err := t.file.Seek(0, 0); err != nil {
		return err
	}
	err := Read(t.file, t.Path, func(rec *Record) error {
		if !f.Match(rec) {
			return nil
		}
		return fn(rec)
	})
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// Empty reports whether the trace holds no record: a store whose index
// lists no block, or an empty file of JSON lines. It is what a traced run of
// a family without messages writes (the gamma-mechanism curves), and what a
// trace emptied by mistake looks like; a command that read it would print
// nothing, so it asks first and says so.
func (t *Trace) Empty() bool {
	if t.store != nil {
		return len(t.store.Index.Blocks) == 0
	}
	return t.file.Size() == 0
}

// Values returns the values the trace's records take, for Filter.Check:
// from the index of a store, by reading the whole file otherwise.
func (t *Trace) Values() (*Values, error) {
	if t.store == nil {
		if _, err := t.file.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return Collect(t.file, t.Path)
	}
	ix := &t.store.Index
	v := &Values{Types: ix.Types, Actors: ix.Actors, Curves: slices.Sorted(slices.Values(ix.Curves))}
	for i, b := range ix.Blocks {
		v.Records += b.Records
		if !slices.Contains(v.Runs, b.Run) {
			v.Runs = append(v.Runs, b.Run)
		}
		if i == 0 {
			v.MinRound, v.MaxRound = b.MinRound, b.MaxRound
		}
		v.MinRound, v.MaxRound = min(v.MinRound, b.MinRound), max(v.MaxRound, b.MaxRound)
	}
	slices.Sort(v.Runs)
	return v, nil
}

// SortNames returns names sorted, numbered names (agent/2, agent/10) in
// numeric order.
func SortNames(names []string) []string {
	sorted := slices.Clone(names)
	key := func(name string) (string, int) {
		if prefix, n, ok := numbered(name); ok {
			return prefix, n
		}
		return name, -1
	}
	slices.SortFunc(sorted, func(a, b string) int {
		pa, na := key(a)
		pb, nb := key(b)
		if c := strings.Compare(pa, pb); c != 0 {
			return c
		}
		return na - nb
	})
	return sorted
}

// numbered splits "agent/12" into "agent/" and 12.
func numbered(name string) (string, int, bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 || i == len(name)-1 {
		return "", 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != name[i+1:] {
		return "", 0, false
	}
	return name[:i+1], n, true
}
