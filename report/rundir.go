package report

import (
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// runDir is what a run directory holds, as the report needs it.
type runDir struct {
	dir      string
	scenario []byte // scenario.yaml
	hash     string // its SHA-256
	groupBy  string
	summary  summary
	metrics  []curveMetrics
	prov     *Provenance // nil for runs that did not record it
}

// summary mirrors the parts of summary.json the report shows. Numbers are
// pointers: summary.json writes NaN and ±∞ as null.
type summary struct {
	Scenario    string         `json:"scenario"`
	Description string         `json:"description"`
	Version     string         `json:"version"`
	Engine      string         `json:"engine"`
	Seed        uint64         `json:"seed"`
	Curves      []curveSummary `json:"curves"`
}

type curveSummary struct {
	Label    string `json:"label"`
	Settings []struct {
		Field string `json:"field"`
		Value string `json:"value"`
	} `json:"settings"`
	Runs           int                 `json:"runs"`
	RunSeeds       []string            `json:"run_seeds"`
	Iterations     int                 `json:"iterations"`
	Final          map[string]*float64 `json:"final"`
	SteadyState    map[string]*float64 `json:"steady_state"`
	Diverged       bool                `json:"diverged"`
	DivergedAt     int                 `json:"diverged_at"`
	DivergedRuns   int                 `json:"diverged_runs"`
	MessagesPerRun *float64            `json:"messages_per_run"`
	VirtualTime    *float64            `json:"virtual_time"`
	Warnings       []string            `json:"warnings"`
	Details        map[string]any      `json:"details"`
}

// curveMetrics is one curve's block of metrics.csv.
type curveMetrics struct {
	label      string
	iterations []float64
	columns    map[string][]float64 // by CSV column name
	order      []string             // metric names (without _db, _std), in CSV order
}

// load reads the run directory dir.
func load(dir string) (*runDir, error) {
	r := &runDir{dir: dir}
	var err error
	if r.scenario, err = os.ReadFile(filepath.Join(dir, "scenario.yaml")); err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	sum := sha256.Sum256(r.scenario)
	r.hash = hex.EncodeToString(sum[:])
	var sc struct {
		Output struct {
			GroupBy string `yaml:"group_by"`
		} `yaml:"output"`
	}
	if err := yaml.Unmarshal(r.scenario, &sc); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "scenario.yaml"), err)
	}
	r.groupBy = sc.Output.GroupBy
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a complete run directory: %w", dir, err)
	}
	if err := json.Unmarshal(js, &r.summary); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "summary.json"), err)
	}
	if r.metrics, err = readMetrics(filepath.Join(dir, "metrics.csv")); err != nil {
		return nil, err
	}
	if js, err := os.ReadFile(filepath.Join(dir, ProvenanceFile)); err == nil {
		r.prov = &Provenance{}
		if err := json.Unmarshal(js, r.prov); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ProvenanceFile), err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return r, nil
}

// readMetrics parses metrics.csv: one table whose columns are the union of
// the curves' (maple before that wrote blocks of rows per curve, each
// possibly preceded by its own header, which reads the same). A curve has the
// metrics whose cells it fills: a metric left empty on every row of the curve
// is not one of its columns.
func readMetrics(path string) ([]curveMetrics, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	rows, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var curves []curveMetrics
	var filled []map[string]bool // per curve, the columns with a non-empty cell
	var header []string
	for n, row := range rows {
		if len(row) >= 2 && row[0] == "curve" && row[1] == "iteration" {
			header = row
			continue
		}
		if header == nil || len(row) != len(header) {
			return nil, fmt.Errorf("%s:%d: %d fields, header has %d", path, n+1, len(row), len(header))
		}
		if len(curves) == 0 || curves[len(curves)-1].label != row[0] {
			c := curveMetrics{label: row[0], columns: map[string][]float64{}}
			for _, h := range header[2:] {
				if !strings.HasSuffix(h, "_db") && !strings.HasSuffix(h, "_std") {
					c.order = append(c.order, h)
				}
			}
			curves = append(curves, c)
			filled = append(filled, map[string]bool{})
		}
		c := &curves[len(curves)-1]
		it, err := strconv.ParseFloat(row[1], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: iteration %q", path, n+1, row[1])
		}
		c.iterations = append(c.iterations, it)
		for i, h := range header[2:] {
			v, err := strconv.ParseFloat(row[i+2], 64)
			if err != nil {
				v = math.NaN()
			}
			c.columns[h] = append(c.columns[h], v)
			if row[i+2] != "" {
				filled[len(curves)-1][h] = true
			}
		}
	}
	for i := range curves {
		c := &curves[i]
		c.order = slices.DeleteFunc(c.order, func(m string) bool {
			if filled[i][m] {
				return false
			}
			for _, suffix := range []string{"", "_std", "_db", "_db_std"} {
				delete(c.columns, m+suffix)
			}
			return true
		})
	}
	return curves, nil
}

// metricNames returns the metrics of every curve, in order of first
// appearance.
func (r *runDir) metricNames() []string {
	var names []string
	for _, c := range r.metrics {
		for _, m := range c.order {
			if !slices.Contains(names, m) {
				names = append(names, m)
			}
		}
	}
	return names
}
