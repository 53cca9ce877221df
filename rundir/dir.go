package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Dir is a run directory prepared for an execution.
type Dir struct {
	// Path is the directory's path.
	Path string
	// created lists the directories CreateDir made, parents first.
	created []string
}

// DirError is a problem with the requested run directory: it exists and is
// not empty, or holds files maple did not write, or cannot be created.
type DirError struct{ Msg string }

// Error implements error.
func (e *DirError) Error() string { return e.Msg }

// CreateDir prepares the run directory of an execution. With out set, it is
// that directory: created if missing; if it exists and holds anything, it is
// refused unless force, which deletes maple's own files from it (outputs,
// figures and temporaries; see isOutput) and refuses a directory holding
// anything else. With out empty, it is a new directory root/NAME-TIMESTAMP,
// with a numeric suffix if that exists, created with an atomic Mkdir so that
// concurrent executions never share one; root is created only then.
// NAME is the scenario's name reduced to letters, digits and ._+-, so the
// directory never leaves root.
func CreateDir(out, root, name string, force bool) (*Dir, error) {
	d := &Dir{}
	if out != "" {
		return d, d.useDir(out, force)
	}
	if err := d.mkdirAll(root); err != nil {
		return nil, &DirError{fmt.Sprintf("cannot create %s: %v", root, WithoutPath(err))}
	}
	base := dirName(name) + "-" + time.Now().Format("20060102-150405")
	for i := 1; i <= 10000; i++ {
		path := filepath.Join(root, base)
		if i > 1 {
			path += "-" + strconv.Itoa(i)
		}
		err := os.Mkdir(path, 0o755)
		if err == nil {
			d.Path = path
			d.created = append(d.created, path)
			return d, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			d.Discard()
			return nil, &DirError{fmt.Sprintf("cannot create the run directory %s: %v", path, WithoutPath(err))}
		}
	}
	d.Discard()
	return nil, &DirError{fmt.Sprintf("cannot find a free run directory name %s-N in %s", base, root)}
}

// useDir prepares the explicitly requested directory out.
func (d *Dir) useDir(out string, force bool) error {
	d.Path = out
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := d.mkdirAll(out); err != nil {
			return &DirError{fmt.Sprintf("--out %s: cannot create it: %v", out, WithoutPath(err))}
		}
		return nil
	case err != nil:
		return &DirError{fmt.Sprintf("--out %s: %v", out, WithoutPath(err))}
	case len(entries) == 0:
		return nil
	case !force:
		return &DirError{fmt.Sprintf("--out %s: the directory is not empty (it holds %s); use --force to replace maple's files in it, or choose another directory", out, list(entries))}
	}
	var foreign []fs.DirEntry
	for _, e := range entries {
		if !isOutput(e) {
			foreign = append(foreign, e)
		}
	}
	if len(foreign) > 0 {
		return &DirError{fmt.Sprintf("--out %s: holds %s, which maple did not write: not clearing it even with --force", out, list(foreign))}
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
			return &DirError{fmt.Sprintf("--out %s: cannot remove %s: %v", out, e.Name(), WithoutPath(err))}
		}
	}
	return nil
}

// mkdirAll creates path and its missing parents, remembering which it made.
func (d *Dir) mkdirAll(path string) error {
	var missing []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		}
		missing = append([]string{p}, missing...)
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return err
	}
	d.created = append(d.created, missing...)
	return nil
}

// Discard removes the directories CreateDir made, deepest first, as far as
// they are empty: an execution that wrote nothing leaves nothing behind.
func (d *Dir) Discard() {
	for i := len(d.created) - 1; i >= 0; i-- {
		if os.Remove(d.created[i]) != nil {
			return
		}
	}
}

// list names up to three directory entries.
func list(entries []fs.DirEntry) string {
	var names []string
	for i, e := range entries {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(entries)-3))
			break
		}
		names = append(names, e.Name())
	}
	return strings.Join(names, ", ")
}

// dirName reduces a scenario name to a safe directory name: letters, digits
// and . _ + - are kept, anything else becomes -, leading dots and dashes are
// dropped, and the result has at most 64 characters ("run" if nothing is
// left).
func dirName(name string) string {
	var b strings.Builder
	n := 0
	for _, r := range name {
		if n == 64 {
			break
		}
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("._+-", r):
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
		n++
	}
	s := strings.TrimLeft(b.String(), ".-")
	if s == "" {
		return "run"
	}
	return s
}

// WithoutPath strips the path an *os.PathError, or the paths an
// *os.LinkError, repeats, for messages that name the file already.
func WithoutPath(err error) error {
	switch e := err.(type) {
	case *os.PathError:
		return e.Err
	case *os.LinkError:
		return e.Err
	}
	return err
}
