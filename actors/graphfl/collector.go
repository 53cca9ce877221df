package graphfl

import (
	"maple/actors"
	"maple/privacy/pairmask"
)

// Collector is an actors.Observer that reassembles what the servers of one
// run report into network-wide views: once every server has reported its
// aggregate, draw or model of a round it calls Aggregates, Draws or Models
// with the P×M rows, and it keeps the servers' local graph-homomorphic set-up
// counts. All reports of a round arrive before any of the next (the
// scheduler's barrier), so a view is complete when P reports have arrived.
type Collector struct {
	// Aggregates, if set, receives Ψ[p] = ψ_{p,i} of round i.
	Aggregates func(round int, Psi [][]float64)
	// Draws, if set, receives G[p] = g_{p,i} of round i.
	Draws func(round int, G [][]float64)
	// Models, if set, receives W[p] = w_{p,i} after round i.
	Models func(round int, W [][]float64)
	// Setup[p] holds the set-up messages server p sent.
	Setup []pairmask.SetupCounts
	// First is the ID of server 0: the scheduler's ID + 1 (see Spawn), so 1
	// when the run hosts nothing else.
	First actors.ID

	psi, g, w *actors.View
}

// NewCollector returns a collector for servers servers of dimension dim on a
// run that hosts nothing but the scheduler, the servers and their clients
// (First = 1).
func NewCollector(servers, dim int) *Collector {
	return &Collector{First: 1, Setup: make([]pairmask.SetupCounts, servers),
		psi: actors.NewView(servers, dim), g: actors.NewView(servers, dim), w: actors.NewView(servers, dim)}
}

// Observe implements actors.Observer. Reports from other actors (clients,
// the scheduler), and keys it does not know, are ignored.
func (c *Collector) Observe(from actors.ID, round int, key string, v []float64) {
	p := int(from - c.First)
	if p < 0 || p >= len(c.Setup) {
		return
	}
	switch key {
	case KeyAggregate:
		if c.psi.Add(p, round, v) && c.Aggregates != nil {
			c.Aggregates(round, c.psi.Rows)
		}
	case KeyDraw:
		if c.g.Add(p, round, v) && c.Draws != nil {
			c.Draws(round, c.g.Rows)
		}
	case KeyModel:
		if c.w.Add(p, round, v) && c.Models != nil {
			c.Models(round, c.w.Rows)
		}
	case KeySetup:
		if len(v) == 3 {
			c.Setup[p] = pairmask.SetupCounts{Roles: int(v[0]), Keys: int(v[1]), Relays: int(v[2])}
		}
	}
}
