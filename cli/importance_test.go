package cli

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// importanceSmall shrinks the Fig. 2.1 scenario to a few rounds on 20 agents,
// keeping its four policies.
var importanceSmall = []string{
	"scenarios/importance/fig2.1.yaml", "--set", "runs=3", "--set", "iterations=8",
	"--set", "data.agents=20", "--set", "data.samples=[12, 20]", "--set", "output.plot=false",
}

// Importance sampling adds messages whose order and contents depend on every
// agent's state (probes, reports, probabilities): the same scenario and seed
// must still give byte-identical metrics and traces at GOMAXPROCS 1 and 4,
// and with 3 parallel workers.
func TestImportanceOutputsAreByteIdenticalAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	checkByteIdentical(t, "", 4, importanceSmall)
}

// What the adaptive policies need travels in messages, so the trace shows it:
// the probes of the full adaptive policy and the agents' reports, the p_k the
// server sends with the model, and the gradient-noise report riding on the
// partial policy's replies.
func TestImportanceTraceShowsProbabilitiesAndReports(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	args := append([]string{"run", "--out", dir, "--trace"}, importanceSmall...)
	if code, out, errOut := maple(t, args...); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	_, trace, _ := maple(t, "trace", dir, "--json")
	for _, want := range []string{
		`"type":"ImportanceProbe"`,
		`"type":"ImportanceReport","size":`,
		`"grad_norm":`, `"sigma2":`, `"alpha":`,
	} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %s", want)
		}
	}
	var withP, partialReports int
	for _, line := range strings.Split(trace, "\n") {
		if strings.Contains(line, `"type":"GlobalModel"`) && strings.Contains(line, `"p":`) {
			withP++
		}
		if strings.Contains(line, "partial adaptive") && strings.Contains(line, `"type":"LocalModel"`) && strings.Contains(line, `"grad_norm":`) {
			partialReports++
		}
		if strings.Contains(line, `"curve":"FedAvg"`) && (strings.Contains(line, `"p":`) || strings.Contains(line, "Importance")) {
			t.Fatalf("uniform FedAvg sends importance fields: %s", line)
		}
	}
	// 3 importance curves × 3 runs × 8 rounds × 6 agents.
	if withP != 3*3*8*6 || partialReports != 3*8*6 {
		t.Errorf("%d GlobalModels carry p_k (want %d) and %d partial-policy replies a report (want %d)", withP, 3*3*8*6, partialReports, 3*8*6)
	}
}
