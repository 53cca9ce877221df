package report

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"maple/figures"
	"maple/rundir"
	"maple/scenarios"
)

// CompareFile is the default name of the page comparing several runs.
const CompareFile = "compare.html"

// runRow describes one run directory of a comparison.
type runRow struct {
	Name, Dir, Scenario, Description, Facts string
}

// WriteCompare writes to out the page that compares the run directories
// dirs: their curves overlaid metric by metric (each labelled with its
// run's name: the directory's base name, or its path where base names
// repeat), a table of their steady-state and final values, the scenario
// fields that differ between them, their privacy audits (a row and a chart
// per audited curve of each run), and their provenance. Like WriteTo, it
// refuses a directory that is not what maple run writes, and returns what
// the page flags about the directories, each naming its directory.
func WriteCompare(dirs []string, out string) ([]string, error) {
	runs := make([]*rundir.Run, len(dirs))
	var flags []string
	for i, d := range dirs {
		r, err := rundir.Read(d)
		if err != nil {
			return nil, err
		}
		runs[i] = r
		flags = append(flags, dirFlags(r)...)
	}
	names := runNames(dirs)
	pg := &page{Title: "Comparison of " + strings.Join(names, ", ")}
	var combined []rundir.Curve
	linear, timeAxis, from := true, true, -1
	for i, r := range runs {
		s := &r.Summary
		pg.Runs = append(pg.Runs, runRow{Name: names[i], Dir: dirs[i], Scenario: s.Scenario, Description: s.Description, Facts: facts(r)})
		for _, w := range append(slices.Clone(r.Flags), curveWarnings(s)...) {
			pg.Warnings = append(pg.Warnings, names[i]+": "+w)
		}
		for _, c := range r.Curves() {
			spec := *c.Spec
			spec.Label = names[i] + ", " + c.Spec.Label
			c.Spec = &spec
			combined = append(combined, c)
		}
		linear = linear && r.Output.Linear
		timeAxis = timeAxis && r.Output.XAxis == "time"
		if from < 0 || r.Output.PlotFrom < from {
			from = r.Output.PlotFrom
		}
	}
	diffs, err := scenarioDifferences(runs)
	if err != nil {
		return nil, err
	}
	pg.Differences = diffs
	out2 := scenarios.Output{Linear: linear}
	if timeAxis {
		out2.XAxis = "time"
	}
	set := newChartSet(out2)
	opts := figures.Options{Title: pg.Title, Linear: linear, From: from}
	if pg.Charts, pg.Sweeps, pg.Flat, err = set.metricCharts(opts, combined); err != nil {
		return nil, err
	}
	pg.Results = resultTable(runs, names, set.flat)
	pg.BandNote = bandNote(combined)
	if pg.Bounds, err = boundsOf(runs, names, pg.Title, set); err != nil {
		return nil, err
	}
	if pg.Bounds != nil {
		pg.Warnings = append(pg.Warnings, pg.Bounds.Findings...)
	}
	pg.Provenance = provenanceRows(runs)
	if err := pg.finish(set); err != nil {
		return nil, err
	}
	if err := render(out, pg); err != nil {
		return nil, err
	}
	return flags, nil
}

// runNames names the runs by their directories' base names, or by their
// paths where two base names are the same, numbering repeated paths.
func runNames(dirs []string) []string {
	names := make([]string, len(dirs))
	for i, d := range dirs {
		names[i] = filepath.Base(filepath.Clean(d))
	}
	if repeats(names) {
		for i, d := range dirs {
			names[i] = filepath.Clean(d)
		}
	}
	seen := map[string]int{}
	for i, n := range names {
		seen[n]++
		if seen[n] > 1 {
			names[i] = n + " (" + strconv.Itoa(seen[n]) + ")"
		}
	}
	return names
}

func repeats(names []string) bool {
	sorted := slices.Sorted(slices.Values(names))
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

// scenarioDifferences lists the fields of the runs' scenario.yaml whose
// values differ, in field order: a header row, then per field its dotted
// path and its value in each run ("—" where a run does not set it).
func scenarioDifferences(runs []*rundir.Run) ([][]string, error) {
	flat := make([]map[string]string, len(runs))
	fields := map[string]bool{}
	for i, r := range runs {
		var doc any
		if err := yaml.Unmarshal(r.Scenario, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(r.Dir, rundir.ScenarioFile), err)
		}
		flat[i] = map[string]string{}
		flatten("", doc, flat[i])
		for f := range flat[i] {
			fields[f] = true
		}
	}
	keys := make([]string, 0, len(fields))
	for f := range fields {
		keys = append(keys, f)
	}
	sort.Strings(keys)
	var rows [][]string
	for _, f := range keys {
		row := []string{f}
		differ := false
		for i := range runs {
			v, ok := flat[i][f]
			if !ok {
				v = "—"
			}
			row = append(row, v)
			differ = differ || v != row[1]
		}
		if differ {
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// flatten records the leaves of a YAML document by dotted path: a mapping's
// keys extend the path, a list of mappings is indexed (curves[1].label), a
// list of plain values is one leaf in flow style.
func flatten(path string, v any, out map[string]string) {
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			flatten(join(k), x, out)
		}
	case []any:
		if slices.ContainsFunc(v, func(x any) bool { _, m := x.(map[string]any); return m }) {
			for i, x := range v {
				flatten(fmt.Sprintf("%s[%d]", path, i), x, out)
			}
			return
		}
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = leaf(x)
		}
		out[path] = "[" + strings.Join(parts, ", ") + "]"
	default:
		out[path] = leaf(v)
	}
}

// leaf renders a plain YAML value, or a value nested in a list of plain
// values as JSON.
func leaf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case []any, map[string]any:
		if js, err := json.Marshal(v); err == nil {
			return string(js)
		}
	}
	return fmt.Sprint(v)
}
