package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// maple privacy dp-sgd prints the PLD ε first with the Rényi one beside
// it, every line naming accountant, relation and sampling: TF Privacy's
// PLD test value 2.4612381 (N = 10000, B = 100, z = 0.7, 1.2 epochs), and
// with --accountant rdp the classic-conversion 2.92 of TF Privacy's MNIST
// tutorial (N = 60000, B = 256, z = 1.12, 60 epochs); it solves for the
// noise multiplier of a target ε, and refuses bad flags with one line
// naming the flag, exit 2.
func TestPrivacyDPSGD(t *testing.T) {
	t.Parallel()
	code, out, errOut := maple(t, "privacy", "dp-sgd", "--samples", "10000", "--batch", "100", "--noise-multiplier", "0.7", "--epochs", "1.2")
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) < 5 || !strings.HasPrefix(lines[2], "epsilon           2.46124 at δ = 1e-05   (pld accountant, add-remove, poisson sampling") ||
		!strings.Contains(lines[3], "(rdp accountant, add-remove, poisson sampling; balle2020") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = maple(t, "privacy", "dp-sgd", "--samples", "60000", "--batch", "256", "--noise-multiplier", "1.12", "--epochs", "60", "--accountant", "rdp", "--interval", "0.001")
	if code != 0 || !strings.Contains(out, "14063 steps") || !strings.Contains(out, "epsilon           2.92") || !strings.Contains(out, "classic conversion") || !strings.Contains(out, "(pld accountant") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	// Solving for z and computing ε back give the target (to the 6 digits
	// printed).
	// (The PLD lines at Δ = 10⁻³: what is checked does not depend on Δ.)
	code, out, _ = maple(t, "privacy", "dp-sgd", "--samples", "6000", "--batch", "60", "--epsilon", "2", "--epochs", "6", "--interval", "0.001")
	if code != 0 || !strings.Contains(out, "epsilon           2 at δ = 1e-05   (pld accountant") {
		t.Errorf("--epsilon 2: exit %d\n%s", code, out)
	}
	// Noise too weak for any bound is +Inf, not an internal error (issue 30).
	code, out, errOut = maple(t, "privacy", "dp-sgd", "--samples", "60000", "--batch", "256", "--noise-multiplier", "1e-300", "--epochs", "1")
	if code != 0 || !strings.Contains(out, "epsilon           +Inf at δ = 1e-05   (pld accountant") {
		t.Errorf("z = 1e-300: exit %d\n%s%s", code, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "1", "--noise-multiplier", "-1"}, "--noise-multiplier: need z > 0"},
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "1", "--noise-multiplier", "1", "--delta", "1"}, "--delta: need 0 < δ < 1"},
		{[]string{"--samples", "100", "--batch", "200", "--epochs", "1", "--noise-multiplier", "1"}, "--batch: need 1 ≤ B ≤ N = 100"},
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "1"}, "exactly one of --noise-multiplier"},
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "1", "--epsilon", "1", "--sampling", "bogus"}, "--sampling: unknown sampling"},
		{[]string{"--samples", "100", "--batch", "10", "--epochs", "0", "--epsilon", "1"}, "--epochs: need E > 0"},
	} {
		code, _, errOut := maple(t, append([]string{"privacy", "dp-sgd"}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// maple privacy dp-fedavg prints the client-level PLD ε of issue 29's
// DP-FedAvg setting (K = 1000, L = 50, 100 rounds, z = 1, δ = 1e-5): 3.50
// under add-remove with Poisson sampling and 4.89 under replace-one, where
// the Rényi accountant has no bound and says so.
func TestPrivacyDPFedAvg(t *testing.T) {
	t.Parallel()
	base := []string{"privacy", "dp-fedavg", "--clients", "1000", "--per-round", "50", "--rounds", "100", "--noise-multiplier", "1", "--sampling", "poisson"}
	code, out, errOut := maple(t, base...)
	if code != 0 || !strings.Contains(out, "epsilon           3.50215 at δ = 1e-05   (pld accountant, add-remove, poisson sampling") ||
		!strings.Contains(out, "(rdp accountant, add-remove, poisson sampling; balle2020") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = maple(t, append(base, "--relation", "replace-one")...)
	if code != 0 || !strings.Contains(out, "epsilon           4.88949 at δ = 1e-05   (pld accountant, replace-one, poisson sampling") ||
		!strings.Contains(out, "(rdp accountant: no Rényi bound for replace-one, poisson sampling)") {
		t.Errorf("replace-one: exit %d\n%s%s", code, out, errOut)
	}
}

// maple run refuses bad privacy settings before anything runs, with one
// line naming the field and exit 2: a threshold above n, k above n − 1, bits
// too few for n inputs (or too coarse for the clip and distributed noise), a
// negative noise multiplier, δ ≥ 1. The quick start draws n = 10 clients a
// round. In a file, the line names the file and line of the field.
func TestRunRefusesBadPrivacyInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, c := range []struct {
		set  []string
		want string
	}{
		{[]string{"privacy.secure_aggregation={threshold: 11}"}, "privacy.secure_aggregation.threshold: t must lie in [2, n] = [2, 10] for n = 10 clients per round, got 11"},
		{[]string{"privacy.secure_aggregation={protocol: secagg+, neighbours: 10}"}, "privacy.secure_aggregation.neighbours: k must lie in [1, n − 1] = [1, 9] for n = 10 clients per round, got 10"},
		{[]string{"privacy.secure_aggregation={bits: 4}"}, "privacy.secure_aggregation.bits: 4 bits cannot hold a sum of 10 inputs without wrapping around; need at least 5"},
		{[]string{"privacy.secure_aggregation={bits: 5, clip: 10}", "privacy.dp={mode: distributed, clip: 1}"}, "privacy.secure_aggregation.bits: 5 bits and clip 10 give a grid step"},
		{[]string{"privacy.dp={noise_multiplier: -1}"}, "privacy.dp.noise_multiplier: must be a positive number, got -1"},
		{[]string{"privacy.dp={delta: 1}"}, "privacy.dp.delta: must lie in (0, 1), got 1"},
		{[]string{"algorithm.fedavg.client={kind: dp-sgd, noise_multiplier: -0.5}"}, "algorithm.fedavg.client.noise_multiplier: must lie in (0, inf)"},
	} {
		// One short run, should a check be missing.
		args := []string{"run", "--out", filepath.Join(dir, fmt.Sprint(i)), "--set", "runs=1", "--set", "iterations=1"}
		for _, s := range c.set {
			args = append(args, "--set", s)
		}
		code, _, errOut := maple(t, args...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line containing %q", c.set, code, errOut, c.want)
		}
	}
	file := writeFile(t, dir, "p.yaml", `name: p
data: {kind: regression, agents: 6, samples: 10, dim: 2}
loss: {kind: least-squares}
algorithm:
  kind: fedavg
  step_size: 0.05
  fedavg: {participation: full}
privacy:
  secure_aggregation:
    threshold: 7
`)
	code, _, errOut := maple(t, "validate", file)
	if want := "p.yaml:10: privacy.secure_aggregation.threshold: t must lie in [2, n] = [2, 6]"; code != 2 || !strings.Contains(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("p.yaml: exit %d, stderr %q; want exit 2 and %q", code, errOut, want)
	}
}
