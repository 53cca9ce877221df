package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"maple/actors/trace"
	"maple/algorithms/data/idxtest"
	"maple/internal/fileio/fileiotest"
)

// adversarial is one hostile or extreme input to the command line and what
// maple must make of it.
type adversarial struct {
	args []string
	code int
	// words must all appear in stderr, which (for a non-zero status) holds
	// lines lines, each starting "maple: " — one unless said otherwise.
	words []string
	lines int
	// check, if set, inspects what a run that succeeds printed.
	check func(t *testing.T, stdout string)
}

// The adversarial inputs of issue 18 and before, kept as a table so that no
// new reader, field or command can regress them. Each gets its exit status
// and one clear line naming what is wrong (the file, the line, the field,
// what was expected), never a panic or a hang, and leaves nothing behind: no
// run directory, no runs/, no hidden staging directory or temporary. A
// panic is an internal error (status 3, a second line asking for a report).
func TestAdversarialInputs(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("TMPDIR", t.TempDir()) // for the stack trace of the panic
	files := map[string]string{
		"tiny.yaml":             tiny,
		"bomb-description.yaml": tiny + "description: " + aliasBomb,
		"bomb-label.yaml":       tiny + "x: " + aliasBomb + "curves:\n  - {label: *i, set: {runs: 2}}\n",
		"bomb-sweep.yaml":       tiny + "x: " + aliasBomb + "sweep:\n  algorithm.step_size: *i\n",
		"two.yaml":              tiny + "---\nname: second\n",
		"escape.yaml":           strings.Replace(tiny, "name: tiny", "name: ../../escape", 1),
		"newline.yaml":          strings.Replace(tiny, "name: tiny", `name: "two\nlines"`, 1),
		"svm.yaml":              withData(`{kind: libsvm, agents: 5, libsvm: {file: missing.svm}}`),
		"full/summary.json":     "{}",
		"python.yaml":           strings.Replace(tiny, "name: tiny", "name: !!python/object:os.system tiny", 1),
		"runs-string.yaml":      strings.Replace(tiny, "runs: 1", `runs: "1"`, 1),
		"curve-set.yaml":        tiny + "curves:\n  - label: a\n    set: {bogus.path: 1}\n",
		"svm-pipe.yaml":         withData(`{kind: libsvm, agents: 2, samples: 1, libsvm: {file: pipe.svm}}`),
		"avail-pipe.yaml":       tiny + "network: {availability: avail.csv}\n",
		"agents-pipe.yaml":      withData(`{kind: directory, agents: 2, samples: 2, directory: {path: agents-pipe, format: csv}}`),
		"agents-zero.yaml":      withData(`{kind: directory, agents: 2, samples: 2, directory: {path: agents-zero, format: csv}}`),
		"agents-pipe/0.csv":     "1,0.5\n0,1\n",
		"agents-zero/0.csv":     "1,0.5\n0,1\n",
		"step-zero.yaml":        tiny + "network: {step_time: {kind: table, file: /dev/zero}}\n",
		"idx.yaml": withData(`{kind: idx, agents: 3, samples: 10, test_samples: 5, idx: {images: signed.gz, labels: labels.gz, scale: unit}}`) +
			"loss: {kind: softmax, classes: 3}\n",
		"big-idx.yaml": withData(`{kind: idx, agents: 3, samples: 10, test_samples: 5, idx: {images: big.gz, labels: labels.gz, scale: unit}}`) +
			"loss: {kind: softmax, classes: 3}\n",
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Special files: named pipes (fed valid content, so that a reader that
	// fails to refuse one reads it instead of hanging the test) and links
	// to /dev/zero.
	fileiotest.FIFOAt(t, "scenario-pipe.yaml", tiny)
	fileiotest.FIFOAt(t, "pipe.svm", "1 1:1\n-1 1:2\n")
	fileiotest.FIFOAt(t, "avail.csv", "0,0,1\n")
	fileiotest.FIFOAt(t, "agents-pipe/1.csv", "1,0.5\n0,1\n")
	os.Symlink("/dev/zero", "agents-zero/1.csv")
	// The cluster's secret: private, readable by others, a named pipe.
	const secret = "0123456789abcdef0123456789abcdef\n"
	os.WriteFile("secret-private", []byte(secret), 0o600)
	os.WriteFile("secret-public", []byte(secret), 0o600)
	os.Chmod("secret-public", 0o644)
	fileiotest.FIFOAt(t, "secret-pipe", secret)
	writeSignedIDX(t)
	writeBigIDX(t)
	// Run directories: a traced run, its copies with metrics.csv and
	// summary.json linked to /dev/zero, with the trace replaced by a named
	// pipe, with an altered index; and the empty trace of a family without
	// messages.
	if code, out, errOut := maple(t, "run", "tiny.yaml", "--trace", "--out", "traced"); code != 0 {
		t.Fatalf("traced run: exit %d\n%s%s", code, out, errOut)
	}
	copyRun(t, "traced", "zero-metrics", map[string]string{"metrics.csv": "/dev/zero"})
	copyRun(t, "traced", "zero-summary", map[string]string{"summary.json": "/dev/zero"})
	copyRun(t, "traced", "pipe-trace", map[string]string{trace.StoreFile: ""})
	fileiotest.FIFOAt(t, filepath.Join("pipe-trace", trace.StoreFile), "")
	copyRun(t, "traced", "altered", nil)
	alterIndex(t, filepath.Join("altered", trace.StoreFile))
	// Issue 30: run directories that are not what maple wrote — metrics.csv
	// cut inside its last row or with a row of nan,inf,-inf, summary.json
	// {} or null — and a trace with a byte of its first block flipped.
	copyRun(t, "traced", "cut-metrics", nil)
	rewrite(t, filepath.Join("cut-metrics", "metrics.csv"), func(b []byte) []byte { return b[:len(b)-4] })
	copyRun(t, "traced", "nan-metrics", nil)
	rewrite(t, filepath.Join("nan-metrics", "metrics.csv"), func(b []byte) []byte { return append(b, "nan,inf,-inf\n"...) })
	copyRun(t, "traced", "empty-summary", nil)
	rewrite(t, filepath.Join("empty-summary", "summary.json"), func([]byte) []byte { return []byte("{}") })
	copyRun(t, "traced", "null-summary", nil)
	rewrite(t, filepath.Join("null-summary", "summary.json"), func([]byte) []byte { return []byte("null") })
	copyRun(t, "traced", "flipped", nil)
	rewrite(t, filepath.Join("flipped", trace.StoreFile), func(b []byte) []byte {
		s, err := trace.ReadStore(bytes.NewReader(b), int64(len(b)), "flipped")
		if err != nil {
			t.Fatal(err)
		}
		b[s.Index.Blocks[0].Length/2] ^= 0x5a // inside the first block's compressed records
		return b
	})
	fig1a := filepath.Join(originDir, "scenarios/randomwalk/fig1a.yaml")
	if code, out, errOut := maple(t, "run", fig1a, "--trace", "--out", "empty-trace", "--set", "runs=1", "--set", "iterations=3", "--set", "output.plot=false"); code != 0 {
		t.Fatalf("traced gamma-mechanism run: exit %d\n%s%s", code, out, errOut)
	}

	const huge = "9223372036854775807"
	fig4 := filepath.Join(originDir, "scenarios/decentralized/fig4.yaml")
	fig3 := filepath.Join(originDir, "scenarios/randomwalk/fig3.yaml")
	cases := []adversarial{
		// Oversized or malformed scenarios.
		{args: []string{"run", "bomb-description.yaml"}, code: 2, words: []string{"bomb-description.yaml: scenario too large once its aliases are expanded"}},
		{args: []string{"validate", "bomb-label.yaml"}, code: 2, words: []string{"bomb-label.yaml: scenario too large once its aliases are expanded"}},
		{args: []string{"run", "bomb-sweep.yaml"}, code: 2, words: []string{"bomb-sweep.yaml: scenario too large once its aliases are expanded"}},
		{args: []string{"run", "--set", "description=" + flowBomb}, code: 2, words: []string{": description: scenario too large"}},
		{args: []string{"run", "two.yaml"}, code: 2, words: []string{"two.yaml:7: a second YAML document starts here"}},
		{args: []string{"run", "escape.yaml"}, code: 2, words: []string{`escape.yaml:1: name: names the run directory, so it must not contain / or \, got "../../escape"`}},
		{args: []string{"run", "newline.yaml"}, code: 2, words: []string{`newline.yaml:1: name: must be one line of text without control characters, got "two\nlines"`}},
		{args: []string{"validate", "tiny.yaml", "--set", `name=""`}, code: 2, words: []string{`name=""`, "name: must not be empty"}},
		{args: []string{"validate", "tiny.yaml", "--set", "output.group_by=data.bogus"}, code: 2, words: []string{"output.group_by: names data.bogus", "no curves or sweep"}},
		{args: []string{"validate", "python.yaml"}, code: 2, words: []string{"python.yaml:1: name:", "YAML tag !!python/object:os.system is not supported"}},
		{args: []string{"validate", "runs-string.yaml"}, code: 2, words: []string{"runs-string.yaml:2: runs:", `got the string "1"`}},
		{args: []string{"validate", "curve-set.yaml"}, code: 2, words: []string{"curve-set.yaml:9: bogus: unknown field"}},
		// Special files: refused by name, never read.
		{args: []string{"run", "/dev/zero"}, code: 2, words: []string{"/dev/zero: cannot read scenario: not a regular file: a character device"}},
		{args: []string{"run", "scenario-pipe.yaml"}, code: 2, words: []string{"scenario-pipe.yaml", "not a regular file: a named pipe"}},
		{args: []string{"validate", "scenario-pipe.yaml"}, code: 2, words: []string{"scenario-pipe.yaml", "not a regular file: a named pipe"}},
		{args: []string{"run", "svm-pipe.yaml"}, code: 2, words: []string{"svm-pipe.yaml:4: data.libsvm.file: cannot open", "pipe.svm: not a regular file: a named pipe"}},
		{args: []string{"validate", "avail-pipe.yaml"}, code: 2, words: []string{"avail-pipe.yaml:7: network.availability: cannot open", "avail.csv: not a regular file: a named pipe"}},
		{args: []string{"run", "agents-pipe.yaml"}, code: 2, words: []string{"data.directory.path: cannot open", "1.csv: not a regular file: a named pipe"}},
		{args: []string{"run", "agents-zero.yaml"}, code: 2, words: []string{"data.directory.path: cannot open", "1.csv: not a regular file: a character device"}},
		{args: []string{"run", "step-zero.yaml"}, code: 2, words: []string{"step-zero.yaml:7: network.step_time.file: cannot open /dev/zero: not a regular file: a character device"}},
		{args: []string{"trace", "pipe-trace"}, code: 2, words: []string{trace.StoreFile, "not a regular file: a named pipe"}},
		{args: []string{"report", "zero-metrics"}, code: 2, words: []string{"metrics.csv: not a regular file: a character device"}},
		{args: []string{"report", "zero-summary"}, code: 2, words: []string{"summary.json: not a regular file: a character device"}},
		// Plans beyond the limits: refused before anything is built.
		{args: []string{"run", "--set", "runs=" + huge}, code: 2, words: []string{"--set runs=" + huge + ": runs: the plan needs about"}},
		{args: []string{"run", "--set", "iterations=" + huge}, code: 2, words: []string{"--set iterations=" + huge + ": iterations: the plan needs about"}},
		{args: []string{"run", "--set", "data.dim=100000000"}, code: 2, words: []string{"--set data.dim=100000000: data.dim: the plan needs about"}},
		// 10⁷ agents of 1000 samples, every one training at once: about 260
		// GB of data and agents (drawn lazily, two of them would fit).
		{args: []string{"validate", "tiny.yaml", "--set", "data.agents=10000000", "--set", "data.samples=1000", "--set", "algorithm.fedavg.participants=10000000"}, code: 2, words: []string{"data.agents: the plan needs about 2"}},
		{args: []string{"validate", fig3, "--set", "algorithm.randomwalk.walks=1000000000"}, code: 2, words: []string{"algorithm.randomwalk.walks: the plan needs about", "of memory"}},
		{args: []string{"run", fig3, "--set", "algorithm.randomwalk.walks=1000000000"}, code: 2, words: []string{"algorithm.randomwalk.walks: the plan needs about"}},
		// 10⁹ agents would be drawn lazily; all of them training at once do not fit.
		{args: []string{"data", "tiny.yaml", "--set", "data.agents=1000000000", "--set", "algorithm.fedavg.participants=1000000000"}, code: 2, words: []string{"data.agents: the plan needs about", "of memory"}},
		// Compressed, Fig. 4's 20 runs trace to about 0.75 GB; 100 runs would not fit the 1 GB default.
		{args: []string{"run", fig4, "--trace", "--set", "runs=100"}, code: 2, words: []string{fig4 + ": trace: tracing would write about 4"}},
		{args: []string{"validate", fig4, "--set", "topology.min_degree=25"}, code: 2, words: []string{"topology.min_degree:", "lower the minimum degree"}},
		// Data.
		{args: []string{"validate", "svm.yaml"}, code: 2, words: []string{"svm.yaml:4: data.libsvm.file: missing LIBSVM file missing.svm: get it from https://"}},
		{args: []string{"run", "idx.yaml"}, code: 2, words: []string{"data.idx.images:", "signed.gz: scaling to [0, 1] needs unsigned-byte pixels"}},
		{args: []string{"data", "tiny.yaml", "--run", "5"}, code: 2, words: []string{"--run: the plan has no run 5", `curve "tiny" has 1 run(s)`}},
		{args: []string{"data", fig1a}, code: 2, words: []string{"algorithm.kind: maple data has nothing to show", "learns from no data"}},
		// Flags and commands.
		{args: []string{"run", "--workers", "-5"}, code: 2, words: []string{"--workers: must be a positive number of parallel runs"}},
		{args: []string{"run", "--trace-limit", "lots"}, code: 2, words: []string{`--trace-limit: expected a positive size such as 500MB or 20GB, or none, got "lots"`}},
		{args: []string{"run", "tiny.yaml", "--out", "full"}, code: 2, words: []string{"--out full: the directory is not empty (it holds summary.json)"}},
		{args: []string{"run", "tiny.yaml", "--force"}, code: 2, words: []string{"--force only applies with --out"}},
		{args: []string{"frobnicate"}, code: 2, words: []string{`unknown command "frobnicate"`}},
		{args: []string{"validate", "tiny.yaml", "python.yaml", "runs-string.yaml"}, code: 2, lines: 2,
			words: []string{"python.yaml:1: name:", "runs-string.yaml:2: runs:"},
			check: func(t *testing.T, stdout string) {
				if stdout != "tiny.yaml: ok (1 curves, 1 runs)\n" {
					t.Errorf("validate of three files: stdout %q, want the valid one reported", stdout)
				}
			}},
		// Traces.
		{args: []string{"trace", "traced", "--type", "Bogus"}, code: 2, words: []string{`traced: unknown message type "Bogus": the trace holds Done, GlobalModel, LocalModel, Start, Tick`}},
		{args: []string{"trace", "traced", "--actor", "agent/9"}, code: 2, words: []string{`traced: unknown actor "agent/9": the trace holds agent/`}},
		{args: []string{"trace", "traced", "--curve", "nope"}, code: 2, words: []string{`traced: unknown curve "nope": the trace holds "tiny"`}},
		{args: []string{"trace", "traced", "--run", "4"}, code: 2, words: []string{`traced: unknown run 4: the trace holds runs 0`}},
		{args: []string{"trace", "altered"}, code: 2, words: []string{"block 0", "the index says"}},
		{args: []string{"trace", "stats", "altered"}, code: 2, words: []string{"block 0", "the index says"}},
		{args: []string{"trace", "empty-trace"}, code: 2, words: []string{"empty-trace: the trace holds no records"}},
		{args: []string{"trace", "flipped"}, code: 2, words: []string{"flipped/trace.jsonl.zst: block 0 at byte 0 (", ") is corrupt: its zstd frame does not decompress"}},
		{args: []string{"trace", "stats", "flipped"}, code: 2, words: []string{"flipped/trace.jsonl.zst: block 0 at byte 0 (", ") is corrupt"}},
		// Reports of what maple did not write (issue 30).
		{args: []string{"report", "cut-metrics"}, code: 2, words: []string{"cut-metrics/metrics.csv:5: the row is cut short"}},
		{args: []string{"report", "nan-metrics"}, code: 2, words: []string{"nan-metrics/metrics.csv:6: 3 fields, header has"}},
		{args: []string{"report", "empty-summary"}, code: 2, words: []string{`empty-summary/summary.json: has no "scenario", "version", "engine", "seed" or "curves"`}},
		{args: []string{"report", "null-summary"}, code: 2, words: []string{"null-summary/summary.json: null, not a summary"}},
		{args: []string{"report", "traced", "-o", "/proc/nope.html"}, code: 2, words: []string{"maple: cannot write /proc/nope.html: "}},
		{args: []string{"report", "traced", "empty-summary"}, code: 2, words: []string{`empty-summary/summary.json: has no "scenario"`}},
		{args: []string{"trace", "stats", "empty-trace"}, code: 2, words: []string{"empty-trace: the trace holds no records"}},
		// Privacy arithmetic at the edge of the floating-point range.
		{args: []string{"privacy", "gamma", "--epsilon", "1", "--theta", "1e308"}, code: 0, check: checkGammaAtHugeTheta},
		// The cluster's inputs: the secret file is read as every input is
		// and must be private; addresses are checked as the flags are
		// parsed, before any wait; the worker's flags are input (status 2).
		{args: []string{"run", "tiny.yaml", "--cluster", "127.0.0.1:7070", "--cluster-secret-file", "/dev/zero"}, code: 2, words: []string{"--cluster-secret-file: open /dev/zero: not a regular file: a character device"}},
		{args: []string{"worker", "--secret-file", "/dev/zero"}, code: 2, words: []string{"--secret-file: open /dev/zero: not a regular file: a character device"}},
		{args: []string{"run", "tiny.yaml", "--cluster", "127.0.0.1:7070", "--cluster-secret-file", "secret-pipe"}, code: 2, words: []string{"--cluster-secret-file: open secret-pipe: not a regular file: a named pipe"}},
		{args: []string{"worker", "--secret-file", "secret-pipe"}, code: 2, words: []string{"--secret-file: open secret-pipe: not a regular file: a named pipe"}},
		{args: []string{"run", "tiny.yaml", "--cluster", "127.0.0.1:7070", "--cluster-secret-file", "secret-public"}, code: 2, words: []string{"--cluster-secret-file: secret-public: other users may read or change the secret (permissions 0644); make it private with chmod 600 secret-public"}},
		{args: []string{"worker", "--secret-file", "secret-public"}, code: 2, words: []string{"--secret-file: secret-public: other users may read or change the secret (permissions 0644)"}},
		{args: []string{"run", "tiny.yaml", "--cluster", "127.0.0.1:-5"}, code: 2, words: []string{`invalid argument "127.0.0.1:-5" for "--cluster" flag: expected a port number from 1 to 65535, got "-5"`}},
		{args: []string{"run", "tiny.yaml", "--cluster", "127.0.0.1:abc"}, code: 2, words: []string{`invalid argument "127.0.0.1:abc" for "--cluster" flag: expected a port number from 1 to 65535, got "abc"`}},
		{args: []string{"run", "tiny.yaml", "--cluster", "127.0.0.1:0"}, code: 2, words: []string{`invalid argument "127.0.0.1:0" for "--cluster" flag: expected a port number from 1 to 65535, got "0"`}},
		{args: []string{"run", "tiny.yaml", "--cluster", "127.0.0.1:99999"}, code: 2, words: []string{`invalid argument "127.0.0.1:99999" for "--cluster" flag: expected a port number from 1 to 65535, got "99999"`}},
		{args: []string{"run", "tiny.yaml", "--cluster", ""}, code: 2, words: []string{`invalid argument "" for "--cluster" flag: expected the workers' host:port, comma-separated, got nothing`}},
		{args: []string{"run", "tiny.yaml", "--cluster", "127.0.0.1:7070,127.0.0.1:7070"}, code: 2, words: []string{`"--cluster" flag: worker 127.0.0.1:7070 is listed twice`}},
		{args: []string{"worker", "--listen", "127.0.0.1:99999"}, code: 2, words: []string{`--listen: expected a port number from 0 to 65535, got "99999"`}},
		{args: []string{"worker", "--secret-file", "secret-private", "--cache", "/etc/passwd"}, code: 2, words: []string{"--cache: /etc/passwd is not a directory"}},
		// The accountants' inputs (issues 29 and 30): each refused by its flag.
		{args: []string{"privacy", "dp-fedavg", "--clients", "0", "--per-round", "1", "--rounds", "1", "--noise-multiplier", "1"}, code: 2, words: []string{"--clients: need K ≥ 1, got 0"}},
		{args: []string{"privacy", "dp-fedavg", "--clients", "10", "--per-round", "1", "--rounds", "1", "--noise-multiplier", "1", "--relation", "swap-two"}, code: 2, words: []string{"--relation:", `unknown neighbouring relation "swap-two" (expected add-remove or replace-one)`}},
		{args: []string{"privacy", "dp-fedavg", "--clients", "10", "--per-round", "1", "--rounds", "1", "--noise-multiplier", "1", "--relation", "replace-one", "--accountant", "rdp"}, code: 2, words: []string{"--accountant rdp:", "not poisson sampling with replace-one"}},
		{args: []string{"privacy", "dp-fedavg", "--clients", "10", "--per-round", "1", "--rounds", "1", "--noise-multiplier", "1", "--accountant", "moments"}, code: 2, words: []string{`--accountant: unknown accountant "moments"`}},
		{args: []string{"privacy", "dp-fedavg", "--clients", "10", "--per-round", "11", "--rounds", "1", "--noise-multiplier", "1"}, code: 2, words: []string{"--per-round: need 1 ≤ L ≤ K = 10, got 11"}},
		{args: []string{"privacy", "dp-fedavg", "--clients", "10", "--per-round", "1", "--rounds", "0", "--noise-multiplier", "1"}, code: 2, words: []string{"--rounds: need 1 ≤ R ≤ 10¹⁸, got 0"}},
		{args: []string{"privacy", "dp-fedavg", "--clients", "10", "--per-round", "1", "--rounds", "1", "--noise-multiplier", "1", "--interval", "0"}, code: 2, words: []string{"--interval: need 1e-6 ≤ Δ ≤ 1, got 0"}},
		{args: []string{"privacy", "dp-sgd", "--samples", "0", "--batch", "1", "--epochs", "1", "--noise-multiplier", "1"}, code: 2, words: []string{"--samples: need N ≥ 1, got 0"}},
		{args: []string{"privacy", "dp-sgd", "--samples", "10", "--batch", "1", "--epochs", "1e300", "--noise-multiplier", "1"}, code: 2, words: []string{"--epochs: 1e+300 epochs are more than 10¹⁸ steps"}},
		{args: []string{"privacy", "dp-sgd", "--samples", "10", "--batch", "1", "--epochs", "1", "--epsilon", "1", "--delta", "1e-300"}, code: 2, words: []string{"epsilon: 1 is out of reach at δ = 1e-300"}},
		{args: []string{"privacy", "dp-sgd", "--samples", "60000", "--batch", "256", "--noise-multiplier", "1e-300", "--epochs", "1"}, code: 0},
		// Issue 30: valid runs that silently produced nothing now say so.
		// A secure-aggregation grid coarser than the updates (4 bits for 5
		// clients: one level of 10), every update lost to it (clip 10³⁰⁰),
		// a step size that underflows, inputs clipped round after round;
		// and before the run, what the scenario makes certain: a grid
		// coarser than DP's clip allows any update to reach, a clip whose
		// step is subnormal, an IDX file whose header announces more than
		// fits (estimated from the header, before the gzip is inflated).
		{args: []string{"run", "tiny.yaml", "--out", filepath.Join(t.TempDir(), "bits4"), "--set", "algorithm.fedavg.participants=5", "--set", "privacy.secure_aggregation.bits=4"},
			code: 0, check: warns("warning: privacy.secure_aggregation: the grid step clip/L = 10 (clip 10, L = 1 for 4 bits and 5 clients per round) exceeds the clients' typical update")},
		{args: []string{"run", "tiny.yaml", "--out", filepath.Join(t.TempDir(), "clip"), "--set", "privacy.secure_aggregation.clip=1e300"},
			code: 0, check: warns("the inputs the server sums differ from the clients' by 1 times the updates' norm", "warning: the model never moved: its MSD kept its initial value")},
		{args: []string{"run", "tiny.yaml", "--out", filepath.Join(t.TempDir(), "step"), "--set", "algorithm.step_size=1e-320"},
			code: 0, check: warns("warning: the model never moved", "check algorithm.step_size = 1e-320")},
		{args: []string{"run", "tiny.yaml", "--out", filepath.Join(t.TempDir(), "range"), "--set", "algorithm.step_size=1e10", "--set", "privacy.secure_aggregation={}"},
			code: 0, check: warns("warning: privacy.secure_aggregation: 12 of the 12 coordinates the clients encoded (100 %) exceeded the clip 10")},
		{args: []string{"validate", "tiny.yaml", "--set", "privacy.secure_aggregation.bits=6", "--set", "privacy.dp={clip: 0.01}"}, code: 2,
			words: []string{"privacy.secure_aggregation.bits: 6 bits and clip 10 give a grid step γ = clip/L = 0.667 (L = 15 levels for n = 2 clients per round) above C/μ = 0.2"}},
		{args: []string{"validate", "tiny.yaml", "--set", "privacy.secure_aggregation={bits: 64, clip: 1e-300}"}, code: 2,
			words: []string{"privacy.secure_aggregation.clip: 1e-300 over", "below float64's normal range"}},
		{args: []string{"run", "big-idx.yaml", "--workers", "200", "--set", "runs=200"}, code: 2, words: []string{"big-idx.yaml", "the plan needs about 202 GB of memory (200 worker(s) × 1.01 GB per run"}},
		// A bug: status 3 and a request for a report.
		{args: []string{"test-panic"}, code: 3, lines: 2, words: []string{"internal error: test panic in a command", "this is a bug in maple"}},
	}
	for _, c := range cases {
		before := tree(t)
		code, out, errOut := maple(t, c.args...)
		lines := c.lines
		if lines == 0 && c.code != 0 {
			lines = 1
		}
		got := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if errOut == "" {
			got = nil
		}
		ok := code == c.code && len(got) == lines
		for _, l := range got {
			ok = ok && strings.HasPrefix(l, "maple: ")
		}
		for _, w := range c.words {
			ok = ok && strings.Contains(errOut, w)
		}
		if !ok {
			t.Errorf("%.100q: exit %d, stderr %q\nwant exit %d and %d line(s) \"maple: …\" with %q", c.args, code, errOut, c.code, lines, c.words)
		}
		if c.check != nil {
			c.check(t, out)
		}
		if after := tree(t); !slices.Equal(before, after) {
			t.Errorf("%.100q left behind %q", c.args, newPaths(before, after))
		}
	}
}

// withData returns the tiny scenario with its data section replaced.
func withData(data string) string {
	return strings.Replace(tiny, "data: {agents: 5, samples: 20}", "data: "+data, 1)
}

// tree lists every path under the working directory.
func tree(t *testing.T) []string {
	t.Helper()
	var paths []string
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		return nil
	})
	return paths
}

// newPaths lists the paths of after that before does not have.
func newPaths(before, after []string) []string {
	var out []string
	for _, p := range after {
		if !slices.Contains(before, p) {
			out = append(out, p)
		}
	}
	return out
}

// copyRun copies the run directory from to to, replacing the files of
// links by symbolic links to their targets (or leaving them out, for "").
func copyRun(t *testing.T, from, to string, links map[string]string) {
	t.Helper()
	if err := os.Mkdir(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(from)
	for _, e := range entries {
		dst := filepath.Join(to, e.Name())
		if target, ok := links[e.Name()]; ok {
			if target != "" {
				os.Symlink(target, dst)
			}
			continue
		}
		os.WriteFile(dst, read(t, filepath.Join(from, e.Name())), 0o644)
	}
}

// rewrite replaces the file at path by what change makes of its content.
func rewrite(t *testing.T, path string, change func([]byte) []byte) {
	t.Helper()
	if err := os.WriteFile(path, change(read(t, path)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// alterIndex rewrites the index of the trace store at path with one record
// more in its first block, the blocks untouched: what editing the index
// (decompress, edit, recompress) gives.
func alterIndex(t *testing.T, path string) {
	t.Helper()
	b := read(t, path)
	s, err := trace.ReadStore(bytes.NewReader(b), int64(len(b)), path)
	if err != nil {
		t.Fatal(err)
	}
	ix := s.Index
	ix.Blocks = slices.Clone(ix.Blocks)
	ix.Blocks[0].Records++
	js, err := json.Marshal(ix)
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	body := enc.EncodeAll(js, nil)
	off := binary.LittleEndian.Uint64(b[len(b)-8:]) // the trailer's last field: where the index starts
	trailer := b[len(b)-24 : len(b)-8]              // magic, size and "MAPLEIDX"
	out := append([]byte(nil), b[:off]...)
	out = binary.LittleEndian.AppendUint32(out, binary.LittleEndian.Uint32(b[off:]))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(body)))
	out = append(out, body...)
	out = append(out, trailer...)
	out = binary.LittleEndian.AppendUint64(out, off)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeSignedIDX writes 30 images of 3×3 signed bytes (element type 0x09)
// and their labels (unsigned bytes), gzip-compressed: signed.gz and
// labels.gz. Scaling to [0, 1] needs unsigned pixels.
func writeSignedIDX(t *testing.T) {
	t.Helper()
	var pixels, labels []byte
	for i := range 30 {
		labels = append(labels, byte(i%3))
		for p := range 9 {
			pixels = append(pixels, byte((i+p)%50))
		}
	}
	idxtest.Write(t, "signed.gz", 0x09, []int{30, 3, 3}, pixels)
	idxtest.Write(t, "labels.gz", idxtest.UnsignedBytes, []int{30}, labels)
}

// writeBigIDX writes big.gz, a gzip IDX file of a few dozen bytes whose
// header announces 10⁵ images of 100×100 unsigned bytes (10⁹ bytes) and
// whose data stop after 100 of them: what the estimate must read from the
// header, before inflating anything.
func writeBigIDX(t *testing.T) {
	t.Helper()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte{0, 0, idxtest.UnsignedBytes, 3})
	for _, d := range []uint32{100000, 100, 100} {
		binary.Write(z, binary.BigEndian, d)
	}
	z.Write(make([]byte, 100))
	z.Close()
	if err := os.WriteFile("big.gz", b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// warns returns the check of a run that succeeds with every one of the
// given words in what it printed: its warnings.
func warns(words ...string) func(t *testing.T, stdout string) {
	return func(t *testing.T, stdout string) {
		t.Helper()
		for _, w := range words {
			if !strings.Contains(stdout, w) {
				t.Errorf("the run printed %q, want %q", stdout, w)
			}
		}
	}
}

// checkGammaAtHugeTheta checks maple privacy gamma at θ = 10³⁰⁸: δ is not
// below the floor δ_∞ it prints (the floor is its limit as θ grows, and
// ε = 1 ≥ ln 2 makes it a lower bound), and the noise sd √(Lθ) is finite
// (1e154 and 1.41e154, which √(Lθ) computed as such overflowed to +Inf).
func checkGammaAtHugeTheta(t *testing.T, stdout string) {
	t.Helper()
	field := func(name string) string {
		for _, l := range strings.Split(stdout, "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == name {
				return strings.Join(f[1:], " ")
			}
		}
		t.Fatalf("no %s line in %q", name, stdout)
		return ""
	}
	number := func(s string) float64 {
		v, err := strconv.ParseFloat(strings.Fields(s)[0], 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return v
	}
	delta, floor := number(field("delta")), number(field("floor"))
	if !(delta >= floor) {
		t.Errorf("θ = 1e308: δ = %v below the floor %v", delta, floor)
	}
	sd := strings.Fields(field("noise"))
	if len(sd) < 6 || sd[0] != "sd" {
		t.Fatalf("noise line %q", field("noise"))
	}
	for _, s := range []string{sd[1], sd[5]} {
		if v, err := strconv.ParseFloat(s, 64); err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Errorf("θ = 1e308: noise sd %q is not a finite number", s)
		}
	}
}
