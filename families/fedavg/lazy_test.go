package fedavg

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

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
// SHA-256 of the trace's records: its decompressed bytes, which a change of
// the compression level leaves as they are).
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
			sum := sha256.Sum256(decompressed(t, filepath.Join(dir, "trace.jsonl.zst")))
			exp, _ := os.ReadFile(filepath.Join(want, "trace.sha256"))
			if got := hex.EncodeToString(sum[:]); got != strings.TrimSpace(string(exp)) {
				t.Errorf("%s clients: the SHA-256 of the trace's records is %s, maple 15cd9a1's %s", hold.name, got, exp)
			}
		}
	}
}

// The passes over the ten thousand clients before and after the solve
// (checks, summary and normal equations; the solver's gradient norm, the
// noise bound and the drift ξ) run on every core, combined in agent order:
// at GOMAXPROCS 1 and 3 the outputs are the bytes of testdata/lazy.
func TestLazyClientsKeepTheirNumbersOnAnyCores(t *testing.T) {
	p, err := scenarios.LoadFile("testdata/lazy/scale.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, procs := range []int{1, 3} {
		runtime.GOMAXPROCS(procs)
		dir := t.TempDir()
		if _, err := run.Execute(p, dir, run.Options{Engine: run.Reference}); err != nil {
			t.Fatal(procs, err)
		}
		for _, f := range []string{"metrics.csv", "summary.json"} {
			got, _ := os.ReadFile(filepath.Join(dir, f))
			exp, err := os.ReadFile(filepath.Join("testdata/lazy/reference", f))
			if err != nil || !bytes.Equal(got, exp) {
				t.Errorf("GOMAXPROCS %d: %s differs from testdata/lazy's (%v)", procs, f, err)
			}
		}
	}
}

// BenchmarkLazyClients runs lazy_test's scenario (every path a lazily held
// client takes) with 10⁵ clients on both engines, the clients parked after
// every task and kept whole once built, and fails unless both holdings
// write the same metrics, summary and trace: at this scale kept clients
// take a few hundred megabytes, parked ones a few. (The outputs at 10⁵
// were compared with maple 15cd9a1's by hand; docs/design.md, "Ten million
// clients".)
//
//	go test -run XXX -bench LazyClients -benchtime 1x ./families/fedavg/
func BenchmarkLazyClients(b *testing.B) {
	p, err := scenarios.LoadFile("testdata/lazy/scale.yaml", []string{"data.agents=100000"})
	if err != nil {
		b.Fatal(err)
	}
	defer func(v float64) { keepBytes = v }(keepBytes)
	for b.Loop() {
		for _, engine := range []run.Engine{run.Actors, run.Reference} {
			var outputs [2][]byte
			for i, hold := range []float64{0, math.Inf(1)} {
				keepBytes = hold
				dir := b.TempDir()
				if _, err := run.Execute(p, dir, run.Options{Engine: engine, Trace: engine == run.Actors}); err != nil {
					b.Fatal(engine, err)
				}
				for _, f := range []string{"metrics.csv", "summary.json", "trace.jsonl.zst"} {
					data, err := os.ReadFile(filepath.Join(dir, f))
					if err != nil && (engine == run.Actors || f != "trace.jsonl.zst") {
						b.Fatal(err)
					}
					outputs[i] = append(outputs[i], data...)
				}
			}
			if !bytes.Equal(outputs[0], outputs[1]) {
				b.Errorf("%s engine, 10⁵ clients: parked and kept clients wrote different outputs", engine)
			}
		}
	}
}

// decompressed returns the records of a trace store: its zstd frames
// decoded, the index (a skippable frame) left out.
func decompressed(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b, err := io.ReadAll(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
