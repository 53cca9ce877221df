package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"maple/internal/fileio"
	"maple/scenarios"
)

// Run is a run directory as read back: what maple run wrote into it.
type Run struct {
	// Dir is the directory's path.
	Dir string
	// Scenario is the resolved scenario.yaml, Hash its SHA-256 in
	// hexadecimal and Output its output section.
	Scenario []byte
	Hash     string
	Output   scenarios.Output
	// Summary is summary.json (Numbers written as null read as NaN).
	Summary Summary
	// Metrics are the curves of metrics.csv, in file order.
	Metrics []CurveMetrics
	// Provenance is provenance.json, nil for runs that did not record it.
	Provenance *Provenance
	// Flags are what the directory lacks of a complete run directory of
	// this maple without being malformed — a run that stopped while drawing
	// its figures, no provenance.json, a scenario.yaml edited after the run,
	// a summary.json of an older maple — each a sentence for the reader.
	Flags []string
}

// CurveMetrics is one curve's block of metrics.csv.
type CurveMetrics struct {
	// Label names the curve and Iterations are its recorded iterations.
	Label      string
	Iterations []float64
	// Columns holds the cells by CSV column name (empty cells are NaN).
	Columns map[string][]float64
	// Order lists the metric names (without _db, _std), in CSV order.
	Order []string
}

// The largest files of a run directory Read takes. maple writes far smaller
// ones; the bounds stop a file that is not what maple wrote (a link to
// /dev/zero, a file grown by mistake) from being read without end. Every
// file must also be a regular file (fileio): a named pipe or a device is
// refused without being read.
const (
	maxScenarioBytes   = 64 << 20  // the resolved scenario (its source is at most 1 MiB)
	maxSummaryBytes    = 256 << 20 // every curve's summary, w^o and the graph facts included
	maxMetricsBytes    = 1 << 30   // the metrics of every curve
	maxMetricsLine     = 1 << 20   // one row of metrics.csv
	maxProvenanceBytes = 1 << 20
)

// The flags Read raises (Run.Flags).
const (
	flagPending      = `summary.json is marked "pending": "figures": the run stopped while drawing its figures, so PNG and SVG files may be missing (its numbers are complete, and the report draws its charts from metrics.csv)`
	flagNoProvenance = "the run directory has no provenance.json (written by maple run since the report): the git commit, Go version and command line are unknown"
	flagEdited       = "scenario.yaml changed after the run: its hash differs from the one recorded in provenance.json"
	flagNoColumns    = "summary.json does not describe the metrics (a run of an older maple): the charts are labelled by column name"
)

// Read reads the run directory dir and checks it against what maple run
// writes. A file that does not match — missing, not a regular file,
// malformed, cut short, or disagreeing with the others (metrics.csv's curves,
// iterations and final values against summary.json's) — is an error naming
// the file, and the line where one is meaningful; docs/report.md lists them.
// What is well formed but incomplete is read, and listed in Run.Flags.
func Read(dir string) (*Run, error) {
	r := &Run{Dir: dir}
	var err error
	path := filepath.Join(dir, ScenarioFile)
	if r.Scenario, err = fileio.ReadFile(path, maxScenarioBytes); err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	sum := sha256.Sum256(r.Scenario)
	r.Hash = hex.EncodeToString(sum[:])
	if r.Output, err = readScenario(path, r.Scenario); err != nil {
		return nil, err
	}
	path = filepath.Join(dir, SummaryFile)
	js, err := fileio.ReadFile(path, maxSummaryBytes)
	if err != nil {
		return nil, fmt.Errorf("%s is not a complete run directory: %w", dir, err)
	}
	if err := readSummary(path, js, &r.Summary); err != nil {
		return nil, err
	}
	mf, err := readMetrics(filepath.Join(dir, MetricsFile))
	if err != nil {
		return nil, err
	}
	r.Metrics = mf.curves
	path = filepath.Join(dir, ProvenanceFile)
	if js, err := fileio.ReadFile(path, maxProvenanceBytes); err == nil {
		if r.Provenance, err = readProvenance(path, js); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := r.match(mf); err != nil {
		return nil, err
	}
	if r.Summary.Pending == PendingFigures {
		r.Flags = append(r.Flags, flagPending)
	}
	switch {
	case r.Provenance == nil:
		r.Flags = append(r.Flags, flagNoProvenance)
	case r.Provenance.ScenarioSHA256 != r.Hash:
		r.Flags = append(r.Flags, flagEdited)
	}
	if r.Summary.Columns == nil {
		r.Flags = append(r.Flags, flagNoColumns)
	}
	return r, nil
}

// readScenario checks that scenario.yaml is a scenario — a YAML mapping of
// fields, as maple run writes the resolved one — and returns its output
// section.
func readScenario(path string, src []byte) (scenarios.Output, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return scenarios.Output{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return scenarios.Output{}, fmt.Errorf("%s: not a scenario: maple run writes the resolved scenario there, a YAML mapping of its fields", path)
	}
	var sc struct {
		Output scenarios.Output `yaml:"output"`
	}
	if err := doc.Decode(&sc); err != nil {
		return scenarios.Output{}, fmt.Errorf("%s: %w", path, err)
	}
	return sc.Output, nil
}

// readProvenance decodes provenance.json and checks that it holds what
// maple run records.
func readProvenance(path string, js []byte) (*Provenance, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		return nil, jsonError(path, js, err)
	}
	if raw == nil {
		return nil, fmt.Errorf("%s: null: maple run writes an object with the maple version, the command and the scenario's hash", path)
	}
	if err := requireKeys(path, "", raw, "maple_version", "go_version", "platform", "command", "scenario_sha256"); err != nil {
		return nil, err
	}
	p := &Provenance{}
	if err := json.Unmarshal(js, p); err != nil {
		return nil, jsonError(path, js, err)
	}
	return p, nil
}

// match checks that metrics.csv and summary.json describe the same run, as
// maple run writes them from the same averages: the same columns, the same
// curves in the same order, each recorded up to its last iteration, and the
// final values summary.json gives are metrics.csv's last row, bit for bit
// (both files write numbers that read back exactly; summary.json writes a
// value that is not finite as null).
func (r *Run) match(mf *metricsFile) error {
	s, path := &r.Summary, mf.path
	if s.Columns != nil {
		if want := csvHeader(s.Columns); mf.headers != 1 || !slices.Equal(mf.header, want) {
			return fmt.Errorf("%s:%d: the header does not list the columns summary.json describes: want %s",
				path, mf.headerLine, strings.Join(want, ","))
		}
	}
	for i, c := range mf.curves {
		lines := mf.lines[i]
		if i >= len(s.Curves) {
			return fmt.Errorf("%s:%d: curve %q is not in summary.json, which lists %d curves", path, lines[0], c.Label, len(s.Curves))
		}
		cs := &s.Curves[i]
		if c.Label != cs.Label {
			return fmt.Errorf("%s:%d: curve %q where summary.json has curve %d, %q: the files are not of the same run", path, lines[0], c.Label, i+1, cs.Label)
		}
		last := len(c.Iterations) - 1
		switch it := int(c.Iterations[last]); {
		case it < cs.Iterations:
			return fmt.Errorf("%s:%d: curve %q ends at iteration %d, but its runs had %d iterations (summary.json): its last rows are missing", path, lines[last], c.Label, it, cs.Iterations)
		case it > cs.Iterations:
			return fmt.Errorf("%s:%d: iteration %d of curve %q, beyond its runs' %d iterations (summary.json)", path, lines[last], it, c.Label, cs.Iterations)
		}
		if every := r.every(cs); every > 0 {
			// The rows are those of NewTable(cs.Iterations, every): k·every
			// while below the last iteration, then the last.
			for k, it := range c.Iterations {
				if want := min(k*every, cs.Iterations); int(it) != want {
					return fmt.Errorf("%s:%d: iteration %d of curve %q where maple records iteration %d (every %d iterations, output.every, and the last)", path, lines[k], int(it), c.Label, want, every)
				}
			}
		}
		for _, m := range c.Order {
			final, ok := cs.Final[m]
			if !ok {
				return fmt.Errorf("%s: curve %q has no final value of %s, which %s holds", filepath.Join(r.Dir, SummaryFile), c.Label, m, MetricsFile)
			}
			if v := c.Columns[m][last]; !sameNumber(v, float64(final)) {
				return fmt.Errorf("%s:%d: %s of curve %q at iteration %d is %s, but its final value in summary.json is %s: the files are not of the same run",
					path, lines[last], m, c.Label, int(c.Iterations[last]), formatFloat(v), formatFloat(float64(final)))
			}
		}
	}
	if n := len(mf.curves); n < len(s.Curves) {
		return fmt.Errorf("%s: no rows of curve %q, which summary.json lists: the file is cut short or not of this run", path, s.Curves[n].Label)
	}
	return nil
}

// every returns the recording interval of curve cs, output.every — its own,
// or the scenario's — or 0 where scenario.yaml does not tell it for sure: it
// does not set it, or it was edited after the run.
func (r *Run) every(cs *CurveSummary) int {
	if r.Provenance != nil && r.Provenance.ScenarioSHA256 != r.Hash {
		return 0
	}
	every := r.Output.Every
	for _, st := range cs.Settings {
		if st.Field == "output.every" {
			every, _ = strconv.Atoi(st.Value)
		}
	}
	return max(every, 0)
}

// sameNumber reports whether the cell v of metrics.csv is the value x of
// summary.json, where NaN stands for null: a value that was not finite.
func sameNumber(v, x float64) bool {
	if math.IsNaN(x) {
		return math.IsNaN(v) || math.IsInf(v, 0)
	}
	return v == x
}

// MetricNames returns the metrics of every curve, in order of first
// appearance.
func (r *Run) MetricNames() []string {
	var names []string
	for _, c := range r.Metrics {
		for _, m := range c.Order {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	return names
}
