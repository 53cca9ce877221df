package inputs

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"maple/internal/fileio"
	"maple/scenarios"
)

// FileSystem is where a job reads the files its scenario names (data,
// topology, availability and step-time files), by the paths the scenario
// gives, resolved against the plan's directory. A job reads this machine's
// disk unless its plan was given another FileSystem (ReadFrom): a worker of
// a cluster serves only the files its coordinator shipped, so that a
// scenario can never make it read a file of its own disk.
//
// Open opens a regular file to read at most limit bytes, read until ctx is
// done (fileio.OpenContext): whatever the file system, a job never blocks
// on a named pipe nor reads a device without end.
type FileSystem interface {
	Open(ctx context.Context, name string, limit int64) (*fileio.File, error)
	ReadDir(name string) ([]fs.DirEntry, error)
	Stat(name string) (fs.FileInfo, error)
}

// diskFiles is this machine's file system.
type diskFiles struct{}

func (diskFiles) Open(ctx context.Context, name string, limit int64) (*fileio.File, error) {
	return fileio.OpenContext(ctx, name, limit)
}
func (diskFiles) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (diskFiles) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }

// planFiles maps the curves of plans given a FileSystem (ReadFrom) to it.
var planFiles sync.Map // *scenarios.CurveSpec → FileSystem

// ReadFrom makes the jobs of plan read the files their scenario names from
// fsys instead of this machine's disk, until release is called.
func ReadFrom(plan *scenarios.Plan, fsys FileSystem) (release func()) {
	for _, c := range plan.Curves {
		planFiles.Store(c, fsys)
	}
	return func() {
		for _, c := range plan.Curves {
			planFiles.Delete(c)
		}
	}
}

// filesOf returns the file system a curve's jobs read.
func filesOf(c *scenarios.CurveSpec) FileSystem {
	if f, ok := planFiles.Load(c); ok {
		return f.(FileSystem)
	}
	return diskFiles{}
}

// PlanFiles lists, sorted and without repeats, the paths of the files and
// directories the jobs of plan read, as the jobs name them: the scenario's
// paths resolved against the plan's directory. A data directory
// (data.directory.path) comes with the agents' files it holds, which are
// the files of the directory's listing that the jobs read. Paths that do not
// exist are listed too: the jobs report them.
func PlanFiles(plan *scenarios.Plan) []string {
	var paths []string
	add := func(p string) {
		if p != "" {
			paths = append(paths, Resolve(plan.Dir, p))
		}
	}
	for _, c := range plan.Curves {
		for _, p := range pathsOf(c.Scenario) {
			add(*p)
		}
		if x := c.Scenario.Data.Directory; x != nil && x.Path != "" {
			dir := Resolve(plan.Dir, x.Path)
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				if base := strings.TrimSuffix(e.Name(), filepath.Ext(e.Name())); !e.IsDir() && isAgentFile(base) {
					paths = append(paths, filepath.Join(dir, e.Name()))
				}
			}
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// pathsOf returns the fields of sc that name a file or a directory, relative
// to the scenario's directory or absolute: the data files of its kind, the
// topology's file or matrix, the availability and step-time tables. (The
// loader refuses a data section of another kind than data.kind, so every
// section present is read.) pathFields names the same fields.
func pathsOf(sc *scenarios.Scenario) []*string {
	var out []*string
	d := &sc.Data
	if l := d.LIBSVM; l != nil {
		out = append(out, &l.File, &l.TestFile)
	}
	if x := d.IDX; x != nil {
		out = append(out, &x.Images, &x.Labels, &x.TestImages, &x.TestLabels)
	}
	if x := d.Directory; x != nil {
		out = append(out, &x.Path, &x.Test)
	}
	if t := sc.Topology; t != nil {
		out = append(out, &t.File, &t.Matrix)
	}
	out = append(out, &sc.Network.Availability)
	if st := sc.Network.StepTime; st != nil {
		out = append(out, &st.File)
	}
	return out
}

// pathFields are the scenario fields that name files or directories, as
// curves and sweeps name them: pathsOf's fields.
var pathFields = map[string]bool{
	"data.libsvm.file": true, "data.libsvm.test_file": true,
	"data.idx.images": true, "data.idx.labels": true, "data.idx.test_images": true, "data.idx.test_labels": true,
	"data.directory.path": true, "data.directory.test": true,
	"topology.file": true, "topology.matrix": true,
	"network.availability": true, "network.step_time.file": true,
}

// isAgentFile reports whether a directory entry's name without its
// extension names an agent's file (digits only): the files readDirectory
// reads.
func isAgentFile(base string) bool { return base != "" && strings.Trim(base, "0123456789") == "" }

// Resolve returns path, relative to the scenario's directory dir unless it
// is absolute.
func Resolve(dir, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// WithAbsolutePaths returns a copy of sc whose file and directory paths
// (pathsOf), including those set by curves and sweeps, are absolute,
// resolved against dir (the original scenario's directory): the run
// directory's scenario.yaml then runs again from anywhere.
func WithAbsolutePaths(sc *scenarios.Scenario, dir string) *scenarios.Scenario {
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		if a, err := filepath.Abs(filepath.Join(dir, p)); err == nil {
			return a
		}
		return p
	}
	out := *sc
	if l := sc.Data.LIBSVM; l != nil {
		c := *l
		out.Data.LIBSVM = &c
	}
	if x := sc.Data.IDX; x != nil {
		c := *x
		out.Data.IDX = &c
	}
	if x := sc.Data.Directory; x != nil {
		c := *x
		out.Data.Directory = &c
	}
	if t := sc.Topology; t != nil {
		c := *t
		out.Topology = &c
	}
	if st := sc.Network.StepTime; st != nil {
		c := *st
		out.Network.StepTime = &c
	}
	for _, p := range pathsOf(&out) {
		*p = abs(*p)
	}
	out.Curves = make([]scenarios.Curve, len(sc.Curves))
	for i, c := range sc.Curves {
		out.Curves[i] = scenarios.Curve{Label: c.Label, Set: map[string]any{}}
		for f, v := range c.Set {
			if s, ok := v.(string); ok && pathFields[f] {
				v = abs(s)
			}
			out.Curves[i].Set[f] = v
		}
	}
	if len(sc.Curves) == 0 {
		out.Curves = nil
	}
	out.Sweep = make(scenarios.Sweep, len(sc.Sweep))
	for i, a := range sc.Sweep {
		out.Sweep[i] = scenarios.SweepAxis{Field: a.Field, Values: a.Values}
		if pathFields[a.Field] {
			out.Sweep[i].Values = make([]*yaml.Node, len(a.Values))
			for k, v := range a.Values {
				n := *v
				if n.Kind == yaml.ScalarNode {
					n.Value = abs(n.Value)
				}
				out.Sweep[i].Values[k] = &n
			}
		}
	}
	if len(sc.Sweep) == 0 {
		out.Sweep = nil
	}
	return &out
}
