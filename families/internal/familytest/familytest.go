// Package familytest holds what the families' tests share: running a
// scenario on one engine and reading back what it wrote.
package familytest

import (
	"os"
	"path/filepath"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// MetricsOn runs the scenario src, with the override set, on engine e and
// returns the metrics.csv it wrote, or the user error that refused it (the
// loader's or the run's). Any other failure ends the test.
func MetricsOn(t testing.TB, src, set string, e run.Engine) ([]byte, error) {
	t.Helper()
	p, err := scenarios.Parse([]byte(src), "registry.yaml", t.TempDir(), []string{set})
	if err != nil {
		if !scenarios.IsUserError(err) {
			t.Fatalf("--set %s: %v", set, err)
		}
		return nil, err
	}
	dir := t.TempDir()
	if _, err := run.Execute(p, dir, run.Options{Engine: e, Workers: 1}); err != nil {
		if !scenarios.IsUserError(err) {
			t.Fatalf("--set %s on %s: %v", set, e, err)
		}
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, "metrics.csv"))
}
