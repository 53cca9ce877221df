package all

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"codeberg.org/go-fonts/dejavu/dejavusans"
	"golang.org/x/image/font/sfnt"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// notCompared lists the fields whose change need not show in the outputs the
// parity test compares (metrics.csv, the summary's curves, the files
// written), each with the reason. Every other field of the schema must be
// honoured by both engines or refused by the one that cannot.
var notCompared = map[string]string{
	"name":             "labels the outputs and the run directory; the test compares neither",
	"description":      "free text, copied into the summary as is",
	"output.plot":      "only decides whether the figures are drawn, from the metrics compared here",
	"output.linear":    "only draws the figures' mean-square deviations on a linear axis",
	"output.plot_from": "only leaves early iterations out of the figures",
	"output.claims":    "the papers' statements, copied into the summary next to the curves they describe",
	"algorithm.kind":   "selects the family; the test walks every registered family on its own",
	"curves":           "plan structure (several curves), covered by the curve and sweep tests",
	"sweep":            "plan structure, covered by the curve and sweep tests",
	// The two graph-homomorphic forms coincide for every symmetric A, and
	// ratio is refused for every A that is not doubly stochastic with
	// symmetric support; actors/diffusion tests the ratio form of both
	// engines against each other on a matrix where they differ.
	"privacy.form": "the forms coincide on the symmetric matrices of the tiny scenarios",
	// Local graph-homomorphic masks cancel exactly at every receiver (paper
	// 001 Thm 3), so no metric depends on how the roles are assigned; the
	// trace shows them, and actors/diffusion tests the parity rule of both
	// engines against each other.
	"privacy.roles": "the masks cancel exactly: no metric depends on the roles",
	// Keys from the operating system differ in every execution: the masks
	// still cancel, so the metrics agree to rounding, not bit for bit,
	// between any two executions, on either engine; the families' own tests
	// check both engines with it.
	"privacy.key_randomness": "os keys differ in every execution, so the metrics agree only to rounding",
}

// notComparedWhen lists fields that shape nothing in some scenarios, with
// the condition and the reason.
var notComparedWhen = map[string]struct {
	when func(sc *scenarios.Scenario) bool
	why  string
}{
	// A plan mixing noise-free and noisy curves sets the noise once for
	// all; a noise-free curve has none to shape (and says so: its privacy
	// report is "no privacy").
	"privacy.mechanism": {noNoise, "no scheme adds noise"},
	"privacy.variance":  {noNoise, "no scheme adds noise"},
}

func noNoise(sc *scenarios.Scenario) bool { return sc.Privacy.Scheme == "none" }

// derivedTiny is the small scenario the parity test uses for a family that
// lists none of its own.
func derivedTiny(f run.Family) string {
	s := fmt.Sprintf(`name: tiny
seed: 3
runs: 2
iterations: 8
data: {agents: 6, samples: [8, 12], dim: 2}
algorithm: {kind: %s}
output: {plot: false, steady_state: 0.5}
`, f.Kind)
	if f.Topology {
		s += "topology: {graph: ring}\n"
	}
	return s
}

// parityCase is one scenario of the walk and the fields changed in it.
type parityCase struct {
	name   string
	src    string
	prefix string // only fields under this path are changed ("" for all)
	// extra are further fields changed: those of the sections a family's
	// other tiny scenario sets and its first leaves out (a privacy
	// feature's, say).
	extra map[string]bool
}

// parityCases lists, for a family, its tiny scenarios (the others walking
// their family's section and the sections the first leaves out) and, from
// the first, one per privacy scheme and noise mechanism, whose privacy
// fields are walked in turn (for the other mechanisms, the accountant's: the rest of
// the privacy section is walked with the default one, and the mechanism
// field itself in every scheme).
func parityCases(t *testing.T, f run.Family) []parityCase {
	tiny := f.Tiny
	if len(tiny) == 0 {
		tiny = []string{derivedTiny(f)}
	}
	base, err := scenarios.Parse([]byte(tiny[0]), "tiny.yaml", t.TempDir(), nil)
	if err != nil {
		t.Fatalf("%s: tiny scenario: %v", f.Kind, err)
	}
	first := map[string]bool{}
	for _, l := range leaves("", reflect.ValueOf(base.Base), nil) {
		first[l.path] = true
	}
	cases := []parityCase{{name: "tiny", src: tiny[0]}}
	for i, src := range tiny[1:] {
		other, err := scenarios.Parse([]byte(src), "tiny.yaml", t.TempDir(), nil)
		if err != nil {
			t.Fatalf("%s: tiny scenario %d: %v", f.Kind, i+1, err)
		}
		extra := map[string]bool{}
		for _, l := range leaves("", reflect.ValueOf(other.Base), nil) {
			extra[l.path] = !first[l.path]
		}
		cases = append(cases, parityCase{name: fmt.Sprintf("tiny[%d]", i+1), src: src, prefix: "algorithm." + f.Kind, extra: extra})
	}
	mechanisms := append([]string{base.Base.Privacy.Mechanism}, enumValues(tiny[0], "privacy.mechanism", "zz-bogus")...)
	for _, scheme := range f.Schemes[1:] {
		for _, mech := range slices.Compact(mechanisms) {
			src := tiny[0] + fmt.Sprintf("privacy: {scheme: %s, mechanism: %s}\n", scheme, mech)
			prefix := "privacy"
			if mech != mechanisms[0] {
				prefix = "privacy.accountant" // what else the mechanism changes is walked with the first
			}
			if _, err := scenarios.Parse([]byte(src), "tiny.yaml", ".", nil); err == nil {
				cases = append(cases, parityCase{name: scheme + "/" + mech, src: src, prefix: prefix})
			}
		}
	}
	return cases
}

// expectedList finds the list of accepted values in an error message, as the
// validator and the enumerations write it: "(expected one of: a, b, c)" or
// "(expected a, b or c)".
var expectedList = regexp.MustCompile(`\(expected (?:one of: )?([^()]*)\)`)

// enumValues returns the values the loader lists as accepted for field when
// it is given the value bogus, or nil if it lists none.
func enumValues(src, field, bogus string) []string {
	_, err := scenarios.Parse([]byte(src), "tiny.yaml", ".", []string{field + "=" + bogus})
	if err == nil {
		return nil
	}
	m := expectedList.FindStringSubmatch(err.Error())
	if m == nil {
		return nil
	}
	return strings.FieldsFunc(strings.ReplaceAll(m[1], " or ", ", "), func(r rune) bool { return r == ',' || r == ' ' })
}

// leaf is a field of the resolved scenario and its value.
type leaf struct {
	path  string
	value reflect.Value
}

var (
	intRangeType   = reflect.TypeOf(scenarios.IntRange{})
	floatRangeType = reflect.TypeOf(scenarios.FloatRange{})
	algorithmType  = reflect.TypeOf(scenarios.Algorithm{})
)

// leaves lists the leaf fields of v, a resolved scenario or a section of
// it, by dotted path. Sections that are absent (nil pointers: the parameters
// of another data kind, a topology without one) have no fields in effect.
func leaves(path string, v reflect.Value, out []leaf) []leaf {
	switch {
	case v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface:
		if v.IsNil() {
			return out
		}
		return leaves(path, v.Elem(), out)
	case v.Type() == algorithmType:
		a := v.Interface().(scenarios.Algorithm)
		out = append(out, leaf{"algorithm.kind", v.FieldByName("Kind")}, leaf{"algorithm.step_size", v.FieldByName("StepSize")})
		return leaves("algorithm."+a.Kind, v.FieldByName("Params"), out)
	case v.Kind() == reflect.Struct && v.Type() != intRangeType && v.Type() != floatRangeType:
		for i := 0; i < v.NumField(); i++ {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			out = leaves(p, v.Field(i), out)
		}
		return out
	}
	return append(out, leaf{path, v})
}

// changes returns values (YAML, for --set) that differ from the leaf's, in
// the order the test tries them.
func changes(src string, l leaf) []string {
	v := l.value
	switch v.Type() {
	case intRangeType:
		r := v.Interface().(scenarios.IntRange)
		return []string{fmt.Sprintf("[%d, %d]", r.Min, r.Max+1), fmt.Sprintf("[%d, %d]", r.Min+1, r.Max+1), fmt.Sprintf("[%d, %d]", r.Max+1, r.Max+2)}
	case floatRangeType:
		r := v.Interface().(scenarios.FloatRange)
		return []string{fmt.Sprintf("[%v, %v]", r.Min, 2*r.Max+0.1), fmt.Sprintf("[%v, %v]", 2*r.Min+0.1, 2*r.Max+0.2)}
	}
	switch v.Kind() {
	case reflect.Bool:
		return []string{strconv.FormatBool(!v.Bool())}
	case reflect.Int, reflect.Int64:
		n := v.Int()
		return []string{fmt.Sprint(n + 1), fmt.Sprint(2*n + 2), fmt.Sprint(n - 1), fmt.Sprint(n + 5)}
	case reflect.Uint64:
		return []string{fmt.Sprint(v.Uint() + 1)}
	case reflect.Float64:
		if x := v.Float(); x != 0 {
			return []string{fmt.Sprint(2 * x), fmt.Sprint(x / 2), "0"}
		}
		return []string{"0.5", "0.1", "1"}
	case reflect.String:
		if vals := enumValues(src, l.path, "zz-bogus"); vals != nil {
			return slices.DeleteFunc(vals, func(s string) bool { return s == v.String() })
		}
		return []string{"zz-bogus"} // a free string: whatever the loader accepts
	case reflect.Slice:
		if vals := enumValues(src, l.path, "[zz-bogus]"); vals != nil {
			var out []string
			for _, a := range vals {
				out = append(out, "["+a+"]")
			}
			return append(out, "["+strings.Join(vals, ", ")+"]")
		}
		return []string{"[zz-bogus]"}
	}
	panic(fmt.Sprintf("%s: no change known for a %v", l.path, v.Type()))
}

// maxTries bounds the values tried per field, to keep the test fast.
const maxTries = 4

// outcome is what one engine made of a scenario: the user error that
// refused it, or its metrics and the rest of its output.
type outcome struct {
	refused error
	// stalled is the error of a run that stopped because an actor waits
	// for a message that never comes: the documented end of a wait-for-all
	// server under lost replies or dropouts, which both engines must report
	// alike.
	stalled string
	metrics []byte
	rest    []byte
}

func (o outcome) same(p outcome) bool {
	return o.refused == nil && p.refused == nil && o.stalled == p.stalled && bytes.Equal(o.metrics, p.metrics) && bytes.Equal(o.rest, p.rest)
}

// runOn executes a plan on an engine and returns its outcome; an error that
// is not the user's fails the test.
func runOn(t *testing.T, p *scenarios.Plan, e run.Engine, what string) outcome {
	t.Helper()
	dir := t.TempDir()
	res, err := run.Execute(p, dir, run.Options{Engine: e, Workers: 1})
	if err != nil {
		switch {
		case scenarios.IsUserError(err):
			return outcome{refused: err}
		case strings.Contains(err.Error(), "run stalled: "):
			return outcome{stalled: err.Error()}
		}
		t.Fatalf("%s: engine %s failed: %v", what, e, err)
	}
	metrics, err := os.ReadFile(filepath.Join(dir, "metrics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// What defines a curve's numbers, not its name or how it was set.
	curves := slices.Clone(res.Summary.Curves)
	for i := range curves {
		curves[i].Label, curves[i].Settings = "", nil
	}
	rest, err := json.Marshal(struct {
		Curves []rundir.CurveSummary
		Files  []string
	}{curves, res.Files})
	if err != nil {
		t.Fatal(err)
	}
	return outcome{metrics: metrics, rest: rest}
}

// TestEveryFieldIsHonouredByBothEnginesOrRefused walks the schema — the
// shared sections and the parameter section of every registered family —
// and changes each field in turn in a tiny scenario of the family. For each
// field, some value must make each engine either change its output or
// refuse the scenario (a user error), unless notCompared says why not; when
// both engines run, their metrics must be identical. A field that one engine
// ignores, added now or later, fails the test.
func TestEveryFieldIsHonouredByBothEnginesOrRefused(t *testing.T) {
	for _, kind := range scenarios.FamilyKinds() {
		f, _ := run.Lookup(kind)
		t.Run(kind, func(t *testing.T) {
			t.Parallel() // mostly waiting for the outputs to reach the disk
			for _, c := range parityCases(t, f) {
				t.Run(c.name, func(t *testing.T) { walkFields(t, c) })
			}
		})
	}
}

func walkFields(t *testing.T, c parityCase) {
	dir := t.TempDir()
	base, err := scenarios.Parse([]byte(c.src), "tiny.yaml", dir, nil)
	if err != nil {
		t.Fatalf("tiny scenario: %v", err)
	}
	before := map[run.Engine]outcome{run.Actors: runOn(t, base, run.Actors, "the tiny scenario"), run.Reference: runOn(t, base, run.Reference, "the tiny scenario")}
	for e, o := range before {
		if o.refused != nil {
			t.Fatalf("engine %s refuses the tiny scenario: %v", e, o.refused)
		}
	}
	if !bytes.Equal(before[run.Actors].metrics, before[run.Reference].metrics) {
		t.Fatalf("the engines disagree on the tiny scenario:\n%s\n---\n%s", before[run.Actors].metrics, before[run.Reference].metrics)
	}
	for _, l := range leaves("", reflect.ValueOf(base.Base), nil) {
		if _, ok := notCompared[l.path]; ok || !strings.HasPrefix(l.path, c.prefix) && !c.extra[l.path] {
			continue
		}
		if w, ok := notComparedWhen[l.path]; ok && w.when(base.Base) {
			continue
		}
		checkField(t, c.src, dir, l, before)
	}
}

// checkField tries values of one field until one is decisive: both engines
// change their output or refuse it. Engines that run must agree on the
// metrics, and an engine whose output does not change while the other's
// does ignores the field.
func checkField(t *testing.T, src, dir string, l leaf, before map[run.Engine]outcome) {
	values := changes(src, l)
	if len(values) == 0 {
		return // the loader accepts a single value: there is nothing to change
	}
	var tried []string
	for _, value := range values {
		if len(tried) == maxTries {
			break
		}
		set := l.path + "=" + value
		tried = append(tried, value)
		p, err := scenarios.Parse([]byte(src), "tiny.yaml", dir, []string{set})
		if err != nil {
			if !scenarios.IsUserError(err) {
				t.Errorf("--set %s: %v", set, err)
				return
			}
			continue // refused by the loader, for both engines: try another value
		}
		after := map[run.Engine]outcome{run.Actors: runOn(t, p, run.Actors, "--set "+set), run.Reference: runOn(t, p, run.Reference, "--set "+set)}
		a, r := after[run.Actors], after[run.Reference]
		if a.refused == nil && r.refused == nil && (a.stalled != r.stalled || !bytes.Equal(a.metrics, r.metrics)) {
			if a.stalled != r.stalled {
				t.Errorf("--set %s: the engines end differently:\nactors: %s\nreference: %s", set, a.stalled, r.stalled)
				return
			}
			t.Errorf("--set %s: the engines' metrics differ:\nactors:\n%s\nreference:\n%s", set, a.metrics, r.metrics)
			return
		}
		changedA, changedR := !a.same(before[run.Actors]), !r.same(before[run.Reference])
		switch {
		case changedA && changedR:
			return
		case changedA || changedR:
			ignoring := run.Actors
			if !changedR {
				ignoring = run.Reference
			}
			t.Errorf("--set %s: engine %s ignores it (same output) while the other honours or refuses it", set, ignoring)
			return
		}
	}
	if len(tried) > 0 && allRefusedByLoader(src, dir, l.path, tried) {
		return
	}
	t.Errorf("%s: no value changes either engine's output or is refused (tried %s): honour the field, refuse what does not apply, or list it in notCompared with the reason",
		l.path, strings.Join(tried, ", "))
}

// allRefusedByLoader reports whether the loader refused every value tried:
// the field cannot be changed in this scenario, which is a refusal.
func allRefusedByLoader(src, dir, field string, values []string) bool {
	for _, v := range values {
		if _, err := scenarios.Parse([]byte(src), "tiny.yaml", dir, []string{field + "=" + v}); err == nil {
			return false
		}
	}
	return true
}

// Every character of every registered family's metric labels has a glyph
// in the figures' font.
func TestLabelsHaveGlyphs(t *testing.T) {
	t.Parallel()
	f, err := sfnt.Parse(dejavusans.TTF)
	if err != nil {
		t.Fatal(err)
	}
	var buf sfnt.Buffer
	for _, kind := range scenarios.FamilyKinds() {
		fam, _ := run.Lookup(kind)
		for _, c := range parityCases(t, fam) {
			p, err := scenarios.Parse([]byte(c.src), "t.yaml", ".", nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, col := range run.Columns(p.Base) {
				for _, r := range col.Label + "steady-state against logarithmic −" {
					if i, err := f.GlyphIndex(&buf, r); err != nil || i == 0 {
						t.Errorf("%s: %q of %q has no glyph in DejaVu Sans", kind, r, col.Label)
					}
				}
			}
		}
	}
}
