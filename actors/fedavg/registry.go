package fedavg

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/algorithms/fedavg"
	"maple/internal/params"
)

// The behaviour slots of FedAvg (package internal/params): scenario files
// select a behaviour of each with algorithm.fedavg.server, .client,
// .collect and .adversary.
const (
	ServerSlot    = "fedavg.server"
	ClientSlot    = "fedavg.client"
	CollectSlot   = "fedavg.collect"
	AdversarySlot = "fedavg.adversary"
)

// The registries of the slots whose behaviours are pure rules: a client is
// a fedavg.Client (its local objective and solver) or, if it keeps state
// between an agent's rounds, a fedavg.StatefulClient (ConfigureClient), a
// collection policy a fedavg.Collector, an adversary a fedavg.Adversary.
// Each is registered as the struct of its parameters at their defaults,
// which implements the rule; both engines run the value the scenario's
// parameters make of it (Registry.New, set in the run's fedavg.Config), so
// a behaviour registered here runs alike on both.
var (
	Clients     = params.Registry[any]{Slot: ClientSlot}
	Collects    = params.Registry[fedavg.Collector]{Slot: CollectSlot}
	Adversaries = params.Registry[fedavg.Adversary]{Slot: AdversarySlot}
)

// Server declares a server behaviour (RegisterServer).
type Server struct {
	// Name selects the behaviour in a scenario (algorithm.fedavg.server)
	// and Doc says what it does, in one line.
	Name, Doc string
	// Params holds the behaviour's parameters at their defaults, as a
	// struct whose fields declare them (internal/params.Struct); nil when
	// it has none. The scenario's values are set in a copy, which is what
	// both engines run:
	//   - a fedavg.Rule is the combination rule of a synchronous server,
	//     which the actor server and the reference apply alike (Behaviour
	//     is then nil);
	//   - a fedavg.StatefulRule is the same for a rule that keeps state
	//     between rounds: its NewRule gives every server of every run its
	//     own rule, state fresh;
	//   - a Configurer sets what else both engines run (the asynchronous
	//     servers set Config.Async), and Behaviour is the actor behaviour
	//     that the reference mirrors.
	Params any
	// Behaviour, if set, builds the actor behaviour from the shared parts
	// (whose Params hold the copy); nil for the synchronous server, which
	// combines each round's replies with Config.Rule.
	Behaviour func(parts ServerParts) actors.Behaviour
	// ActorOnly declares a behaviour that exists only in the actor engine
	// (one that changes the protocol without a Configurer the reference
	// follows): the reference engine refuses it, naming it.
	ActorOnly bool
	// Client names the client behaviour the server needs, for a rule whose
	// clients must send it more than their reply (a fedavg.SideRule, such
	// as SCAFFOLD's): a scenario that pairs the server with another client
	// is refused at its client field (CheckPair). Empty: any client.
	Client string
}

// Configurer is implemented by the parameters of a server that sets more of
// the run's configuration than its combination rule: Configure writes into
// cfg what both engines then run (the asynchronous servers set cfg.Async).
type Configurer interface {
	Configure(cfg *fedavg.Config)
}

var servers = map[string]Server{}

// RegisterServer makes a server behaviour available to scenario files under
// s.Name (algorithm.fedavg.server), with its parameters. Call it from an
// init function. A name registered twice, parameters the scenario loader
// cannot declare, and a behaviour neither actor-only nor runnable by the
// reference (a Params that is no fedavg.Rule without a Behaviour, or a
// Behaviour without a Configurer) panic: they are programming errors.
func RegisterServer(s Server) {
	_, rule := s.Params.(fedavg.Rule)
	if _, stateful := s.Params.(fedavg.StatefulRule); stateful {
		rule = true
	}
	_, conf := s.Params.(Configurer)
	switch {
	case s.Behaviour == nil && !rule:
		panic(fmt.Sprintf("fedavg: server %s has neither a combination rule (Params implementing fedavg.Rule or fedavg.StatefulRule) nor a Behaviour", s.Name))
	case s.Behaviour != nil && !s.ActorOnly && !conf:
		panic(fmt.Sprintf("fedavg: server %s has its own Behaviour: its Params must be a Configurer the reference follows, or it must be ActorOnly", s.Name))
	}
	params.Register(params.Spec{Slot: ServerSlot, Name: s.Name, Doc: s.Doc, Value: s.Params})
	servers[s.Name] = s
}

// LookupServer returns the server behaviour registered under name.
func LookupServer(name string) (Server, bool) {
	s, ok := servers[name]
	return s, ok
}

// ServerNames lists the registered server behaviours, sorted.
func ServerNames() []string { return params.Names(ServerSlot) }

// ReferenceServers lists the server behaviours the reference engine runs:
// those not declared ActorOnly, sorted.
func ReferenceServers() []string {
	var names []string
	for _, n := range ServerNames() {
		if !servers[n].ActorOnly {
			names = append(names, n)
		}
	}
	return names
}

// RuleServers lists the server behaviours that are combination rules (no
// actor behaviour of their own) whose clients send only their reply (no
// client of their own), sorted: those a synchronous FedAvg server of
// another family, such as a graph FL server, can apply.
func RuleServers() []string {
	var names []string
	for _, n := range ServerNames() {
		if servers[n].Behaviour == nil && servers[n].Client == "" {
			names = append(names, n)
		}
	}
	return names
}

// ConfigureServer writes into cfg what both engines run of the server
// behaviour name with the parameter values v (nil: its defaults): its
// combination rule (cfg.Rule, or cfg.StatefulRule for one that keeps state)
// or what its Configurer sets (cfg.Async), the other clearing to the
// synchronous mean. It returns the parameters, the copy of Server.Params
// with the values set.
func ConfigureServer(cfg *fedavg.Config, name string, v params.Values) (any, error) {
	if _, ok := servers[name]; !ok {
		return nil, fmt.Errorf("unknown server behaviour %q (registered: %s)", name, strings.Join(ServerNames(), ", "))
	}
	spec, _ := params.Lookup(ServerSlot, name)
	p := spec.New(v)
	if err := params.Check(p); err != nil {
		return nil, err
	}
	cfg.Rule, cfg.StatefulRule, cfg.Async = nil, nil, fedavg.Async{}
	if err := cfg.SetRule(p); err != nil && servers[name].Behaviour == nil {
		return nil, err
	}
	if c, ok := p.(Configurer); ok {
		c.Configure(cfg)
	}
	return p, nil
}

// ConfigureClient writes into cfg the client behaviour name with the
// parameter values v (nil: its defaults): cfg.Client, or cfg.StatefulClient
// for a client that keeps state between an agent's rounds. It returns the
// parameters.
func ConfigureClient(cfg *fedavg.Config, name string, v params.Values) (any, error) {
	c, err := Clients.New(name, v)
	if err != nil {
		return nil, err
	}
	if err := cfg.SetClient(c); err != nil {
		return nil, fmt.Errorf("client behaviour %s: %w", name, err)
	}
	return c, nil
}

// CheckPair reports a server that needs a client of its own (Server.Client)
// paired with another client, and such a client paired with another
// server: the message names both and what to write.
func CheckPair(server, client string) error {
	if need := servers[server].Client; need != "" && need != client {
		return fmt.Errorf("server %s needs its own client, %s, which sends it what its rule combines besides the update; %s does not (set the client to %s)", server, need, client, need)
	}
	if owner := ClientOwner(client); owner != "" && owner != server {
		return fmt.Errorf("client %s is the client of server %s, which reads what it sends besides its update; server %s does not (set the server to %s)", client, owner, server, owner)
	}
	return nil
}

// ClientOwner returns the server whose own client (Server.Client) client
// is, "" if it belongs to none.
func ClientOwner(client string) string {
	for _, name := range ServerNames() {
		if servers[name].Client == client {
			return name
		}
	}
	return ""
}

// ruleServer is the synchronous server of every server behaviour registered
// with a combination rule: ServerParts runs the protocol, and the round's
// replies are combined by Config.Rule (Core.Combine), as in the reference.
type ruleServer struct{ ServerParts }

// newRuleServer returns the rule server on p, which circulates the storage
// of models and replies between rounds (ServerParts.circulate): it reads
// the replies only until it has combined them.
func newRuleServer(p ServerParts) *ruleServer {
	p.circulate = true
	return &ruleServer{p}
}

// Receive implements actors.Behaviour.
func (s *ruleServer) Receive(ctx *actors.Context, m proto.Message) error {
	complete, err := s.Handle(ctx, m)
	if err != nil || !complete {
		return err
	}
	s.Core.Combine()
	s.EndRound(ctx)
	s.recycle()
	return nil
}
