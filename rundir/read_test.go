package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"maple/internal/fileio"
	"maple/internal/fileio/fileiotest"
	"maple/scenarios"
)

// fixture returns the curves of a small run as maple run averages them:
// iterations 0, 2 and 4 (output.every 2); a curve without noise, a curve
// whose label needs quoting in CSV, and a curve that diverged, whose last
// row is +Inf and -Inf with standard deviations NaN (what strconv writes,
// and what rundir writes for such a run).
func fixture() []Curve {
	msd := Column{Name: "msd", Decibel: true, Label: "MSD (dB)"}
	noise := Column{Name: "noise", Label: "noise"}
	table := func(cols int, f func(row, col int) float64) *Table {
		t := NewTable(4, 2, cols)
		for r := range t.Iterations {
			for c := range cols {
				t.Set(r, c, f(r, c))
			}
		}
		return t
	}
	diverging := func(r, c int) float64 {
		if r == 2 {
			return math.Inf(1 - 2*c) // +Inf for the MSD, -Inf for the noise
		}
		return float64(r + 1)
	}
	return []Curve{
		{Spec: &scenarios.CurveSpec{Label: "clear"}, Cols: []Column{msd}, Runs: 2,
			Mean: table(1, func(r, c int) float64 { return 1 / float64(3+r) }), Std: table(1, func(r, c int) float64 { return 0.1 })},
		{Spec: &scenarios.CurveSpec{Label: "noisy, μ=0.1"}, Cols: []Column{msd, noise}, Runs: 2,
			Mean: table(2, func(r, c int) float64 { return math.Pi * float64(r*c+1) }), Std: table(2, func(r, c int) float64 { return math.E })},
		{Spec: &scenarios.CurveSpec{Label: "diverged"}, Cols: []Column{msd, noise}, Runs: 1,
			Mean: table(2, diverging), Std: table(2, func(r, c int) float64 { return math.NaN() })},
	}
}

// writeRun writes a run directory of curves as maple run writes one: the
// resolved scenario with output section output, metrics.csv, summary.json
// (whose final values are the curves' last rows, a value that is not finite
// written as null) and provenance.json.
func writeRun(t *testing.T, dir, output string, curves []Curve) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, ScenarioFile), []byte("name: x\noutput: "+output+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteMetrics(filepath.Join(dir, MetricsFile), curves); err != nil {
		t.Fatal(err)
	}
	s := Summary{Scenario: "x", Version: "test", Engine: "actors", Seed: 1, Columns: UnionColumns(curves)}
	for _, c := range curves {
		last := len(c.Mean.Iterations) - 1
		cs := CurveSummary{Label: c.Spec.Label, Settings: c.Spec.Settings, Runs: c.Runs, Iterations: c.Mean.Iterations[last],
			Final: map[string]Number{}, SteadyState: map[string]Number{}}
		for r := range c.Runs {
			cs.RunSeeds = append(cs.RunSeeds, fmt.Sprintf("%#016x", r+1))
		}
		for k, col := range c.Cols {
			cs.Final[col.Name] = Number(c.Mean.Get(last, k))
			cs.SteadyState[col.Name] = Number(SteadyState(c.Mean, k, 0.5))
		}
		if at, ok := c.Mean.DivergedAt(); ok {
			cs.Diverged, cs.DivergedAt, cs.DivergedRuns = true, at, c.Runs
		}
		s.Curves = append(s.Curves, cs)
	}
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteProvenance(dir, "test", []string{"maple", "run", "x.yaml"}); err != nil {
		t.Fatal(err)
	}
}

// A run directory as maple writes it reads back without a flag, the
// diverged curve's +Inf, -Inf and NaN included.
func TestReadWhatMapleWrites(t *testing.T) {
	dir := t.TempDir()
	writeRun(t, dir, "{every: 2}", fixture())
	r, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Flags) != 0 {
		t.Errorf("flags %q, want none", r.Flags)
	}
	if len(r.Metrics) != 3 || r.Metrics[1].Label != "noisy, μ=0.1" {
		t.Fatalf("curves %+v", r.Metrics)
	}
	d := r.Metrics[2]
	if msd, noise, std := d.Columns["msd"][2], d.Columns["noise"][2], d.Columns["msd_std"][0]; !math.IsInf(msd, 1) || !math.IsInf(noise, -1) || !math.IsNaN(std) {
		t.Errorf("the diverged curve's last row reads msd %v, noise %v, msd_std %v; want +Inf, -Inf, NaN", msd, noise, std)
	}
}

// What maple writes, changed the way a file gets damaged, cut, edited or
// mixed with another run's, is refused with one error naming the file and,
// in metrics.csv and for JSON that does not parse, the line. metrics.csv's
// lines: 1 the header, 2–4 curve "clear" (iterations 0, 2, 4), 5–7 curve
// "noisy, μ=0.1", 8–10 curve "diverged".
func TestReadRefusesWhatMapleDoesNotWrite(t *testing.T) {
	lines := func(f func([]string) []string) func(string) string {
		return func(s string) string {
			l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
			return strings.Join(f(l), "\n") + "\n"
		}
	}
	set := func(content string) func(string) string { return func(string) string { return content } }
	swap := func(i, j int) func([]string) []string {
		return func(l []string) []string { l[i], l[j] = l[j], l[i]; return l }
	}
	const metrics, summary = MetricsFile, SummaryFile
	cases := []struct {
		name, file string
		change     func(string) string
		want       []string // after the directory's path
	}{
		// metrics.csv
		{"cut inside a row", metrics, func(s string) string { return s[:len(s)-5] }, []string{"metrics.csv:10: the row is cut short"}},
		{"cut inside a quoted label", metrics, func(s string) string { return s[:strings.LastIndex(s, `"noisy`)+4] }, []string{"metrics.csv:7: the row is cut short"}},
		{"cut after a row", metrics, lines(func(l []string) []string { return l[:9] }), []string{`metrics.csv:9: curve "diverged" ends at iteration 2, but its runs had 4 iterations`}},
		{"a curve left out", metrics, lines(func(l []string) []string { return l[:7] }), []string{`metrics.csv: no rows of curve "diverged", which summary.json lists`}},
		{"a row nan,inf,-inf", metrics, func(s string) string { return s + "nan,inf,-inf\n" }, []string{"metrics.csv:11: 3 fields, header has 7"}},
		{"a row of a curve in lower case", metrics, func(s string) string { return s + "diverged,6,nan,inf,-inf,nan,inf\n" }, []string{`metrics.csv:11: msd: "nan" is not a number as maple writes one`}},
		{"a row as maple spells it, one too many", metrics, func(s string) string { return s + "diverged,6,NaN,+Inf,-Inf,NaN,+Inf\n" }, []string{`metrics.csv:11: iteration 6 of curve "diverged", beyond its runs' 4 iterations`}},
		{"a row of nan, inf as its iteration", metrics, func(s string) string { return s + "nan,inf,-inf,1,1,1,1\n" }, []string{`metrics.csv:11: iteration "inf": maple writes a whole number`}},
		{"an iteration 2.0", metrics, lines(func(l []string) []string { l[2] = strings.Replace(l[2], "clear,2,", "clear,2.0,", 1); return l }), []string{`metrics.csv:3: iteration "2.0"`}},
		{"a hexadecimal number", metrics, lines(func(l []string) []string {
			l[1] = "clear,0,0x1p-2" + l[1][len("clear,0,0.3333333333333333"):]
			return l
		}), []string{`metrics.csv:2: msd: "0x1p-2" is not a number`}},
		{"a row repeated", metrics, lines(func(l []string) []string { return slices.Insert(l, 3, l[2]) }), []string{`metrics.csv:4: curve "clear": iteration 2 after 2`}},
		{"a row left out", metrics, lines(func(l []string) []string { return slices.Delete(l, 2, 3) }), []string{`metrics.csv:3: iteration 4 of curve "clear" where maple records iteration 2 (every 2 iterations`}},
		{"the first row left out", metrics, lines(func(l []string) []string { return slices.Delete(l, 1, 2) }), []string{`metrics.csv:2: curve "clear" starts at iteration 2`}},
		{"curves interleaved", metrics, lines(swap(3, 4)), []string{`metrics.csv:5: rows of curve "clear" again, after those of curve "noisy, μ=0.1"`}},
		{"a curve renamed", metrics, func(s string) string { return strings.ReplaceAll(s, "diverged,", "other,") }, []string{`metrics.csv:8: curve "other" where summary.json has curve 3, "diverged"`}},
		{"a final value changed", metrics, lines(func(l []string) []string { l[3] = strings.Replace(l[3], "clear,4,0.2,", "clear,4,0.21,", 1); return l }),
			[]string{`metrics.csv:4: msd of curve "clear" at iteration 4 is 0.21, but its final value in summary.json is 0.2:`}},
		{"a column renamed", metrics, func(s string) string { return strings.Replace(s, "noise,", "nois,", 1) }, []string{"metrics.csv:1: the header does not list the columns summary.json describes: want curve,iteration,msd,msd_std,msd_db,noise,noise_std"}},
		{"a column repeated", metrics, func(s string) string { return strings.Replace(s, "noise,", "msd,", 1) }, []string{`metrics.csv:1: the header's column 6, "msd", is empty or repeated`}},
		{"no header", metrics, lines(func(l []string) []string { return l[1:] }), []string{"metrics.csv:1: no header"}},
		{"empty", metrics, set(""), []string{"metrics.csv: empty"}},
		{"a header alone", metrics, lines(func(l []string) []string { return l[:1] }), []string{"metrics.csv: no rows"}},
		// summary.json
		{"{}", summary, set("{}"), []string{`summary.json: has no "scenario", "version", "engine", "seed" or "curves": not what maple run writes`}},
		{"null", summary, set("null"), []string{"summary.json: null, not a summary"}},
		{"a list", summary, set("[]\n"), []string{"summary.json:1: the document: a JSON array, where maple writes an object"}},
		{"not JSON", summary, func(s string) string { return strings.Replace(s, `"engine": "actors",`, `"engine": actors,`, 1) }, []string{"summary.json:4: not JSON: invalid character 'a'"}},
		{"a string for a number", summary, func(s string) string { return strings.Replace(s, `"runs": 2,`, `"runs": "2",`, 1) }, []string{"summary.json:", "runs: a JSON string, where maple writes a whole number"}},
		{"a string for a final value", summary, func(s string) string { return strings.Replace(s, `"msd": 0.2`, `"msd": "0.2"`, 1) }, []string{"summary.json: curves.final: a JSON string, where maple writes a number"}},
		{"no curves", summary, set(`{"scenario": "x", "version": "v", "engine": "actors", "seed": 1, "curves": []}`), []string{"summary.json: lists no curves"}},
		{"an empty scenario", summary, func(s string) string { return strings.Replace(s, `"scenario": "x"`, `"scenario": ""`, 1) }, []string{"summary.json: scenario is empty"}},
		{"a curve without run seeds", summary, func(s string) string { return strings.Replace(s, `"run_seeds"`, `"seeds"`, 1) }, []string{`summary.json: curves[0] has no "run_seeds"`}},
		{"no runs", summary, func(s string) string { return strings.Replace(s, `"runs": 1,`, `"runs": 0,`, 1) }, []string{`summary.json: curves[2] ("diverged"): runs is 0`}},
		{"a seed too few", summary, func(s string) string { return strings.Replace(s, `"runs": 1,`, `"runs": 2,`, 1) }, []string{`summary.json: curves[2] ("diverged"): 1 run seeds for 2 runs`}},
		{"labels repeated", summary, func(s string) string { return strings.Replace(s, `"label": "diverged"`, `"label": "clear"`, 1) }, []string{`summary.json: curves[2] ("clear") has the label of curves[0]`}},
		{"pending something else", summary, func(s string) string {
			return strings.Replace(s, `"scenario": "x",`, `"scenario": "x", "pending": "metrics",`, 1)
		}, []string{`summary.json: pending is "metrics"`}},
		// scenario.yaml and provenance.json
		{"an empty scenario.yaml", ScenarioFile, set(""), []string{"scenario.yaml: not a scenario"}},
		{"scenario.yaml null", ScenarioFile, set("null\n"), []string{"scenario.yaml: not a scenario"}},
		{"provenance {}", ProvenanceFile, set("{}"), []string{`provenance.json: has no "maple_version", "go_version", "platform", "command" or "scenario_sha256"`}},
		{"provenance null", ProvenanceFile, set("null"), []string{"provenance.json: null"}},
	}
	good := t.TempDir()
	writeRun(t, good, "{every: 2}", fixture())
	for _, c := range cases {
		dir := t.TempDir()
		for _, name := range []string{ScenarioFile, MetricsFile, SummaryFile, ProvenanceFile} {
			b, err := os.ReadFile(filepath.Join(good, name))
			if err != nil {
				t.Fatal(err)
			}
			if name == c.file {
				b = []byte(c.change(string(b)))
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Read(dir)
		ok := err != nil && strings.HasPrefix(err.Error(), filepath.Join(dir, c.want[0][:strings.IndexAny(c.want[0], ":")]))
		for _, w := range c.want {
			ok = ok && strings.Contains(err.Error(), w)
		}
		if !ok || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v\nwant one line naming %s and saying %q", c.name, err, filepath.Join(dir, c.file), c.want)
		}
	}
}

// What is well formed but not a complete run directory of this maple is
// read, and flagged: a summary still marked pending (the run stopped while
// drawing its figures), no provenance.json, a scenario.yaml edited after
// the run (whose output.every then is not believed), a summary of an older
// maple that does not describe its columns.
func TestReadFlagsWhatIsIncomplete(t *testing.T) {
	cases := []struct {
		name   string
		change func(dir string)
		want   string
	}{
		{"pending figures", func(dir string) {
			edit(t, filepath.Join(dir, SummaryFile), `"scenario": "x",`, `"scenario": "x", "pending": "figures",`)
		}, flagPending},
		{"no provenance", func(dir string) { os.Remove(filepath.Join(dir, ProvenanceFile)) }, flagNoProvenance},
		{"scenario edited", func(dir string) {
			edit(t, filepath.Join(dir, ScenarioFile), "{every: 2}", "{every: 3}")
		}, flagEdited},
		{"no columns", func(dir string) {
			b, err := os.ReadFile(filepath.Join(dir, SummaryFile))
			if err != nil {
				t.Fatal(err)
			}
			var s map[string]any
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			delete(s, "columns")
			b, _ = json.Marshal(s)
			os.WriteFile(filepath.Join(dir, SummaryFile), b, 0o644)
		}, flagNoColumns},
	}
	for _, c := range cases {
		dir := t.TempDir()
		writeRun(t, dir, "{every: 2}", fixture())
		c.change(dir)
		r, err := Read(dir)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !slices.Equal(r.Flags, []string{c.want}) {
			t.Errorf("%s: flags %q, want %q", c.name, r.Flags, c.want)
		}
	}
}

// edit replaces old by new in the file at path, which must hold it.
func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not hold %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A cell is what WriteMetrics writes: empty, a decimal number, NaN, +Inf or
// -Inf; nothing else that strconv.ParseFloat would take.
func TestParseCell(t *testing.T) {
	for _, s := range []string{"", "0", "-0", "1", "0.5", "-1.25e-07", "1e+300", "3.141592653589793", "NaN", "+Inf", "-Inf", "5e-324", ".5", "5."} {
		v, ok := parseCell(s)
		if !ok {
			t.Errorf("%q refused", s)
			continue
		}
		w, err := strconv.ParseFloat(s, 64)
		if s == "" {
			w, err = math.NaN(), nil
		}
		if !(v == w || math.IsNaN(v) && math.IsNaN(w)) || err != nil {
			t.Errorf("%q read as %v, want %v", s, v, w)
		}
	}
	for _, s := range []string{"nan", "inf", "-inf", "Inf", "+inf", "infinity", "0x1p-2", "1_000", "1e", "e5", ".", "-", "1e+", " 1", "1 ", "1e400", "--1", "1.2.3"} {
		if v, ok := parseCell(s); ok {
			t.Errorf("%q read as %v, want it refused", s, v)
		}
	}
}

// A run directory whose files are not what maple wrote — linked to
// /dev/zero, which never ends, or replaced by a named pipe, which blocks its
// reader — is refused by name without being read (main read /dev/zero until
// memory ran out, and waited on the pipe).
func TestReadRefusesSpecialFiles(t *testing.T) {
	good := t.TempDir()
	writeRun(t, good, "{every: 2}", fixture())
	for _, special := range []string{ScenarioFile, SummaryFile, MetricsFile, ProvenanceFile} {
		for _, kind := range []string{"/dev/zero", "pipe"} {
			dir := t.TempDir()
			var content []byte
			for _, name := range []string{ScenarioFile, SummaryFile, MetricsFile, ProvenanceFile} {
				b, err := os.ReadFile(filepath.Join(good, name))
				if err != nil {
					t.Fatal(err)
				}
				if name == special {
					content = b
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			target := "/dev/zero"
			if kind == "pipe" {
				target = fileiotest.FIFO(t, "pipe", string(content))
			}
			if err := os.Symlink(target, filepath.Join(dir, special)); err != nil {
				t.Fatal(err)
			}
			_, err := Read(dir)
			if !errors.Is(err, fileio.ErrNotRegular) || !strings.Contains(err.Error(), special) {
				t.Errorf("%s linked to %s: %v; want a refusal naming it", special, kind, err)
			}
		}
	}
}
