package cli

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/algorithms/data/idxtest"
	"maple/scenarios"
)

// Every bundled scenario, run tiny with a trace and --report, can be
// inspected: maple trace stats summarizes it, maple trace export writes a
// timeline with a slice per message, and report.html is well-formed. Under
// the race detector (tenfold slower) the test covers one small scenario per
// family; without it, all of them.
func TestInspectionWorksOnEveryBundledScenario(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("scenarios/*/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled scenarios: %v", err)
	}
	files = append(files, "scenarios/quickstart.yaml")
	if raceEnabled {
		files = []string{"scenarios/quickstart.yaml", "scenarios/fedavg/thesis-regression.yaml", "scenarios/decentralized/mu-sweep.yaml",
			"scenarios/randomwalk/fig1a.yaml", "scenarios/graphfl/fig5.yaml", "scenarios/fedplt/table8.yaml"}
	}
	// Curves that set their own iteration counts keep them over --set
	// iterations: give the μ-sweep two short curves. Fig. 5's 1024-feature
	// logistic optimum dominates its time, as for graph FL's Fig. 7 and
	// Fed-PLT's Table V: fewer features keep the test small. The 10⁷
	// clients of the cross-device scenario cost three passes over their
	// data (about a minute): 10⁴ of them take the same paths.
	extra := map[string][]string{
		"scenarios/fedavg/cross-device-10m.yaml": {"--set", "data.agents=10000"},
		"scenarios/decentralized/mu-sweep.yaml":  {"--set", `curves=[{label: "μ=0.4", set: {algorithm.step_size: 0.4, iterations: 2}}, {label: "μ=0.05", set: {algorithm.step_size: 0.05, iterations: 2}}]`},
		"scenarios/decentralized/fig5.yaml":      {"--set", "data.dim=32"},
		"scenarios/dp/audit-dp-fedavg.yaml":      {"--set", `curves=[{label: "z = 2", set: {}}, {label: "q = 0.2", set: {iterations: 2, algorithm.fedavg.participants: 200}}]`},
		"scenarios/graphfl/fig7.yaml":            {"--set", "data.dim=32"},
		"scenarios/fedplt/table5.yaml":           {"--set", "data.dim=10"},
		"scenarios/systems/stragglers.yaml": {"--set", `curves=[{label: sync, set: {iterations: 2}}, {label: fedasync, set: {iterations: 2, algorithm.fedavg.server: fedasync}}, ` +
			`{label: fedbuff, set: {iterations: 2, algorithm.fedavg.participants: 30, algorithm.fedavg.server: {kind: fedbuff, buffer: 10}}}]`},
	}
	// The ScatterNet scenario transforms the 70 000 Fashion-MNIST images
	// (about a minute of both cores): 120 synthetic 28×28 images and 40 test
	// images take the same paths, and two curves without their own
	// iteration counts.
	extra["scenarios/dp/dp-sgd-scatternet.yaml"] = scatterImages(t)
	// The secure-aggregation cost scenarios sweep n up to 10 000 with one
	// round per curve: three short curves at n = 10 and 20 instead.
	secaggCosts := []string{"--set", `curves=[{label: plain FedAvg, set: {privacy.secure_aggregation.protocol: none, iterations: 2}}, ` +
		`{label: SecAgg+, set: {privacy.secure_aggregation.protocol: secagg+, iterations: 2}}, {label: SecAgg, set: {iterations: 2}}]`,
		"--set", "sweep={data.agents: [10, 20]}"}
	extra["scenarios/secagg/costs.yaml"], extra["scenarios/secagg/costs-large.yaml"] = secaggCosts, secaggCosts
	noMessages := map[string]bool{"scenarios/randomwalk/fig1a.yaml": true, "scenarios/randomwalk/fig1b.yaml": true, "scenarios/randomwalk/audit-gamma-mechanism.yaml": true}
	// A many-run audit compares runs with its canary and runs without: four
	// runs at least.
	for _, file := range files {
		p, err := scenarios.LoadFile(file, nil)
		if err != nil {
			continue
		}
		for _, c := range p.Curves {
			if a := c.Scenario.Privacy.Audit; a != nil && a.Method == scenarios.AuditManyRun {
				extra[file] = append(extra[file], "--set", "runs=4")
				break
			}
		}
	}
	for _, file := range files {
		if file == failingScenario {
			continue // it stops with an error by design (systems_test.go)
		}
		t.Run(strings.TrimSuffix(strings.TrimPrefix(file, "scenarios/"), ".yaml"), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			args := append([]string{"run", file, "--out", dir, "--trace", "--report", "--set", "runs=1", "--set", "iterations=2", "--set", "output.plot=false"}, extra[file]...)
			code, out, errOut := maple(t, args...)
			if code != 0 {
				t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
			}
			code, out, errOut = maple(t, "trace", "stats", dir, "--totals")
			if noMessages[file] {
				// The gamma-mechanism curves have no actors: their trace
				// holds no records, which every trace command refuses.
				if code != 2 || !strings.Contains(errOut, "the trace holds no records") {
					t.Fatalf("trace stats of an empty trace: exit %d\n%s%s", code, out, errOut)
				}
				return
			}
			if code != 0 || !strings.Contains(out, "messages per type") || !strings.Contains(out, "per actor") {
				t.Fatalf("trace stats: exit %d\n%s%s", code, out, errOut)
			}
			timeline := filepath.Join(dir, "timeline.json")
			if code, out, errOut = maple(t, "trace", "export", "--format", "perfetto", dir, "-o", timeline); code != 0 {
				t.Fatalf("trace export: exit %d\n%s%s", code, out, errOut)
			}
			var doc struct {
				TraceEvents []struct {
					Ph string `json:"ph"`
				} `json:"traceEvents"`
			}
			if err := json.Unmarshal(read(t, timeline), &doc); err != nil {
				t.Fatalf("timeline.json: %v", err)
			}
			slices := 0
			for _, ev := range doc.TraceEvents {
				if ev.Ph == "X" {
					slices++
				}
			}
			_, all, _ := maple(t, "trace", dir)
			// Families without messages (the Gamma-mechanism study) leave
			// an empty trace, which every command still reads.
			if n := strings.Count(all, "\n"); slices != n {
				t.Errorf("timeline has %d slices for %d messages", slices, n)
			}
			f, err := os.Open(filepath.Join(dir, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			d := xml.NewDecoder(f)
			for {
				if _, err := d.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("report.html is not well-formed: %v", err)
				}
			}
		})
	}
}

// scatterImages writes 120 training and 40 test images of 28×28 pixels for
// the ScatterNet scenario and returns the overrides that read them.
func scatterImages(t *testing.T) []string {
	dir := t.TempDir()
	file := func(name string, n int, image bool) string {
		path := filepath.Join(dir, name)
		if !image {
			labels := make([]byte, n)
			for i := range labels {
				labels[i] = byte(i % 10)
			}
			idxtest.Write(t, path, idxtest.UnsignedBytes, []int{n}, labels)
			return path
		}
		pixels := make([]byte, n*28*28)
		for i := range pixels {
			pixels[i] = byte(i * 7919 % 256)
		}
		idxtest.Write(t, path, idxtest.UnsignedBytes, []int{n, 28, 28}, pixels)
		return path
	}
	return []string{"--set", "data.idx.images=" + file("train.gz", 120, true), "--set", "data.idx.labels=" + file("train-labels.gz", 120, false),
		"--set", "data.idx.test_images=" + file("test.gz", 40, true), "--set", "data.idx.test_labels=" + file("test-labels.gz", 40, false),
		"--set", "data.samples=120", "--set", "algorithm.fedavg.batch=8",
		"--set", `curves=[{label: DP-SGD, set: {algorithm.fedavg.client: {kind: dp-sgd, clip: 0.1, noise_multiplier: 3.33}}}, {label: no privacy, set: {algorithm.fedavg.client: sgd}}]`}
}

// maple trace path --agent follows one agent's model: each round, the shares
// it sends to every receiver, which are its model without privacy noise.
func TestTracePathFollowsAnAgentsModel(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	if code, out, errOut := maple(t, "run", "scenarios/decentralized/fig4.yaml", "--out", dir, "--trace", "--set", "runs=1",
		"--set", "iterations=3", "--set", "output.plot=false", "--set", "sweep={algorithm.diffusion.strategy: [atc]}"); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := maple(t, "trace", "path", dir, "--agent", "0")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], `agent/0's model, run 0, curve "none, strategy=atc": sent in 3 rounds`) {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	// Agent 0 sends its ψ to the same receivers every round, as many as
	// it has StageShare messages in the trace.
	_, shares, _ := maple(t, "trace", dir, "--from", "agent/0", "--type", "StageShare", "--round", "2", "--curve", "none, strategy=atc")
	if n := strings.Count(shares, "\n"); n == 0 || strings.Count(lines[2], "StageShare") != n || !strings.HasPrefix(lines[2], "round      2  -> agent/") {
		t.Errorf("round 2: %q; the trace has %d shares from agent/0", lines[2], n)
	}
	if code, _, errOut := maple(t, "trace", "path", dir, "--agent", "30"); code != 2 || !strings.Contains(errOut, `unknown actor "agent/30": the trace holds agent/0–29`) {
		t.Errorf("--agent 30: exit %d, %s", code, errOut)
	}
}
