package fedavg

import "fmt"

// Behaviours that keep state between rounds, and behaviours that send more
// than the model and the reply (docs/writing-behaviours.md, "State").
//
// A Rule or a Client is a value that keeps nothing between rounds, one value
// serving every server or agent. A behaviour that remembers — a server's
// momentum or moments, a client's control variate or residual — declares
// its state by its parameters' constructor instead: a StatefulRule's NewRule
// returns the rule of one server, a StatefulClient's NewClient the client of
// one agent, each with its state fresh. Both engines call it once per server
// and once per agent in each Monte-Carlo run, when the server's or the
// agent's state machine is built (NewServer, NewAgent): the P servers of a
// graph federated learning run each have their own, and an agent's client
// lives as long as the agent — a Pool that parks the agent between its tasks
// keeps its client with it (Pool.Park), so its state survives to its next
// round on every engine.

// StatefulRule is the parameters of a server behaviour that keeps state
// between rounds. NewRule returns the rule of one server for one run of
// cfg, for models of dimension dim, its state fresh; cfg is the run's
// configuration, read-only (the number of agents K, say).
type StatefulRule interface {
	NewRule(cfg *Config, dim int) Rule
}

// StatefulClient is the parameters of a client behaviour that keeps state
// between an agent's rounds. NewClient returns the client of one agent for
// one run of cfg, for models of dimension dim, its state fresh; cfg is
// read-only.
type StatefulClient interface {
	NewClient(cfg *Config, dim int) Client
}

// Broadcaster is a rule whose server sends every participant of a round a
// vector besides the model — SCAFFOLD's server control variate c. Broadcast
// returns it, read at the start of each round (Server.Side); the engines
// send it with the model (msg.GlobalModel.side), and the participant's
// client reads it as Local.FromServer.
type Broadcaster interface {
	Broadcast() []float64
}

// SideRule is a rule whose clients reply with a vector besides their model or
// update — SCAFFOLD's control variate change Δc_i, FedNova's number of local
// steps, q-FedAvg's local loss — which the client writes in
// Local.ToServer and the engines send with the reply
// (msg.LocalModel.side, msg.LocalUpdate.side). CombineSides is its
// combination: Rule.Combine given each reply's side vector, sides[i] that
// of replies[i] — nil for the stand-in of a missing reply that a round
// closed early pads with, and for a reply whose client wrote none (an
// adversary that does not train). A SideRule's server needs a client that writes them: its
// registration names that client (actors/fedavg.Server.Client).
type SideRule interface {
	Rule
	CombineSides(model []float64, replies, sides [][]float64, share Share, mu float64)
}

// newRule returns the rule of one server: a fresh instance of the stateful
// rule, or the configuration's stateless rule (the mean when none is set).
func (c *Config) newRule(dim int) Rule {
	if c.StatefulRule != nil {
		return c.StatefulRule.NewRule(c, dim)
	}
	return c.rule()
}

// newClient returns the client of one agent: a fresh instance of the
// stateful client, or the configuration's stateless client (local SGD when
// none is set).
func (c *Config) newClient(dim int) Client {
	if c.StatefulClient != nil {
		return c.StatefulClient.NewClient(c, dim)
	}
	return c.client()
}

// ServerBehaviour returns the parameters of the server's rule, stateful or
// not (nil: the mean).
func (c *Config) ServerBehaviour() any {
	if c.StatefulRule != nil {
		return c.StatefulRule
	}
	return c.Rule
}

// ClientBehaviour returns the parameters of the agents' client, stateful or
// not (nil: local SGD).
func (c *Config) ClientBehaviour() any {
	if c.StatefulClient != nil {
		return c.StatefulClient
	}
	return c.Client
}

// meanRule reports whether the server combines by the plain mean of
// eq. 1.31, which secure aggregation and DP-FedAvg's noisy sum need.
func (c *Config) meanRule() bool {
	_, mean := c.ServerBehaviour().(MeanRule)
	return c.ServerBehaviour() == nil || mean
}

// SetClient makes b the agents' client: a Client, or a StatefulClient
// whose every agent gets its own. It fails for any other value.
func (c *Config) SetClient(b any) error {
	c.Client, c.StatefulClient = nil, nil
	switch b := b.(type) {
	case StatefulClient:
		c.StatefulClient = b
	case Client:
		c.Client = b
	default:
		return fmt.Errorf("%T is neither a fedavg.Client nor a fedavg.StatefulClient", b)
	}
	return nil
}

// SetRule makes b the server's rule: a Rule, or a StatefulRule whose every
// server gets its own. It fails for any other value.
func (c *Config) SetRule(b any) error {
	c.Rule, c.StatefulRule = nil, nil
	switch b := b.(type) {
	case StatefulRule:
		c.StatefulRule = b
	case Rule:
		c.Rule = b
	default:
		return fmt.Errorf("%T is neither a fedavg.Rule nor a fedavg.StatefulRule", b)
	}
	return nil
}

// validateState reports a configuration that sets a behaviour twice.
func (c *Config) validateState() error {
	switch {
	case c.Rule != nil && c.StatefulRule != nil:
		return fmt.Errorf("server: both a rule (%T) and a stateful rule (%T) are set", c.Rule, c.StatefulRule)
	case c.Client != nil && c.StatefulClient != nil:
		return fmt.Errorf("client: both a client (%T) and a stateful client (%T) are set", c.Client, c.StatefulClient)
	}
	return nil
}
