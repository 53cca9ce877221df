package scenarios_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	_ "maple/families/all" // the loader knows the families that register
	"maple/families/fedavg"
	"maple/internal/fileio/fileiotest"
	"maple/internal/params"
	"maple/scenarios"
)

const minimal = `name: t
data:
  agents: 20
  samples: 30
algorithm:
  kind: fedavg
  step_size: 0.1
  fedavg:
    participants: 5
`

func parse(t *testing.T, src string, overrides ...string) *scenarios.Plan {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "t.yaml", ".", overrides)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

// Each bad scenario must give one line naming the file, the line and the field,
// and saying what was expected.
func TestBadScenariosGiveOneClearLine(t *testing.T) {
	cases := []struct {
		name, src string
		overrides []string
		want      string
	}{
		{"empty file", "", nil, "t.yaml: empty scenario"},
		{"only a comment", "# nothing\n", nil, "t.yaml: empty scenario"},
		{"malformed YAML", "name: x\n  data: [\n", nil, "t.yaml:2: malformed YAML"},
		{"not a mapping", "- a\n- b\n", nil, "t.yaml:1: expected a mapping"},
		{"unknown top-level key", minimal + "colour: red\n", nil, "t.yaml:10: colour: unknown field (expected one of: name, description"},
		{"unknown nested key", strings.Replace(minimal, "  agents: 20", "  agnets: 20", 1), nil, "t.yaml:3: data.agnets: unknown field (expected one of: kind, agents, samples"},
		{"wrong type", strings.Replace(minimal, "agents: 20", "agents: many", 1), nil, `t.yaml:3: data.agents: expected an integer, got the string "many"`},
		{"quoted integer", strings.Replace(minimal, "agents: 20", "agents: '20'", 1), nil, `t.yaml:3: data.agents: expected an integer, got the string "20" (quoted; remove the quotes)`},
		{"quoted integer in an override", minimal, []string{"runs='1'"}, `--set runs='1': runs: expected an integer, got the string "1" (quoted; remove the quotes)`},
		{"integer tagged as a string", strings.Replace(minimal, "agents: 20", "agents: !!str 20", 1), nil, `t.yaml:3: data.agents: expected an integer, got the string "20" (tagged !!str; remove the tag)`},
		{"python tag on a value", strings.Replace(minimal, "agents: 20", "agents: !!python/object:os.system 20", 1), nil, "t.yaml:3: data.agents: the YAML tag !!python/object:os.system is not supported"},
		{"python tag on a string", minimal + "description: !!python/object/apply:os.system [ls]\n", nil, "t.yaml:10: description: the YAML tag !!python/object/apply:os.system is not supported"},
		{"local tag on a section", strings.Replace(minimal, "data:", "data: !dataset", 1), nil, "t.yaml:2: data: the YAML tag !dataset is not supported"},
		{"tag in a curve's set", minimal + "curves:\n  - {label: a, set: {runs: !!binary AAAA}}\n", nil, "t.yaml:11: curves[0].set.runs: the YAML tag !!binary is not supported"},
		{"tag in an override", minimal, []string{"seed=!!python/object:os.system 1"}, "--set seed=!!python/object:os.system 1: seed: the YAML tag !!python/object:os.system is not supported"},
		{"empty name", strings.Replace(minimal, "name: t", `name: ""`, 1), nil, "t.yaml:1: name: must not be empty (leave the field out"},
		{"empty name in an override", minimal, []string{`name=""`}, `--set name="": name: must not be empty`},
		{"group_by without curves", minimal + "output: {group_by: data.agents}\n", nil, "t.yaml:10: output.group_by: names data.agents, but the plan has no curves or sweep setting a field"},
		{"group_by of a field no curve sets", minimal + "output: {group_by: algorithm.fedavg.local_step}\nsweep:\n  algorithm.fedavg.local_steps: [1, 2]\n", nil,
			"t.yaml:10: output.group_by: names algorithm.fedavg.local_step, which no curve or sweep sets (they set algorithm.fedavg.local_steps)"},
		{"path through a value in a curve's set", minimal + "curves:\n  - label: a\n    set: {data.agents.x: 1}\n", nil, "t.yaml:12: data.agents: is not a mapping, cannot set a field inside it"},
		{"empty component in a curve's set", minimal + "curves:\n  - label: a\n    set: {data..agents: 1}\n", nil, "t.yaml:12: data..agents: empty component in field path"},
		{"unknown field in a curve's set", minimal + "curves:\n  - label: a\n    set: {algorithm.bogus: 1}\n", nil, "t.yaml:12: algorithm.bogus: unknown field"},
		{"unknown field in a sweep", minimal + "sweep:\n  algorithm.bogus: [1, 2]\n", nil, "t.yaml:11: algorithm.bogus: unknown field"},
		{"minimum degree above the nodes", "algorithm: {kind: diffusion}\ndata: {agents: 6}\ntopology: {graph: geometric, min_degree: 6}\n", nil,
			"t.yaml:3: topology.min_degree: 6 is impossible: a node of a graph of data.agents = 6 nodes has at most 5 neighbours"},
		{"float for int", strings.Replace(minimal, "agents: 20", "agents: 2.5", 1), nil, `t.yaml:3: data.agents: expected an integer, got "2.5"`},
		{"bad range", strings.Replace(minimal, "samples: 30", "samples: [1, 2, 3]", 1), nil, "t.yaml:4: data.samples: expected an integer or a [min, max] pair"},
		{"missing value", strings.Replace(minimal, "agents: 20", "agents:", 1), nil, "t.yaml:3: data.agents: missing value (expected an integer)"},
		{"section not a mapping", strings.Replace(minimal, "data:\n  agents: 20\n  samples: 30\n", "data: 7\n", 1), nil, "t.yaml:2: data: expected a mapping of fields"},
		{"duplicate key", minimal + "name: u\n", nil, "t.yaml:10: name: appears twice"},
		{"zero agents", strings.Replace(minimal, "agents: 20", "agents: 0", 1), nil, "t.yaml:3: data.agents: must be at least 1, got 0"},
		{"negative step size", strings.Replace(minimal, "step_size: 0.1", "step_size: -0.1", 1), nil, "t.yaml:7: algorithm.step_size: must be a positive number, got -0.1"},
		{"L greater than K", strings.Replace(minimal, "participants: 5", "participants: 21", 1), nil, "t.yaml:9: algorithm.fedavg.participants: 21 agents cannot be sampled without replacement from data.agents = 20"},
		{"batch larger than data", minimal + "    batch: [1, 40]\n", nil, "t.yaml:10: algorithm.fedavg.batch: mini-batches of up to 40 distinct samples"},
		{"unknown enum", minimal + "    participation: some\n", nil, `t.yaml:10: algorithm.fedavg.participation: unknown participation "some"`},
		{"wrong family section", minimal + "  diffusion:\n    strategy: atc\n", nil, "t.yaml:10: algorithm.diffusion: does not apply: algorithm.kind is fedavg"},
		{"unknown algorithm", strings.Replace(minimal, "kind: fedavg", "kind: fedsgd", 1), nil, `t.yaml:6: algorithm.kind: unknown algorithm "fedsgd" (expected one of: diffusion, fedavg`},
		{"unknown algorithm field", minimal + "  colour: red\n", nil, "t.yaml:10: algorithm.colour: unknown field (expected one of: kind, step_size, fedavg)"},
		{"topology for fedavg", minimal + "topology:\n  graph: ring\n", nil, "t.yaml:11: topology: does not apply"},
		{"override of unknown field", minimal, []string{"algorithm.stepsize=0.1"}, "--set algorithm.stepsize=0.1: algorithm.stepsize: unknown field"},
		{"override with bad value", minimal, []string{"algorithm.step_size=-1"}, "--set algorithm.step_size=-1: algorithm.step_size: must be a positive number"},
		{"override without =", minimal, []string{"runs"}, "--set runs: expected field.path=value"},
		{"duplicate curve labels", minimal + "curves:\n  - {label: a, set: {runs: 2}}\n  - {label: a, set: {runs: 3}}\n", nil, `two curves are labelled "a"`},
		{"curve with bad value", minimal + "curves:\n  - label: a\n    set: {algorithm.step_size: 0}\n", nil, "t.yaml:12: algorithm.step_size: must be a positive number, got 0"},
		{"override of a new field wrong for a curve", minimal + "curves:\n  - {label: a, set: {runs: 2}}\n", []string{"privacy.form=ratio"}, "--set privacy.form=ratio: privacy.form: does not apply"},
		{"sweep not a list", minimal + "sweep:\n  runs: 3\n", nil, "t.yaml:11: sweep: runs: expected a non-empty list"},
		{"unknown server", minimal + "    server: trimmed\n", nil, `t.yaml:10: algorithm.fedavg.server: unknown server behaviour "trimmed" (registered: ` + strings.Join(params.Names("fedavg.server"), ", ") + ")"},
		{"trim without trimmed-mean", minimal + "    server: {kind: median, trim: 0.2}\n", nil, "t.yaml:10: algorithm.fedavg.server.trim: unknown parameter: behaviour median has none"},
		{"trim that drops nothing", minimal + "    server: {kind: trimmed-mean, trim: 0.1}\n", nil, "algorithm.fedavg.server.trim: 0.1 of 5 replies per round drops none"},
		{"radius of a ring", "algorithm: {kind: diffusion}\ntopology: {graph: ring, radius: 0.5}\n", nil, "t.yaml:2: topology.radius: does not apply: graph ring has no radius (only geometric)"},
		{"fresh ring per run", "algorithm: {kind: diffusion}\ntopology: {graph: ring, regenerate: per-run}\n", nil, "t.yaml:2: topology.regenerate: does not apply: graph ring is not random"},
		{"delta for laplace", minimal + "privacy: {scheme: update-noise, accountant: {delta: 0.001}}\n", nil, "privacy.accountant.delta: does not apply: the Laplace bound is a pure ε"},
		{"delta out of range", minimal + "privacy: {scheme: update-noise, mechanism: gaussian, accountant: {delta: 1}}\n", nil, "privacy.accountant.delta: must lie in (0, 1), got 1"},
		{"l1 norm for gaussian", minimal + "privacy: {scheme: update-noise, mechanism: gaussian, accountant: {norm: l1}}\n", nil, "privacy.accountant.norm: Gaussian noise is accounted with the ℓ2 sensitivity"},
		{"override of a curve's field", minimal + "curves:\n  - {label: a, set: {privacy.scheme: none}}\n", []string{"privacy.scheme=update-noise"},
			`--set privacy.scheme=update-noise: privacy.scheme: curve "a" sets privacy.scheme too (t.yaml:11)`},
		{"override of the sweep's field", minimal + "sweep:\n  algorithm.step_size: [0.1, 0.2]\n", []string{"algorithm.step_size=0.3"},
			"--set algorithm.step_size=0.3: algorithm.step_size: the sweep sets algorithm.step_size too (t.yaml:11)"},
		{"override of a section around a curve's field", minimal + "curves:\n  - {label: a, set: {privacy.scheme: none}}\n", []string{"privacy={variance: 0.1}"},
			`--set privacy={variance: 0.1}: privacy: curve "a" sets privacy.scheme too`},
		{"sweep too large", minimal + "sweep:\n  runs: &v [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n  seed: *v\n  iterations: *v\n", nil, "t.yaml: sweep: curves × sweep expand to 1001 curves"},
		{"two documents", minimal + "---\nname: other\n", nil, "t.yaml:10: a second YAML document starts here"},
		{"alias bomb in description", minimal + "description: " + aliasBomb, nil, "t.yaml: scenario too large once its aliases are expanded"},
		{"alias bomb in a curve label", minimal + "x: " + aliasBomb + "curves:\n  - {label: *i, set: {runs: 2}}\n", nil, "t.yaml: scenario too large once its aliases are expanded"},
		{"alias bomb in a sweep", minimal + "x: " + aliasBomb + "sweep:\n  algorithm.step_size: *i\n", nil, "t.yaml: scenario too large once its aliases are expanded"},
		{"alias bomb in an override", minimal, []string{"description=" + flowBomb}, "description: scenario too large once its aliases are expanded"},
		{"alias of its own container", "a: &x [1, *x]\n", nil, "t.yaml: an alias refers to a value that contains it"},
		{"name leaving the output root", strings.Replace(minimal, "name: t", "name: ../../escape", 1), nil, `t.yaml:1: name: names the run directory, so it must not contain / or \, got "../../escape"`},
		{"name with a newline", strings.Replace(minimal, "name: t", `name: "a\nb"`, 1), nil, `t.yaml:1: name: must be one line of text without control characters, got "a\nb"`},
		{"label with a newline", minimal + "curves:\n  - {label: \"a\\nb\", set: {runs: 2}}\n", nil, `t.yaml: curves: curve label must be one line of text`},
		{"label too long", minimal + "curves:\n  - {label: " + strings.Repeat("x", 201) + ", set: {runs: 2}}\n", nil, "t.yaml: curves: curve label has 201 characters, more than the 200 allowed"},
		{"key randomness without LGH", minimal + "privacy: {scheme: update-noise, key_randomness: os}\n", nil, "t.yaml:10: privacy.key_randomness: does not apply: only local graph-homomorphic noise has key pairs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := scenarios.Parse([]byte(c.src), "t.yaml", ".", c.overrides)
			if err == nil {
				t.Fatalf("accepted; want error %q", c.want)
			}
			if !scenarios.IsUserError(err) {
				t.Errorf("error %v is not a scenario *Error", err)
			}
			if msg := err.Error(); !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Errorf("error\n  %s\nwant one line containing\n  %s", msg, c.want)
			}
		})
	}
}

func TestDefaultsAreFilledIn(t *testing.T) {
	p := parse(t, minimal)
	sc := p.Base
	fa := sc.Algorithm.Params.(*fedavg.FedAvg)
	if sc.Runs != 1 || sc.Iterations != 100 || sc.Loss.Kind != "least-squares" || sc.Data.Regression == nil {
		t.Errorf("top-level defaults missing: %+v", sc)
	}
	if fa.Participation != "without-replacement" || fa.Server.Kind != "mean" || !fa.Normalized || fa.LocalSteps != (scenarios.IntRange{1, 1}) {
		t.Errorf("fedavg defaults missing: %+v", fa)
	}
	if sc.Data.Samples != (scenarios.IntRange{30, 30}) {
		t.Errorf("a scalar sample count should be the range [30, 30], got %v", sc.Data.Samples)
	}
	if sc.Topology != nil {
		t.Error("sections of another algorithm kind were filled in")
	}
	if len(p.Curves) != 1 || p.Curves[0].Label != "t" || p.Curves[0].Scenario != sc {
		t.Errorf("a scenario without curves should have one curve labelled with its name, got %+v", p.Curves)
	}
}

// An explicit zero must not be mistaken for an unset field.
func TestExplicitZeroIsKept(t *testing.T) {
	p := parse(t, minimal+"loss:\n  rho: 0\n")
	if p.Base.Loss.Rho != 0 {
		t.Errorf("rho: 0 became %v", p.Base.Loss.Rho)
	}
}

func TestParticipantsDefaultFollowsAgents(t *testing.T) {
	src := strings.Replace(minimal, "  fedavg:\n    participants: 5\n", "", 1)
	src = strings.Replace(src, "agents: 20", "agents: 4", 1)
	if got := parse(t, src).Base.Algorithm.Params.(*fedavg.FedAvg).Participants; got != 4 {
		t.Errorf("default participants with 4 agents = %d, want 4", got)
	}
}

// Setting one accountant key keeps the documented defaults of the others;
// δ is defaulted for Gaussian noise only.
func TestAccountantKeysMergeWithDefaults(t *testing.T) {
	a := parse(t, minimal+"privacy: {scheme: update-noise, accountant: {epsilon: 2}}\n").Base.Privacy.Accountant
	if want := (scenarios.Accountant{B: 1, BPrime: 1, Epsilon: 2, Norm: "l2"}); a == nil || *a != want {
		t.Errorf("accountant %+v, want %+v", a, want)
	}
	a = parse(t, minimal+"privacy: {scheme: update-noise, mechanism: gaussian, accountant: {b: 3}}\n").Base.Privacy.Accountant
	if want := (scenarios.Accountant{B: 3, BPrime: 1, Norm: "l2", Delta: scenarios.DefaultDelta}); a == nil || *a != want {
		t.Errorf("Gaussian accountant %+v, want %+v", a, want)
	}
	if a := parse(t, minimal).Base.Privacy.Accountant; a != nil {
		t.Errorf("a scenario without noise or accountant got one: %+v", a)
	}
}

// A plan whose curves mix a noise-free curve and noisy ones may configure
// the accountant: the noise-free curve keeps it (and reports no privacy).
func TestMixedCurvesTakeAnAccountant(t *testing.T) {
	p := parse(t, minimal+`privacy: {accountant: {b: 2}}
curves:
  - {label: none, set: {privacy.scheme: none}}
  - {label: noisy, set: {privacy.scheme: update-noise}}
`)
	for _, c := range p.Curves {
		if a := c.Scenario.Privacy.Accountant; a == nil || a.B != 2 || a.BPrime != 1 {
			t.Errorf("curve %s: accountant %+v, want b = 2 and the defaults", c.Label, a)
		}
	}
}

// Overrides are recorded in the plan and, except those that only change how
// results are shown, end every curve label; replacing the curves or the sweep
// is how an override changes what they vary.
func TestOverridesAreRecordedAndLabelled(t *testing.T) {
	src := minimal + "sweep:\n  algorithm.step_size: [0.1, 0.2]\n"
	p := parse(t, src, "loss.rho=0.01", "output.every=2", "sweep={algorithm.fedavg.participants: [2, 3]}")
	var labels []string
	for _, c := range p.Curves {
		labels = append(labels, c.Label)
	}
	if got := strings.Join(labels, "; "); got != "participants=2, rho=0.01; participants=3, rho=0.01" {
		t.Errorf("labels %q", got)
	}
	want := []scenarios.Setting{{Field: "loss.rho", Value: "0.01"}, {Field: "output.every", Value: "2"}, {Field: "sweep", Value: "{algorithm.fedavg.participants: [2, 3]}"}}
	if !slices.Equal(p.Overrides, want) {
		t.Errorf("overrides %v, want %v", p.Overrides, want)
	}
	// An override a curve repeats, or one that curves given by --set
	// refine, replaces nothing behind the user's back.
	parse(t, minimal+"curves:\n  - {label: a, set: {runs: 2}}\n", "runs=2")
	parse(t, minimal, "privacy.scheme=update-noise", "curves=[{label: a, set: {}}, {label: b, set: {privacy.scheme: none}}]")
	if l := parse(t, minimal, "runs=3", "loss.rho=0.01").Curves[0].Label; l != "t, rho=0.01" {
		t.Errorf("single curve label %q, want \"t, rho=0.01\"", l)
	}
	// A long value is cut in the label, which no limit then refuses.
	long := "data.regression={covariance_scale: 2, noise_variance: [0.1, 0.2], shared_covariance: true}"
	if l := parse(t, minimal+"curves:\n  - {label: "+strings.Repeat("x", 190)+", set: {runs: 2}}\n", long).Curves[0].Label; !strings.HasSuffix(l, ", regression={covariance_scale: 2, n…") {
		t.Errorf("label %q", l)
	}
}

func TestOverridesApply(t *testing.T) {
	p := parse(t, minimal, "algorithm.step_size=0.05", "algorithm.fedavg.local_steps=[2, 4]", "output.every=5")
	sc := p.Base
	if sc.Algorithm.StepSize != 0.05 || sc.Algorithm.Params.(*fedavg.FedAvg).LocalSteps != (scenarios.IntRange{2, 4}) || sc.Output.Every != 5 {
		t.Errorf("overrides not applied: step %v, local steps %v, every %d", sc.Algorithm.StepSize, sc.Algorithm.Params.(*fedavg.FedAvg).LocalSteps, sc.Output.Every)
	}
}

func TestCurvesAndSweepExpand(t *testing.T) {
	src := minimal + `curves:
  - label: plain
    set: {algorithm.fedavg.normalized: false}
  - label: thesis
    set: {algorithm.fedavg.normalized: true}
sweep:
  algorithm.step_size: [0.1, 0.05]
  runs: [2, 3]
`
	p := parse(t, src)
	var labels []string
	for _, c := range p.Curves {
		labels = append(labels, c.Label)
	}
	want := []string{
		"plain, step_size=0.1, runs=2", "plain, step_size=0.1, runs=3", "plain, step_size=0.05, runs=2", "plain, step_size=0.05, runs=3",
		"thesis, step_size=0.1, runs=2", "thesis, step_size=0.1, runs=3", "thesis, step_size=0.05, runs=2", "thesis, step_size=0.05, runs=3",
	}
	if strings.Join(labels, "|") != strings.Join(want, "|") {
		t.Fatalf("labels\n  %v\nwant\n  %v", labels, want)
	}
	c := p.Curves[2].Scenario
	if c.Algorithm.Params.(*fedavg.FedAvg).Normalized || c.Algorithm.StepSize != 0.05 || c.Runs != 2 {
		t.Errorf("curve 2 not resolved: normalized %v step %v runs %d", c.Algorithm.Params.(*fedavg.FedAvg).Normalized, c.Algorithm.StepSize, c.Runs)
	}
	if p.Base.Algorithm.StepSize != 0.1 || len(p.Base.Curves) != 2 || len(p.Base.Sweep) != 2 {
		t.Error("the base scenario must keep its own values and record curves and sweep")
	}
	if got := p.Curves[7].Settings; len(got) != 3 || got[0].Field != "algorithm.fedavg.normalized" || got[2].Value != "3" {
		t.Errorf("settings of the last curve: %+v", got)
	}
}

// The resolved scenario written to run directories must load back to itself.
func TestResolvedScenarioRoundTrips(t *testing.T) {
	p := parse(t, minimal+"sweep:\n  algorithm.step_size: [0.1, 0.2]\n")
	out, err := yaml.Marshal(p.Base)
	if err != nil {
		t.Fatal(err)
	}
	again := parse(t, string(out))
	out2, err := yaml.Marshal(again.Base)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != string(out2) {
		t.Errorf("resolved scenario changed on reload:\n%s\n---\n%s", out, out2)
	}
	if len(again.Curves) != 2 {
		t.Errorf("reloaded plan has %d curves, want 2", len(again.Curves))
	}
}

func TestBundledScenariosAreValid(t *testing.T) {
	err := fs.WalkDir(scenarios.Bundled(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, err := scenarios.LoadBundled(path, nil); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := scenarios.LoadBundled(scenarios.DefaultScenario, nil); err != nil {
		t.Fatalf("default scenario: %v", err)
	}
	var e *scenarios.Error
	if _, err := scenarios.LoadBundled("nope.yaml", nil); !errors.As(err, &e) {
		t.Errorf("missing bundled scenario: %v", err)
	}
}

func TestLoadFileReportsMissingFile(t *testing.T) {
	_, err := scenarios.LoadFile("does/not/exist.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "does/not/exist.yaml: cannot read scenario") {
		t.Errorf("LoadFile on a missing file: %v", err)
	}
}

// aliasBomb is a few hundred bytes of nested anchors that expand to 10⁹
// values (the "billion laughs"), as a flow sequence ending a line.
const aliasBomb = `&a [x, x, x, x, x, x, x, x, x, x]
y: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
z: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
w: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
v: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
u: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
s: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
r: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]
q: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]
`

// flowBomb is aliasBomb on one line, as given to --set.
const flowBomb = "[&a [x, x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a], " +
	"&c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c], " +
	"&e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d], &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e], " +
	"&g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f], &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]]"

// A file larger than any scenario is refused before it is read.
func TestLoadFileRefusesHugeFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	if err := os.WriteFile(path, []byte("name: x\n"+strings.Repeat("#", scenarios.MaxFileBytes)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := scenarios.LoadFile(path, nil)
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), path+": scenario file larger than 1048576 bytes") {
		t.Errorf("LoadFile(%d bytes): %v", scenarios.MaxFileBytes+8, err)
	}
}

// Only a regular file is a scenario: a named pipe, which would block the
// loader until something writes to it, and a device such as /dev/zero,
// which never ends, are refused by name without being read.
func TestLoadFileRefusesWhatIsNotARegularFile(t *testing.T) {
	for path, want := range map[string]string{
		fileiotest.FIFO(t, "pipe.yaml", minimal): "pipe.yaml: cannot read scenario: not a regular file: a named pipe (FIFO)",
		"/dev/zero":                              "/dev/zero: cannot read scenario: not a regular file: a character device",
		t.TempDir():                              "cannot read scenario: not a regular file: a directory",
	} {
		_, err := scenarios.LoadFile(path, nil)
		if !scenarios.IsUserError(err) || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadFile(%s): %v; want an error containing %q", path, err, want)
		}
	}
}

// A scenario's file paths are stored as written; key randomness defaults to
// seeded under local graph-homomorphic noise and os needs secure keys.
func TestKeyRandomness(t *testing.T) {
	const lgh = `name: k
data: {agents: 6, samples: 10}
algorithm: {kind: diffusion, step_size: 0.1}
topology: {graph: ring}
privacy: {scheme: local-graph-homomorphic}
`
	if got := parse(t, lgh).Base.Privacy.KeyRandomness; got != "seeded" {
		t.Errorf("default key randomness %q, want seeded", got)
	}
	if got := parse(t, lgh, "privacy.key_randomness=os").Base.Privacy.KeyRandomness; got != "os" {
		t.Errorf("key randomness %q, want os", got)
	}
	_, err := scenarios.Parse([]byte(lgh), "t.yaml", ".", []string{"privacy.key_randomness=os", "privacy.keys=oracle"})
	if err == nil || !strings.Contains(err.Error(), "privacy.key_randomness: os draws X25519 key pairs, which only privacy.keys secure has") {
		t.Errorf("os randomness with oracle keys: %v", err)
	}
}

// FuzzParse checks that no input makes the loader panic, and that whatever it
// accepts is a valid plan.
func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte(minimal + "sweep:\n  runs: [1, 2]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	f.Add([]byte("data: {agents: [1, 2]}\n"))
	f.Add([]byte(minimal + "description: " + aliasBomb))
	f.Add([]byte(minimal + "x: " + aliasBomb + "curves:\n  - {label: *i, set: {runs: 2}}\n"))
	f.Add([]byte(minimal + "x: " + aliasBomb + "sweep:\n  algorithm.step_size: *i\n"))
	f.Add([]byte(minimal + "---\nname: u\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := scenarios.Parse(data, "fuzz.yaml", ".", nil)
		if err != nil {
			if !scenarios.IsUserError(err) {
				t.Fatalf("error %v is not a scenario *Error", err)
			}
			return
		}
		if len(p.Curves) == 0 || p.Base == nil {
			t.Fatalf("accepted plan has no curves")
		}
		for _, c := range p.Curves {
			if c.Scenario.Runs < 1 || c.Scenario.Data.Agents < 1 {
				t.Fatalf("accepted invalid scenario %+v", c.Scenario)
			}
		}
	})
}
