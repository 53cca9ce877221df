package run

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"maple/algorithms/data/idxtest"
	"maple/scenarios"
)

// A plan estimated beyond an hour is said before it runs, at warning
// level, with the curve and the field that drive it; one of a few seconds
// is not. The generic estimate (the test family's) is 4·agents·samples·dim
// operations and 4·agents messages per iteration: 4·10·100·100 = 4·10⁵
// and 40, so 10⁷ iterations are 4000 s at 1 Gflop/s and 400 s at 1 µs a
// message, 73.3 minutes; 10 iterations are a few milliseconds.
func TestLongPlanIsSaidBeforeItRuns(t *testing.T) {
	const src = "name: long\ndata: {agents: 10, samples: 100, dim: 100}\nalgorithm: {kind: test-msd-only}\n"
	for _, c := range []struct {
		iterations string
		said       bool
	}{{"iterations=10000000", true}, {"iterations=10", false}} {
		core, logs := observer.New(zapcore.WarnLevel)
		opts := Options{Workers: 1, Logger: zap.New(core)}
		opts.defaults()
		warnLong(plan(t, src, c.iterations), &opts)
		entries := logs.All()
		if !c.said {
			if len(entries) != 0 {
				t.Errorf("%s: %d warnings, want none: %v", c.iterations, len(entries), entries)
			}
			continue
		}
		if len(entries) != 1 || !strings.Contains(entries[0].Message, "the plan is estimated to run for about 73.3 minutes on 1 worker(s)") ||
			!strings.Contains(entries[0].Message, `per run of curve "long", whose iterations drives it`) {
			t.Errorf("%s: warnings %v, want the estimate (about 73.3 minutes), the curve and iterations", c.iterations, entries)
		}
	}
}

// The memory of an IDX file is estimated from its header, before anything
// is decompressed: a gzip file of a few dozen bytes announcing 10⁵ images
// of 100×100 pixels (10⁹ bytes) is refused under a limit of 500 MB by the
// memory check, naming its size, not read until its truncation is found
// (which the estimate from the compressed size, twice a few dozen bytes,
// let through).
func TestIDXMemoryComesFromTheHeader(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte{0, 0, idxtest.UnsignedBytes, 3})
	for _, d := range []uint32{100000, 100, 100} {
		binary.Write(z, binary.BigEndian, d)
	}
	z.Write(make([]byte, 10)) // the first 10 of 10⁹ pixels
	z.Close()
	if err := os.WriteFile(filepath.Join(dir, "big.gz"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, lb := idxtest.Images(30)
	idxtest.Write(t, filepath.Join(dir, "labels.gz"), idxtest.UnsignedBytes, []int{30}, lb)
	src := "name: big\ndata: {kind: idx, agents: 3, samples: 10, test_samples: 5, idx: {images: big.gz, labels: labels.gz}}\n" +
		"loss: {kind: softmax, classes: 3, optimum: none}\nalgorithm: {kind: test-msd-only}\n"
	p, err := scenarios.Parse([]byte(src), filepath.Join(dir, "s.yaml"), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = CheckWith(p, Options{Workers: 1, MemoryLimit: 500e6})
	if !scenarios.IsUserError(err) || !strings.Contains(err.Error(), "the plan needs about 1") || !strings.Contains(err.Error(), "GB of memory") {
		t.Errorf("CheckWith: %v, want the memory check's refusal (about 1 GB)", err)
	}
}
