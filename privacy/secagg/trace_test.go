package secagg

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden message traces in testdata")

// traceRound drives a round message by message like Reference and returns a
// readable line per message: phase, route, type, size and, for lists, the
// ids they carry.
func traceRound(t *testing.T, cfg Config, x [][]float64, drop Dropout, seed uint64) string {
	t.Helper()
	var b strings.Builder
	line := func(m Message) {
		name := func(id int) string {
			if id == Server {
				return "server"
			}
			return fmt.Sprintf("client %d", id)
		}
		var ids []int
		switch m := m.(type) {
		case *KeyListMsg:
			for _, k := range m.Keys {
				ids = append(ids, k.ID)
			}
		case *SharedKeysMsg:
			for _, x := range m.Boxes {
				ids = append(ids, x.Peer)
			}
		case *ForwardedKeysMsg:
			for _, x := range m.Boxes {
				ids = append(ids, x.Peer)
			}
		case *SurvivorsMsg:
			ids = m.IDs
		case *UnmaskMsg:
			for _, s := range m.SelfMask {
				ids = append(ids, s.Owner)
			}
			for _, s := range m.MaskKey {
				ids = append(ids, -1-s.Owner) // mask-key shares as −1−owner
			}
		}
		fmt.Fprintf(&b, "%-24v %-8s → %-8s %-18T %5d B %v\n", m.Phase(), name(m.Sender()), name(m.Receiver()), m, m.Size(), ids)
	}
	server, err := NewServer(cfg, streams(seed)(Server))
	if err != nil {
		t.Fatal(err)
	}
	clients := make([]*Client, cfg.Clients)
	inbox := make([]Message, cfg.Clients)
	gone := make([]bool, cfg.Clients)
	for u := range clients {
		if clients[u], err = NewClient(cfg, u, x[u], streams(seed)(u)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range Phases() {
		var replies []Message
		for u, c := range clients {
			if gone[u] || drop(p, u) {
				if !gone[u] {
					fmt.Fprintf(&b, "%-24v client %d drops out\n", p, u)
				}
				gone[u] = true
				continue
			}
			var m Message
			if p == AdvertiseKeys {
				m = c.Start()
			} else if inbox[u] == nil {
				continue
			} else if m, err = c.Step(inbox[u]); err != nil {
				t.Fatal(err)
			}
			line(m)
			out, err := server.Step(m)
			if err != nil {
				t.Fatal(err)
			}
			replies = append(replies, out...)
		}
		if server.Phase() == p {
			fmt.Fprintf(&b, "%-24v server closes the phase at its deadline\n", p)
			out, err := server.Close()
			if err != nil {
				t.Fatal(err)
			}
			replies = append(replies, out...)
		}
		clear(inbox)
		for _, m := range replies {
			line(m)
			inbox[m.Receiver()] = m
		}
	}
	res, _ := server.Result()
	fmt.Fprintf(&b, "result: inputs of %v, decoded sum", res.Included)
	for _, v := range res.Sum {
		fmt.Fprintf(&b, " %d", cfg.Encoder.Signed(v))
	}
	b.WriteString("\n")
	return b.String()
}

// Golden message traces (etcd-io/raft style): a SecAgg round of 4 clients,
// t = 3, in which client 3 drops out before sending its masked input, and
// a SecAgg+ round of 6 clients with k = 2, t = 2, in which client 1 drops
// out while unmasking. Rewrite with
// go test ./privacy/secagg -run Golden -args -update.
func TestGoldenTraces(t *testing.T) {
	for _, tc := range []struct {
		file     string
		n, k, th int
		drop     Dropout
	}{
		{"secagg-dropout.txt", 4, 3, 3, func(p Phase, u int) bool { return p == MaskedInputCollection && u == 3 }},
		{"secaggplus-dropout.txt", 6, 2, 2, func(p Phase, u int) bool { return p == Unmasking && u == 1 }},
	} {
		cfg := config(t, tc.n, tc.k, tc.th, 3, 16)
		x := [][]float64{{1, -1, 0.5}, {0.25, 2, -3}, {-0.5, 0, 1}, {1.5, 1.5, 1.5}, {0, 0, 0}, {-2, 1, 0.125}}[:tc.n]
		got := traceRound(t, cfg, x, tc.drop, 21)
		path := filepath.Join("testdata", tc.file)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s differs:\n%s", path, got)
		}
	}
}
