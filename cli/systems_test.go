package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// failingScenario is the bundled scenario that demonstrates a clear error:
// FedAvg with 30% dropouts, waiting for every reply.
const failingScenario = "scenarios/systems/dropouts-wait-all.yaml"

// FedAvg with dropouts under the wait-for-all policy stops at the first
// round with a dropout, with exit status 1 and one line naming the round,
// the agents the server waits for and why they did not answer.
func TestWaitAllDropoutsStopWithOneClearLine(t *testing.T) {
	t.Parallel()
	code, _, errOut := maple(t, "run", failingScenario, "--out", filepath.Join(t.TempDir(), "o"))
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	last := lines[len(lines)-1]
	if code != 1 || !strings.Contains(last, "server: round 1 waits for the replies of agent/") || !strings.Contains(last, ": dropped out in round 1 (no reply sent)") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut)
	}
}
