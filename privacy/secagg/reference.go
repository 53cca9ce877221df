package secagg

import (
	"fmt"
	"math/rand/v2"
)

// Dropout reports whether client u drops out of a round before sending its
// message of phase p. A client that drops stays out for the rest of the
// round.
type Dropout func(p Phase, u int) bool

// Reference runs one round of the protocol without actors: the clients send
// each phase's messages in ascending id, the server closes the phase when the
// last surviving client has answered (the deadline of a real run), and its
// messages are delivered in ascending recipient id. stream(u) is client u's
// random stream, stream(Server) the server's. It returns the server's
// result, the round's traffic and the survivors of each phase; a
// *ThresholdError (or a protocol error) ends the round.
func Reference(cfg Config, inputs [][]float64, drop Dropout, stream func(id int) *rand.Rand) (*Result, *Costs, [PhaseCount][]int, error) {
	var survivors [PhaseCount][]int
	if len(inputs) != cfg.Clients {
		return nil, nil, survivors, fmt.Errorf("secagg: %d inputs for %d clients", len(inputs), cfg.Clients)
	}
	server, err := NewServer(cfg, stream(Server))
	if err != nil {
		return nil, nil, survivors, err
	}
	costs := NewCosts(cfg.Clients)
	clients := make([]*Client, cfg.Clients)
	gone := make([]bool, cfg.Clients)
	inbox := make([]Message, cfg.Clients) // the server's message to each client
	for u := range clients {
		if clients[u], err = NewClient(cfg, u, inputs[u], stream(u)); err != nil {
			return nil, nil, survivors, err
		}
	}
	finish := func() [PhaseCount][]int {
		for _, p := range Phases() {
			survivors[p] = server.Survivors(p)
		}
		return survivors
	}
	for _, p := range Phases() {
		var replies []Message
		for u, c := range clients {
			if gone[u] || drop != nil && drop(p, u) {
				gone[u] = true
				continue
			}
			var m Message
			if p == AdvertiseKeys {
				m = c.Start()
			} else if inbox[u] == nil {
				continue // the server did not include u in this phase
			} else if m, err = c.Step(inbox[u]); err != nil {
				return nil, costs, finish(), err
			}
			costs.Record(m)
			out, err := server.Step(m)
			if err != nil {
				return nil, costs, finish(), err
			}
			replies = append(replies, out...)
		}
		if server.Phase() == p { // some client dropped: the deadline closes the phase
			out, err := server.Close()
			if err != nil {
				return nil, costs, finish(), err
			}
			replies = append(replies, out...)
		}
		clear(inbox)
		for _, m := range replies {
			costs.Record(m)
			inbox[m.Receiver()] = m
		}
	}
	res, _ := server.Result()
	return res, costs, finish(), nil
}
