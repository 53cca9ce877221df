package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// readSummary decodes summary.json into s and checks that it is a summary
// as maple run writes it: an object with the scenario, the version, the
// engine, the seed and at least one curve, each curve with its label
// (distinct), runs, run seeds (one per run), iterations and its final and
// steady-state values, and "pending" either absent or PendingFigures.
func readSummary(path string, js []byte, s *Summary) error {
	if err := json.Unmarshal(js, s); err != nil {
		return jsonError(path, js, err)
	}
	var top struct {
		raw    map[string]json.RawMessage
		curves []map[string]json.RawMessage
	}
	if err := json.Unmarshal(js, &top.raw); err != nil {
		return jsonError(path, js, err)
	}
	if top.raw == nil {
		return fmt.Errorf("%s: null, not a summary: maple run writes an object with the scenario, its curves and their values", path)
	}
	if err := requireKeys(path, "", top.raw, "scenario", "version", "engine", "seed", "curves"); err != nil {
		return err
	}
	if err := json.Unmarshal(top.raw["curves"], &top.curves); err != nil {
		return jsonError(path, js, err)
	}
	for _, f := range []struct{ name, value, what string }{
		{"scenario", s.Scenario, "the scenario's name"},
		{"version", s.Version, "the version of maple"},
		{"engine", s.Engine, "the engine that ran the plan"},
	} {
		if f.value == "" {
			return fmt.Errorf("%s: %s is empty: maple run writes %s there", path, f.name, f.what)
		}
	}
	if len(s.Curves) == 0 {
		return fmt.Errorf("%s: lists no curves: maple run writes a summary only once some run has finished", path)
	}
	labels := map[string]int{}
	for i, raw := range top.curves {
		c := &s.Curves[i]
		where := fmt.Sprintf("curves[%d]", i)
		if err := requireKeys(path, where+" ", raw, "label", "runs", "run_seeds", "iterations", "final", "steady_state"); err != nil {
			return err
		}
		if c.Label == "" {
			return fmt.Errorf("%s: %s has an empty label", path, where)
		}
		where = fmt.Sprintf("%s (%q)", where, c.Label)
		if j, ok := labels[c.Label]; ok {
			return fmt.Errorf("%s: %s has the label of curves[%d]: maple's curves have distinct labels", path, where, j)
		}
		labels[c.Label] = i
		switch {
		case c.Runs < 1:
			return fmt.Errorf("%s: %s: runs is %d: maple summarizes a curve once at least one of its runs has finished", path, where, c.Runs)
		case len(c.RunSeeds) != c.Runs:
			return fmt.Errorf("%s: %s: %d run seeds for %d runs: maple lists the seed of every run", path, where, len(c.RunSeeds), c.Runs)
		case c.Iterations < 1:
			return fmt.Errorf("%s: %s: iterations is %d: a run has at least one iteration", path, where, c.Iterations)
		}
	}
	if s.Pending != "" && s.Pending != PendingFigures {
		return fmt.Errorf("%s: pending is %q: maple run marks a summary pending only while it draws the figures (%q)", path, s.Pending, PendingFigures)
	}
	seen := map[string]bool{}
	for i, c := range s.Columns {
		if c.Name == "" || seen[c.Name] {
			return fmt.Errorf("%s: columns[%d]: the name %q is empty or repeated: maple describes each column of metrics.csv once", path, i, c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// requireKeys checks that the JSON object raw, at where in the file path,
// has every one of keys, naming those it lacks.
func requireKeys(path, where string, raw map[string]json.RawMessage, keys ...string) error {
	var missing []string
	for _, k := range keys {
		if _, ok := raw[k]; !ok {
			missing = append(missing, fmt.Sprintf("%q", k))
		}
	}
	if missing == nil {
		return nil
	}
	list := missing[0]
	if n := len(missing); n > 1 {
		list = strings.Join(missing[:n-1], ", ") + " or " + missing[n-1]
	}
	return fmt.Errorf("%s: %shas no %s: not what maple run writes", path, where, list)
}

// jsonError names the file, and the line where the decoder says where, of
// an error decoding the JSON document js.
func jsonError(path string, js []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("%s:%d: not JSON: %v", path, lineAt(js, syntax.Offset), syntax)
	case errors.As(err, &typ):
		what := typ.Field
		if what == "" {
			what = "the document"
		}
		if typ.Offset < 0 { // where is unknown (Number.UnmarshalJSON)
			return fmt.Errorf("%s: %s: a JSON %s, where maple writes %s", path, what, typ.Value, kindOf(typ.Type))
		}
		return fmt.Errorf("%s:%d: %s: a JSON %s, where maple writes %s", path, lineAt(js, typ.Offset), what, typ.Value, kindOf(typ.Type))
	}
	return fmt.Errorf("%s: %w", path, err)
}

// lineAt returns the line of byte offset off of js (1 for the first).
func lineAt(js []byte, off int64) int {
	off = min(max(off, 0), int64(len(js)))
	return 1 + bytes.Count(js[:off], []byte("\n"))
}

// kindOf names the JSON form of values of type t.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	}
	return "a " + t.String()
}
