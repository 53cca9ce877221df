// Package fileio opens the files a user names — scenarios, data sets, tables,
// traces, the files of a run directory — for reading, within bounds: only
// regular files (a named pipe would block the reader until some other
// process writes to it, and a device such as /dev/zero never ends), and no
// more than a stated number of bytes, so that no input can hang maple or
// exhaust its memory. A file that breaks a bound is an error naming it.
//
// Every reader of a user's file goes through Open or ReadFile; readers that
// take an io.Reader from elsewhere bound it with Limit. A context given to
// Open is checked before every read, so that a long read stops soon after an
// interruption.
package fileio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNotRegular reports a path that names something other than a regular
// file: a directory, a named pipe (FIFO), a device, a socket.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge reports a file, or a stream, longer than its reader's bound.
var ErrTooLarge = errors.New("larger than")

// File is a regular file open for reading at most a bound of bytes.
type File struct {
	f     *os.File
	ctx   context.Context
	limit int64
	left  int64 // bytes that Read may still return
	size  int64
}

// Open opens the regular file at path to read at most limit bytes (limit > 0).
// It refuses anything else without blocking on it: the path is checked before
// it is opened, and opened without waiting for a writer, and the open file is
// checked again, so that a named pipe put in its place meanwhile is refused
// too. A file whose size already exceeds limit is refused at once; one that
// grows past it fails the read that crosses the bound. Errors are
// *fs.PathError values naming path, wrapping ErrNotRegular, ErrTooLarge or
// the operating system's error.
func Open(path string, limit int64) (*File, error) {
	return OpenContext(context.Background(), path, limit)
}

// OpenContext is Open with a context: once ctx is done, Read and ReadAt
// return its error instead of reading.
func OpenContext(ctx context.Context, path string, limit int64) (*File, error) {
	if limit <= 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("fileio: limit %d, need a positive bound", limit)}
	}
	if err := ctx.Err(); err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := check(path, info, limit); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlocking, 0)
	if err != nil {
		return nil, err
	}
	if info, err = f.Stat(); err == nil {
		err = check(path, info, limit)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{f: f, ctx: ctx, limit: limit, left: limit, size: info.Size()}, nil
}

// check refuses what is not a regular file of at most limit bytes.
func check(path string, info fs.FileInfo, limit int64) error {
	if !info.Mode().IsRegular() {
		return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w: %s", ErrNotRegular, kind(info.Mode()))}
	}
	if info.Size() > limit {
		return &fs.PathError{Op: "open", Path: path, Err: tooLarge(limit)}
	}
	return nil
}

// kind names the type of a file that is not regular.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file (mode " + m.String() + ")"
}

// tooLarge is the error of a file or stream beyond limit bytes.
func tooLarge(limit int64) error {
	return fmt.Errorf("%w %s, the most this reader takes", ErrTooLarge, Bytes(limit))
}

// Bytes formats a size for messages: 1048576 is "1 MiB", 1500 "1500 bytes".
func Bytes(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Name returns the path the file was opened with.
func (f *File) Name() string { return f.f.Name() }

// Size returns the file's size when it was opened.
func (f *File) Size() int64 { return f.size }

// Read implements io.Reader, failing with an error wrapping ErrTooLarge once
// the file holds more than the bound.
func (f *File) Read(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	if int64(len(p)) > f.left+1 {
		p = p[:f.left+1] // one byte beyond the bound tells that there is more
	}
	n, err := f.f.Read(p)
	if int64(n) > f.left {
		n = int(f.left)
		f.left = 0
		return n, &fs.PathError{Op: "read", Path: f.Name(), Err: tooLarge(f.limit)}
	}
	f.left -= int64(n)
	return n, err
}

// ReadAt implements io.ReaderAt within the bound.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, &fs.PathError{Op: "read", Path: f.Name(), Err: err}
	}
	if off >= f.limit || int64(len(p)) > f.limit-off {
		return 0, &fs.PathError{Op: "read", Path: f.Name(), Err: tooLarge(f.limit)}
	}
	return f.f.ReadAt(p, off)
}

// Seek implements io.Seeker; reading resumes at the new offset, with the
// bound counted from the start of the file.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	pos, err := f.f.Seek(offset, whence)
	if err == nil {
		f.left = max(f.limit-pos, 0)
	}
	return pos, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile returns the contents of the regular file at path, at most limit
// bytes of it (see Open).
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, 0, f.Size()+1) // +1: the read that sees the end
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return nil, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew: let append pick a larger buffer
		}
	}
}

// Limit returns a reader that reads r until its end or limit bytes, failing
// with an error wrapping ErrTooLarge, and naming name, if r holds more. It
// bounds readers of streams that were not opened by Open (a pipe on
// standard input, a reader a caller passes in).
func Limit(r io.Reader, limit int64, name string) io.Reader {
	return &limited{r: r, left: limit, limit: limit, name: name}
}

type limited struct {
	r           io.Reader
	left, limit int64
	name        string
}

func (l *limited) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		n = int(l.left)
		l.left = 0
		return n, fmt.Errorf("%s: %w", l.name, tooLarge(l.limit))
	}
	l.left -= int64(n)
	return n, err
}

// ErrLineTooLong reports a line longer than its reader's bound.
var ErrLineTooLong = errors.New("line longer than")

// LimitLines returns a reader that reads r but fails, naming name and the
// line, once a line (the bytes between two '\n') exceeds maxLine bytes.
// Readers that gather a line or record before looking at it (encoding/csv)
// would otherwise hold a whole endless line in memory.
func LimitLines(r io.Reader, maxLine int, name string) io.Reader {
	return &lineLimited{r: r, max: maxLine, name: name, line: 1}
}

type lineLimited struct {
	r        io.Reader
	max, cur int // the bound and the length of the current line so far
	name     string
	line     int
	err      error
}

func (l *lineLimited) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for i, rest := 0, p[:n]; len(rest) > 0; {
		j := bytes.IndexByte(rest, '\n')
		if j < 0 {
			j = len(rest)
		}
		if l.cur+j > l.max {
			l.err = fmt.Errorf("%s:%d: %w %d bytes", l.name, l.line, ErrLineTooLong, l.max)
			return i + l.max - l.cur, l.err
		}
		if j == len(rest) {
			l.cur += j
			break
		}
		i, rest = i+j+1, rest[j+1:]
		l.cur = 0
		l.line++
	}
	return n, err
}
