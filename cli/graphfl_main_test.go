package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"maple/figures"
	"maple/rundir"
)

// The bundled graph federated learning scenarios run, here with one run of
// two rounds: Fig. 2 (servers on a graph) and Fig. 7 (classification, with
// 64 hashed slots instead of 1024 to keep the optimum's Newton solve
// quick), and their run directories hold what their figures draw (maple
// plot's charts of them; drawing the PNGs was most of this test's time under
// the race detector; other tests write figures). Fig. 5 (one server) runs
// in TestInspectionWorksOnEveryBundledScenario. Every bundled file is
// validated, its topology built, by TestValidateAcceptsTheBundledScenarios.
func TestGraphFLBundledScenariosRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, figure, dim string }{
		{"fig2.yaml", "msd_centroid", "2"}, {"fig7.yaml", "test_error_centroid", "64"},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		file := c.file
		code, out, errOut := maple(t, "run", filepath.Join("scenarios/graphfl", file), "--out", dir,
			"--set", "runs=1", "--set", "iterations=2", "--set", "output.every=1", "--set", "data.dim="+c.dim, "--set", "output.plot=false")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", file, code, out, errOut)
		}
		r, err := rundir.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		charts, err := figures.Charts(figures.Options{}, r.Curves())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(charts, func(ch figures.Chart) bool { return ch.Name == c.figure }) {
			t.Errorf("%s: no %s chart", file, c.figure)
		}
	}
}

// A traced graph federated learning run shows, as distinct message types,
// the models sent to clients, the clients' uploads, the servers' shares and
// the servers' key exchange; maple trace filters them by type.
func TestGraphFLTraceShowsEveryPartOfTheProtocol(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	code, out, errOut := maple(t, "run", "scenarios/graphfl/fig2.yaml", "--out", dir, "--trace",
		"--set", "runs=1", "--set", "iterations=2", "--set", "data.agents=50", "--set", "algorithm.graphfl.servers=5",
		"--set", "algorithm.graphfl.participants=3", "--set", "algorithm.graphfl.client_noise=update-noise",
		"--set", "curves=[{label: lgh, set: {privacy.scheme: local-graph-homomorphic}}]")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for typ, link := range map[string]string{
		"GlobalModel": "server/0 -> agent/", "LocalUpdate": "agent/", "ServerShare": "server/",
		"RoleAssign": "server/", "PublicKey": "server/", "RelayedPublicKey": "server/",
	} {
		_, out, _ := maple(t, "trace", dir, "--type", typ, "--round", "1")
		if !strings.Contains(out, " "+typ+" ") || !strings.Contains(out, link) {
			t.Errorf("round 1 has no %s message on a %s… link:\n%.300s", typ, link, out)
		}
	}
}

// A bad graph federated learning configuration is a user error: exit 2 and
// one line naming the file, the line and the field.
func TestGraphFLBadConfigurationExitsTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := writeFile(t, dir, "bad.yaml", "name: bad\ndata: {agents: 20}\nalgorithm:\n  kind: graphfl\n  graphfl: {servers: 4, participants: 9}\n")
	for _, cmd := range []string{"validate", "run"} {
		code, _, errOut := maple(t, cmd, path, "--out", filepath.Join(dir, "o"))
		if cmd == "validate" {
			code, _, errOut = maple(t, cmd, path)
		}
		want := path + ":5: algorithm.graphfl.participants: L = 9 clients cannot be sampled without replacement from the K = 5"
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line containing %q", cmd, code, errOut, want)
		}
	}
}
