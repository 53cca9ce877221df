package fedavg

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// Ten thousand lazily held clients draw the numbers they drew when every
// client was built before the first round: testdata/lazy holds the outputs
// maple 15cd9a1 wrote for scale.yaml — plain FedAvg with model noise and
// its privacy accounting, the systems model with every fault, a deadline
// and adversaries, FedBuff with a timeout — and the run directories of
// both engines, with the clients parked after every task or kept whole
// once built, must be those bytes (metrics.csv, summary.json, and the
// trace's SHA-256).
func TestLazyClientsKeepTheirNumbers(t *testing.T) {
	p, err := scenarios.LoadFile("testdata/lazy/scale.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func(b float64) { keepBytes = b }(keepBytes)
	for _, hold := range []struct {
		name  string
		bytes float64
	}{{"parked", 0}, {"kept", keepBytes}} {
		keepBytes = hold.bytes
		for _, engine := range []run.Engine{run.Actors, run.Reference} {
			dir := t.TempDir()
			if _, err := run.Execute(p, dir, run.Options{Engine: engine, Trace: engine == run.Actors}); err != nil {
				t.Fatal(hold.name, engine, err)
			}
			want := filepath.Join("testdata/lazy", string(engine))
			for _, f := range []string{"metrics.csv", "summary.json"} {
				got, _ := os.ReadFile(filepath.Join(dir, f))
				exp, err := os.ReadFile(filepath.Join(want, f))
				if err != nil || !bytes.Equal(got, exp) {
					t.Errorf("%s clients, %s engine: %s differs from maple 15cd9a1's (%v)", hold.name, engine, f, err)
				}
			}
			if engine != run.Actors {
				continue
			}
			trace, _ := os.ReadFile(filepath.Join(dir, "trace.jsonl.zst"))
			sum := sha256.Sum256(trace)
			exp, _ := os.ReadFile(filepath.Join(want, "trace.sha256"))
			if got := hex.EncodeToString(sum[:]); got != strings.TrimSpace(string(exp)) {
				t.Errorf("%s clients: the trace's SHA-256 is %s, maple 15cd9a1's %s", hold.name, got, exp)
			}
		}
	}
}
