package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"maple/cluster/wire"
	"maple/internal/fileio"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// chunkSize is the most bytes one Chunk carries: files and results travel
// in pieces far below gRPC's message limit (maxMessage), one piece in flight
// per transfer.
const chunkSize = 1 << 20

// manifest lists the files a plan's jobs read (inputs.PlanFiles) as the
// coordinator found them, and where it serves their bytes from.
type manifest struct {
	entries []*wire.FileEntry
	paths   map[string]string // hex SHA-256 → path
}

// newManifest hashes the files the plan's jobs read.
func newManifest(plan *scenarios.Plan) (*manifest, error) {
	m := &manifest{paths: map[string]string{}}
	for _, p := range inputs.PlanFiles(plan) {
		e := &wire.FileEntry{Path: filepath.Clean(p)}
		m.entries = append(m.entries, e)
		info, err := os.Stat(p)
		switch {
		case err != nil:
			e.Missing = true // the job reports it, as it would here
		case info.IsDir():
			e.Dir = true
			list, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("listing %s: %w", p, err)
			}
			for _, d := range list {
				e.Entries = append(e.Entries, &wire.DirEntry{Name: d.Name(), Dir: d.IsDir()})
			}
		default:
			sum, size, err := hashFile(p)
			if err != nil {
				return nil, err
			}
			e.Sha256, e.Size = sum, size
			m.paths[hex.EncodeToString(sum)] = p
		}
	}
	return m, nil
}

// hashFile returns the SHA-256 and size of the file at path.
func hashFile(path string) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return h.Sum(nil), n, nil
}

// chunk returns the bytes of the file with content hash sum from offset.
func (m *manifest) chunk(sum []byte, offset int64) ([]byte, error) {
	path, ok := m.paths[hex.EncodeToString(sum)]
	if !ok {
		return nil, errors.New("no such file in the plan")
	}
	return readChunk(path, offset)
}

// readChunk reads at most chunkSize bytes of the file at path from offset.
func readChunk(path string, offset int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, chunkSize)
	n, err := f.ReadAt(buf, offset)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return buf[:n], nil
}

// store is a worker's cache of the files coordinators shipped, each named
// by its content's SHA-256, so that a file is fetched once however many
// plans read it.
type store struct {
	dir      string
	mu       sync.Mutex
	inflight map[string]*sync.Mutex // per hash: one fetch at a time
}

// newStore returns the store in dir, which must exist.
func newStore(dir string) *store { return &store{dir: dir, inflight: map[string]*sync.Mutex{}} }

// path returns where the file with content hash sum is kept.
func (s *store) path(sum []byte) string { return filepath.Join(s.dir, hex.EncodeToString(sum)) }

// fetch makes sure the store holds the file with hash sum and size,
// reading what it lacks through read (offset → next bytes; an empty slice
// before size bytes is an error). The bytes are checked against sum.
func (s *store) fetch(sum []byte, size int64, read func(offset int64) ([]byte, error)) error {
	key := hex.EncodeToString(sum)
	s.mu.Lock()
	lock := s.inflight[key]
	if lock == nil {
		lock = &sync.Mutex{}
		s.inflight[key] = lock
	}
	s.mu.Unlock()
	lock.Lock()
	defer lock.Unlock()
	final := s.path(sum)
	if _, err := os.Stat(final); err == nil {
		return nil
	}
	tmp, err := os.CreateTemp(s.dir, ".fetch-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	for offset := int64(0); offset < size; {
		b, err := read(offset)
		if err != nil {
			tmp.Close()
			return err
		}
		if len(b) == 0 {
			tmp.Close()
			return fmt.Errorf("the coordinator's file ended at %d of %d bytes", offset, size)
		}
		h.Write(b)
		if _, err := tmp.Write(b); err != nil {
			tmp.Close()
			return err
		}
		offset += int64(len(b))
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if !bytes.Equal(h.Sum(nil), sum) {
		return errors.New("the bytes received do not match the file's SHA-256: it changed on the coordinator's disk during the run")
	}
	return os.Rename(tmp.Name(), final)
}

// errNotShipped is what a worker's jobs get for a path their coordinator
// did not ship.
var errNotShipped = errors.New("not shipped by the coordinator (a worker reads only the files its coordinator sends)")

// shipped is the file system of a plan's jobs on a worker (inputs.FileSystem):
// the files and directory listings the coordinator listed, by the paths the
// jobs name them, read from the worker's store. Nothing else exists.
type shipped struct {
	store   *store
	entries map[string]*wire.FileEntry // by cleaned path
}

// newShipped returns the file system of the manifest entries.
func newShipped(s *store, entries []*wire.FileEntry) *shipped {
	fsys := &shipped{store: s, entries: map[string]*wire.FileEntry{}}
	for _, e := range entries {
		fsys.entries[filepath.Clean(e.Path)] = e
	}
	return fsys
}

// lookup returns the entry of name, or the error of an operation on it.
func (f *shipped) lookup(op, name string) (*wire.FileEntry, error) {
	e, ok := f.entries[filepath.Clean(name)]
	switch {
	case !ok:
		return nil, &fs.PathError{Op: op, Path: name, Err: errNotShipped}
	case e.Missing:
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return e, nil
}

// Open implements inputs.FileSystem.
func (f *shipped) Open(ctx context.Context, name string, limit int64) (*fileio.File, error) {
	e, err := f.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if e.Dir {
		return nil, &fs.PathError{Op: "open", Path: name, Err: errors.New("is a directory")}
	}
	file, err := fileio.OpenContext(ctx, f.store.path(e.Sha256), limit)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = name // the path the job named, not the store's
	}
	return file, err
}

// ReadDir implements inputs.FileSystem.
func (f *shipped) ReadDir(name string) ([]fs.DirEntry, error) {
	e, err := f.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !e.Dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, len(e.Entries))
	for i, d := range e.Entries {
		out[i] = fs.FileInfoToDirEntry(info{name: d.Name, dir: d.Dir})
	}
	return out, nil
}

// Stat implements inputs.FileSystem.
func (f *shipped) Stat(name string) (fs.FileInfo, error) {
	e, err := f.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return info{name: filepath.Base(name), dir: e.Dir, size: e.Size}, nil
}

// info describes a shipped file or directory entry.
type info struct {
	name string
	dir  bool
	size int64
}

func (i info) Name() string { return i.name }
func (i info) Size() int64  { return i.size }
func (i info) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i info) ModTime() time.Time { return time.Time{} }
func (i info) IsDir() bool        { return i.dir }
func (i info) Sys() any           { return nil }
