package inputs

import (
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"maple/scenarios"
)

// The run directory's scenario.yaml names every file and directory by an
// absolute path, those of curves and sweeps too, so that it runs again from
// anywhere; the scenario it was made from keeps its relative paths. (Until
// now the IDX files, the LIBSVM test file and the data directory stayed
// relative, and a scenario.yaml copied elsewhere lost its data.)
func TestScenarioCopyNamesEveryPathAbsolutely(t *testing.T) {
	dir := t.TempDir()
	sc := &scenarios.Scenario{
		Data: scenarios.Data{
			LIBSVM:    &scenarios.LIBSVM{File: "a.svm", TestFile: "a.t"},
			IDX:       &scenarios.IDX{Images: "i", Labels: "l", TestImages: "ti", TestLabels: "tl"},
			Directory: &scenarios.Directory{Path: "agents", Test: "test.csv"},
		},
		Topology: &scenarios.Topology{File: "edges.txt", Matrix: "a.csv"},
		Network:  scenarios.Network{Availability: "avail.csv", StepTime: &scenarios.StepTime{File: "steps.csv"}},
		Curves:   []scenarios.Curve{{Label: "c", Set: map[string]any{"data.idx.images": "other", "seed": 3}}},
		Sweep: scenarios.Sweep{{Field: "data.directory.path", Values: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "d1"}, {Kind: yaml.ScalarNode, Value: "/abs/d2"}}}},
	}
	out := WithAbsolutePaths(sc, dir)
	paths := pathsOf(out)
	if len(paths) != len(pathFields) {
		t.Fatalf("%d path fields in a scenario with every section, %d names for curves and sweeps", len(paths), len(pathFields))
	}
	for _, p := range paths {
		if !filepath.IsAbs(*p) || !strings.HasPrefix(*p, dir) {
			t.Errorf("%q is not resolved against the scenario's directory", *p)
		}
	}
	for _, p := range pathsOf(sc) {
		if filepath.IsAbs(*p) {
			t.Errorf("the original scenario's %q became absolute", *p)
		}
	}
	if got := out.Curves[0].Set["data.idx.images"]; got != filepath.Join(dir, "other") || out.Curves[0].Set["seed"] != 3 {
		t.Errorf("curve set %v", out.Curves[0].Set)
	}
	if v := out.Sweep[0].Values; v[0].Value != filepath.Join(dir, "d1") || v[1].Value != "/abs/d2" || sc.Sweep[0].Values[0].Value != "d1" {
		t.Errorf("sweep values %q, %q (original %q)", v[0].Value, v[1].Value, sc.Sweep[0].Values[0].Value)
	}
}
