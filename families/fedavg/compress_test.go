package fedavg

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"maple/algorithms/compress"
	"maple/algorithms/fedavg"
	"maple/scenarios"
	"maple/scenarios/run"
)

// Compression that cannot compose is refused by the loader as a user error
// of one line naming the field: with secure aggregation, DP-FedAvg and the
// audits, signSGD with a server other than the majority vote; the bytes
// column under secure aggregation; a parameter out of its range.
func TestCompressionRefusals(t *testing.T) {
	t.Parallel()
	secure := "privacy.secure_aggregation={protocol: secagg+, clip: 2, bits: 16}"
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"algorithm.fedavg.compress={kind: top-k, k: 1}", secure}, "algorithm.fedavg.compress: secure aggregation sums the clients' dense vectors"},
		{[]string{"algorithm.fedavg.compress=qsgd", "privacy.dp={clip: 0.5}"}, "algorithm.fedavg.compress: DP-FedAvg clips each dense update"},
		{[]string{"runs=4", "algorithm.fedavg.compress=qsgd", "privacy.scheme=update-noise", "privacy.variance=0.01", "privacy.audit={canary: dataset, view: wire}"},
			"algorithm.fedavg.compress: privacy.audit watches agent 0's dense reply"},
		{[]string{"algorithm.fedavg.compress=signsgd"}, "algorithm.fedavg.compress: signSGD's signs are combined by majority vote (Bernstein et al. 2018), server majority"},
		{[]string{"algorithm.fedavg.compress=signsgd", "algorithm.fedavg.server=median"}, "algorithm.fedavg.compress: signSGD's signs are combined by majority vote"},
		{[]string{"algorithm.fedavg.uplink_bytes=true", secure}, "algorithm.fedavg.uplink_bytes: under secure aggregation the agents send masked shares"},
		{[]string{"algorithm.fedavg.compress={kind: top-k, k: 0}"}, "algorithm.fedavg.compress.k: must lie in [1, inf)"},
		{[]string{"algorithm.fedavg.compress={kind: qsgd, levels: 2000000}"}, "algorithm.fedavg.compress.levels: must lie in [1, 1048576]"},
	} {
		_, err := scenarios.Parse([]byte(fedavgTiny), "t.yaml", t.TempDir(), c.sets)
		if err == nil || !strings.Contains(err.Error(), c.want) || !scenarios.IsUserError(err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--set %v: %v, want one line with %q", c.sets, err, c.want)
		}
	}
	for _, set := range []string{"algorithm.fedavg.compress=signsgd", "algorithm.fedavg.server=majority"} {
		if _, err := scenarios.Parse([]byte(fedavgTiny), "t.yaml", t.TempDir(), []string{set, "algorithm.fedavg.server=majority"}); err != nil {
			t.Errorf("--set %s with the majority vote: %v", set, err)
		}
	}
}

// The bytes column counts the replies the agents sent: signSGD's replies
// on a model of 3 coordinates (dim 2 and the bias) are one byte of signs,
// 3 bytes with the field's tag and length, and 2 more for the slot of each
// but a round's first agent, so that iteration i has sent i times the sizes
// of 3 slots — on both engines, under update-noise too (compression is
// post-processing of the noisy reply).
func TestUplinkBytesColumn(t *testing.T) {
	t.Parallel()
	perRound := 0
	for slot := range int32(3) {
		perRound += fedavg.CompressedReplyWireSize(slot, &compress.Compressed{Packed: []byte{0}}, 0)
	}
	if perRound != 3+5+5 {
		t.Fatalf("a round's replies: %d bytes", perRound)
	}
	for _, e := range []run.Engine{run.Actors, run.Reference} {
		p, err := scenarios.Parse([]byte(fedavgTiny), "t.yaml", t.TempDir(), []string{"algorithm.fedavg.compress=signsgd",
			"algorithm.fedavg.server=majority", "algorithm.fedavg.uplink_bytes=true", "privacy.scheme=update-noise", "privacy.variance=0.01"})
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := run.Execute(p, dir, run.Options{Engine: e, Workers: 1}); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, "metrics.csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		col := slices.Index(rows[0], "uplink_bytes")
		if col < 0 || len(rows) != 10 {
			t.Fatalf("%s: metrics.csv: %v", e, rows)
		}
		for _, f := range rows[1:] {
			it, _ := strconv.Atoi(f[1])
			if got, want := f[col], strconv.Itoa(it*perRound); got != want {
				t.Errorf("%s, iteration %d: %s bytes sent, want %s", e, it, got, want)
			}
		}
	}
}
