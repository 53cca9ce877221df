package secagg

import (
	"fmt"
	"testing"
)

// BenchmarkRound runs one whole round of the pure state machines without
// dropouts: 1000 clients and a 10000-coordinate input (32-bit fixed point,
// t = 501), for SecAgg and for SecAgg+ with k = 20 and t = 11. One
// iteration takes minutes for SecAgg (about 2·10⁶ X25519 agreements and
// 10¹⁰ PRG words): run it with -benchtime 1x and a longer timeout.
//
//	go test -run XXX -bench Round -benchtime 1x -timeout 60m ./privacy/secagg/
func BenchmarkRound(b *testing.B) {
	const n, dim = 1000, 10000
	for _, tc := range []struct {
		name  string
		k, th int
	}{{"SecAgg", n - 1, n/2 + 1}, {"SecAgg+k20", 20, 11}} {
		b.Run(fmt.Sprintf("%s/n=%d/m=%d", tc.name, n, dim), func(b *testing.B) {
			cfg := config(b, n, tc.k, tc.th, dim, 32)
			x := inputs(n, dim, 1)
			for b.Loop() {
				if _, _, _, err := Reference(cfg, x, nil, streams(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
