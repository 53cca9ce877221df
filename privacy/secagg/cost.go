package secagg

import "maple/privacy/fixedpoint"

// Count is a number of messages and their bytes.
type Count struct {
	Messages, Bytes int
}

// Add returns c + d.
func (c Count) Add(d Count) Count { return Count{c.Messages + d.Messages, c.Bytes + d.Bytes} }

// Traffic is what one party sent and received.
type Traffic struct {
	Sent, Received Count
}

// Costs tallies a round's traffic per phase, per client and for the server,
// from the messages the state machines return: Record every message as it
// is sent. Sizes are the payload sizes of Message.Size.
type Costs struct {
	clients [PhaseCount][]Traffic
	server  [PhaseCount]Traffic
}

// NewCosts returns empty costs for n clients.
func NewCosts(n int) *Costs {
	c := &Costs{}
	for p := range c.clients {
		c.clients[p] = make([]Traffic, n)
	}
	return c
}

// Record counts m.
func (c *Costs) Record(m Message) {
	p, one := m.Phase(), Count{1, m.Size()}
	if u := m.Sender(); u == Server {
		c.server[p].Sent = c.server[p].Sent.Add(one)
	} else {
		c.clients[p][u].Sent = c.clients[p][u].Sent.Add(one)
	}
	if v := m.Receiver(); v == Server {
		c.server[p].Received = c.server[p].Received.Add(one)
	} else {
		c.clients[p][v].Received = c.clients[p][v].Received.Add(one)
	}
}

// Client returns client u's traffic in phase p.
func (c *Costs) Client(p Phase, u int) Traffic { return c.clients[p][u] }

// Server returns the server's traffic in phase p.
func (c *Costs) Server(p Phase) Traffic { return c.server[p] }

// Expected is the closed-form traffic of a round without dropouts on a
// regular graph: every client has k neighbours (k = n − 1 for SecAgg).
type Expected struct {
	// Client is one client's traffic per phase.
	Client [PhaseCount]Traffic
	// Server is the server's traffic per phase.
	Server [PhaseCount]Traffic
}

// ExpectedCosts returns the traffic of a round of cfg in which every client
// survives, for a k-regular graph (k even, or n even, or k = n − 1). With
// h = k + 1 share holders per client, m coordinates of b bits, and the sizes
// of Message.Size:
//
//	advertise keys:  client sends 64 B, receives 68·h B;
//	share keys:      client sends and receives k·(4 + BoxBytes) B;
//	masked input:    client sends ⌈b·m/8⌉ B, receives 4·h B;
//	unmasking:       client sends h·(4 + ShareBytes) B (a self-mask share
//	                 of every holder), receives nothing;
//
// one message each way per client and phase (none back in unmasking), and
// the server's traffic is n times the clients' with the directions swapped.
// Per client that is O(k + m), per server O(n·k + n·m): O(n² + n·m) for
// SecAgg, O(n log n + n·m) for SecAgg+ with k = O(log n) (Bell et al.
// 2020, Table 1).
func ExpectedCosts(cfg Config) Expected {
	n, k, h := cfg.Clients, cfg.Neighbours, cfg.Neighbours+1
	client := [PhaseCount]Traffic{
		AdvertiseKeys:         {Sent: Count{1, 2 * KeyBytes}, Received: Count{1, h * (idBytes + 2*KeyBytes)}},
		ShareKeys:             {Sent: Count{1, k * (idBytes + BoxBytes)}, Received: Count{1, k * (idBytes + BoxBytes)}},
		MaskedInputCollection: {Sent: Count{1, fixedpoint.PackedBytes(cfg.Encoder.Bits(), cfg.Dim)}, Received: Count{1, idBytes * h}},
		Unmasking:             {Sent: Count{1, h * (idBytes + ShareBytes)}},
	}
	var e Expected
	e.Client = client
	for p, t := range client {
		e.Server[p] = Traffic{
			Sent:     Count{n * t.Received.Messages, n * t.Received.Bytes},
			Received: Count{n * t.Sent.Messages, n * t.Sent.Bytes},
		}
	}
	return e
}
