package fedavg

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
	"maple/privacy/fixedpoint"
	"maple/privacy/secagg"
)

// Secure aggregation (fedavg.Config.SecAgg) as messages between the agents
// and the server: SecAgg (Bonawitz et al., CCS 2017) or SecAgg+ (Bell et
// al., CCS 2020), run by the state machines of privacy/secagg. A round
// opens as every synchronous round does — the server samples its clients
// and sends each the model — and each client trains; instead of its reply
// it then starts the protocol, whose four phases go through the server:
//
//	advertise keys   SecAggAdvertiseKeys → server → SecAggKeyList
//	share keys       SecAggSharedKeys    → server → SecAggForwardedKeys
//	masked input     SecAggMaskedInput   → server → SecAggSurvivors
//	unmasking        SecAggUnmask        → server
//
// The client's secagg id is its slot in the round. The first phase closes
// as the collection policy says (every client, its deadline, or the first
// k); each later phase when every client expected has answered, or at
// SecureAggregation.Timeout after the server opened it. A client whose
// device drops out, crashes in the round or is unavailable vanishes before
// one of its four messages; the protocol recovers as long as at least t
// share holders survive every phase. Below that the round fails: a policy
// that closes rounds early (deadline, first-k) skips it, leaving the model
// unchanged, and the wait-for-every-reply policy stops the run with the
// failure — never a wrong aggregate. The server decodes the sum and
// combines it (fedavg.Server.CombineSum).

// newSecAggServer returns the server behaviour of a run with secure
// aggregation.
func newSecAggServer(p ServerParts) actors.Behaviour {
	return &secAggServer{ServerParts: p, slotOf: map[int]int{}}
}

// secAggServer is the server of a run with secure aggregation.
type secAggServer struct {
	ServerParts
	state      *secagg.ServerState // the round's protocol, nil between rounds
	key        *secagg.ServerKey
	costs      *secagg.Costs
	draws      []int       // the agent of each slot
	slotOf     map[int]int // the slot of each agent in the round
	dim        int
	advertised int // clients that advertised their keys in the round
}

// Receive implements actors.Behaviour.
func (s *secAggServer) Receive(ctx *actors.Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.Tick:
		return s.begin(ctx)
	case *msg.FedAvgDeadline:
		if s.current(ctx) && s.state.Phase() == secagg.AdvertiseKeys {
			return s.close(ctx)
		}
		return nil
	case *msg.SecAggPhaseTimeout:
		if s.current(ctx) && int32(s.state.Phase()) == m.GetPhase() {
			return s.close(ctx)
		}
		return nil
	case *msg.SecAggAdvertiseKeys, *msg.SecAggSharedKeys, *msg.SecAggMaskedInput, *msg.SecAggUnmask:
		return s.collect(ctx, m)
	}
	return fmt.Errorf("secure-aggregation server cannot handle %T", m)
}

// current reports whether a round's protocol is under way and the message
// being handled belongs to it.
func (s *secAggServer) current(ctx *actors.Context) bool {
	return s.state != nil && ctx.Round() == s.round
}

// begin opens a round: it samples the clients, sends each the model (and
// sets the deadline of the collection policy), and starts the protocol's
// server with a fresh channel key.
func (s *secAggServer) begin(ctx *actors.Context) error {
	s.round, s.open = ctx.Round(), true
	draws, err := s.Core.Draw()
	if err != nil {
		return err
	}
	model := append([]float64(nil), s.Core.Model()...) // shared, immutable once sent
	s.dim = len(model)
	clear(s.slotOf)
	s.draws = append(s.draws[:0], draws...)
	if s.Config.Variable() {
		ctx.Observe(fedavg.ObsDraws, []float64{float64(len(draws))})
	}
	if s.Config.SecAggSkipped(len(draws)) {
		// A Poisson round too small for secure aggregation: nobody is
		// sent the model, and the round releases nothing.
		ctx.Observe(fedavg.ObsSecAggSkipped, []float64{float64(len(draws))})
		s.open = false
		s.endRound(ctx, false, 0)
		return nil
	}
	var clients int32
	if s.Config.Announces() {
		clients = int32(len(draws))
	}
	for slot, k := range draws {
		s.slotOf[k] = slot
		ctx.Send(s.Agents.ID(k), &msg.GlobalModel{Slot: int32(slot), Weights: model, Clients: clients})
	}
	if t := s.Config.Collection().Timer(); t > 0 {
		ctx.After(t, &msg.FedAvgDeadline{})
	}
	cfg, err := s.Config.SecAggRound(s.round, len(s.draws), s.dim)
	if err != nil {
		return err
	}
	if s.state, err = secagg.NewServer(cfg, ctx.Rand(fedavg.StreamSecAgg)); err != nil {
		return err
	}
	if s.key, err = secagg.NewServerKey(ctx.Rand(fedavg.StreamSecAggChannel)); err != nil {
		return err
	}
	s.costs = secagg.NewCosts(len(draws))
	s.advertised = 0
	return nil
}

// collect handles a client's protocol message: a message of the round's
// current phase from a client expected in it is stepped; one that arrives
// after its phase closed is late, a second copy is ignored.
func (s *secAggServer) collect(ctx *actors.Context, pm proto.Message) error {
	k, ok := s.agentIndex(ctx.Sender())
	if !ok {
		return fmt.Errorf("secure-aggregation message from %s, which is not an agent", ctx.Name(ctx.Sender()))
	}
	slot, drawn := s.slotOf[k]
	if !s.current(ctx) || !drawn {
		ctx.Observe(KeyLate, []float64{float64(k)})
		return nil
	}
	m, err := s.fromWire(pm, slot)
	if err != nil {
		return fmt.Errorf("round %d: %s: %w", s.round, ctx.Name(ctx.Sender()), err)
	}
	if !s.state.Accepts(m) {
		if m.Phase() < s.state.Phase() {
			ctx.Observe(KeyLate, []float64{float64(k)})
		}
		return nil // late, or a second copy
	}
	s.costs.Record(m)
	out, err := s.state.Step(m)
	if m.Phase() == secagg.AdvertiseKeys && err == nil && out == nil {
		if s.advertised++; s.Config.Collection().Enough(s.advertised) {
			out, err = s.state.Close()
		}
	}
	return s.advance(ctx, out, err)
}

// close closes the current phase at its deadline or timeout.
func (s *secAggServer) close(ctx *actors.Context) error {
	out, err := s.state.Close()
	return s.advance(ctx, out, err)
}

// advance sends what the server's machine returned when a phase closed,
// sets the next phase's timeout, and ends the round once it has a result
// or has failed below the threshold.
func (s *secAggServer) advance(ctx *actors.Context, out []secagg.Message, err error) error {
	if err != nil {
		var te *secagg.ThresholdError
		if !errors.As(err, &te) {
			return fmt.Errorf("round %d: %w", s.round, err)
		}
		return s.fail(ctx, te)
	}
	for _, m := range out {
		s.costs.Record(m)
		ctx.Send(s.Agents.ID(s.draws[m.Receiver()]), s.toWire(m))
	}
	if res, ok := s.state.Result(); ok {
		return s.finish(ctx, res)
	}
	if len(out) > 0 && s.Config.SecAgg.Timeout > 0 {
		ctx.After(s.Config.SecAgg.Timeout, &msg.SecAggPhaseTimeout{Phase: int32(s.state.Phase())})
	}
	return nil
}

// finish combines a completed round's decoded sum and ends the round.
func (s *secAggServer) finish(ctx *actors.Context, res *secagg.Result) error {
	cfg, _ := s.Config.SecAggRound(s.round, len(s.draws), s.dim) // as in begin
	sum := make([]float64, s.dim)
	cfg.Encoder.Decode(sum, res.Sum)
	ctx.Observe(fedavg.ObsSecAggIncluded, []float64{float64(len(res.Included))})
	s.report(ctx)
	s.Core.CombineSum(sum, len(res.Included))
	s.endRound(ctx, true, len(res.Included))
	return nil
}

// fail ends a round whose protocol cannot complete: the collection policy
// decides what happens next. One that closes rounds early skips the round
// (the model is unchanged); waiting for every reply, the run stops.
func (s *secAggServer) fail(ctx *actors.Context, te *secagg.ThresholdError) error {
	ctx.Observe(fedavg.ObsSecAggFailed, []float64{float64(te.Phase), float64(te.Client), float64(te.Survivors), float64(te.Threshold)})
	s.report(ctx)
	col := s.Config.Collection()
	if !col.Early() {
		return fmt.Errorf("round %d: %w: the collection policy %s waits for every reply, so a round that cannot complete stops the run (a policy that closes rounds early, deadline or first-k, skips such rounds)", s.round, te, col)
	}
	ctx.Warn(fmt.Sprintf("some rounds failed below the secure-aggregation threshold (%s): the model was not updated in them; the summary lists them under secure_aggregation.failed_rounds", col.Describe()))
	s.endRound(ctx, false, 0)
	return nil
}

// report observes the round's traffic and closes the protocol.
func (s *secAggServer) report(ctx *actors.Context) {
	ctx.Observe(fedavg.ObsSecAggCosts, fedavg.SecAggCosts(len(s.draws), s.Config.ModelBytes(len(s.draws), s.dim), s.costs))
	s.state, s.key, s.open = nil, nil, false
}

// Waiting implements actors.Waiter: the phase the server is collecting and
// the clients it still waits for.
func (s *secAggServer) Waiting() string {
	if s.state == nil {
		return ""
	}
	missing := s.state.Missing()
	names := make([]string, len(missing))
	for i, u := range missing {
		names[i] = fedavg.AgentName(s.draws[u])
	}
	return fmt.Sprintf("round %d waits in secure aggregation's phase %q for %s (collection policy %s, phase timeout %g s)",
		s.round, s.state.Phase(), strings.Join(names, ", "), s.Config.Collection(), s.Config.SecAgg.Timeout)
}

// fromWire decodes a client's protocol message; slot is its secagg id.
func (s *secAggServer) fromWire(pm proto.Message, slot int) (secagg.Message, error) {
	r := secagg.Route{From: slot, To: secagg.Server}
	switch m := pm.(type) {
	case *msg.SecAggAdvertiseKeys:
		return &secagg.AdvertiseKeysMsg{Route: r, CipherKey: m.GetCipherKey(), MaskKey: m.GetMaskKey()}, nil
	case *msg.SecAggSharedKeys:
		return &secagg.SharedKeysMsg{Route: r, Boxes: boxesFromWire(m.GetBoxes())}, nil
	case *msg.SecAggMaskedInput:
		bits, dim := int(m.GetBits()), int(m.GetDim())
		if dim != s.dim || bits < 1 || bits > 64 {
			return nil, fmt.Errorf("a masked input of %d coordinates of %d bits, want %d", dim, bits, s.dim)
		}
		v := make([]uint64, dim)
		if err := fixedpoint.Unpack(v, m.GetMasked(), bits); err != nil {
			return nil, err
		}
		return secagg.NewMaskedInputMsg(r, v, bits), nil
	case *msg.SecAggUnmask:
		plain, err := s.state.OpenFromClient(s.key, slot, m.GetSealed())
		if err != nil {
			return nil, err
		}
		var shares msg.SecAggShares
		if err := proto.Unmarshal(plain, &shares); err != nil {
			return nil, fmt.Errorf("unmasking shares: %w", err)
		}
		return &secagg.UnmaskMsg{Route: r, SelfMask: sharesFromWire(shares.GetSelfMask()), MaskKey: sharesFromWire(shares.GetMaskKey())}, nil
	}
	return nil, fmt.Errorf("unexpected %T", pm)
}

// toWire encodes a server message for its client.
func (s *secAggServer) toWire(m secagg.Message) proto.Message {
	switch m := m.(type) {
	case *secagg.KeyListMsg:
		keys := make([]*msg.SecAggPeerKeys, len(m.Keys))
		for i, k := range m.Keys {
			keys[i] = &msg.SecAggPeerKeys{Id: int32(k.ID), CipherKey: k.CipherKey, MaskKey: k.MaskKey}
		}
		return &msg.SecAggKeyList{Keys: keys, ServerKey: s.key.Public()}
	case *secagg.ForwardedKeysMsg:
		return &msg.SecAggForwardedKeys{Boxes: boxesToWire(m.Boxes)}
	case *secagg.SurvivorsMsg:
		ids := make([]int32, len(m.IDs))
		for i, u := range m.IDs {
			ids[i] = int32(u)
		}
		return &msg.SecAggSurvivors{Ids: ids}
	}
	panic(fmt.Sprintf("fedavg: the secagg server sends no %T", m))
}

func boxesToWire(b []secagg.Box) []*msg.SecAggBox {
	out := make([]*msg.SecAggBox, len(b))
	for i, x := range b {
		out[i] = &msg.SecAggBox{Peer: int32(x.Peer), Sealed: x.Sealed}
	}
	return out
}

func boxesFromWire(b []*msg.SecAggBox) []secagg.Box {
	out := make([]secagg.Box, len(b))
	for i, x := range b {
		out[i] = secagg.Box{Peer: int(x.GetPeer()), Sealed: x.GetSealed()}
	}
	return out
}

func sharesToWire(s []secagg.OwnerShare) []*msg.SecAggOwnerShare {
	out := make([]*msg.SecAggOwnerShare, len(s))
	for i, x := range s {
		out[i] = &msg.SecAggOwnerShare{Owner: int32(x.Owner), Share: x.Share}
	}
	return out
}

func sharesFromWire(s []*msg.SecAggOwnerShare) []secagg.OwnerShare {
	out := make([]secagg.OwnerShare, len(s))
	for i, x := range s {
		out[i] = secagg.OwnerShare{Owner: int(x.GetOwner()), Share: x.GetShare()}
	}
	return out
}

// secAggClient is the behaviour of an agent in a run with secure
// aggregation: the honest Agent's training, then the client's side of the
// protocol in place of its reply.
type secAggClient struct {
	*Agent
	// Config is the run's configuration.
	Config *fedavg.Config
	// Slot is the client's secagg id in the current round, −1 outside one.
	Slot int

	round     int
	clients   int // the round's number of clients
	client    *secagg.Client
	next      secagg.Phase // the phase of the server message it expects
	serverKey []byte
	dropAt    secagg.Phase // the phase before whose message it vanishes; PhaseCount: none
	fault     string       // why it vanishes
}

// Receive implements actors.Behaviour.
func (c *secAggClient) Receive(ctx *actors.Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.GlobalModel:
		round, slot := ctx.Round(), int(m.GetSlot())
		a := c.Agent
		if a.Started && (round < a.LastRound || round == a.LastRound && slot <= a.LastSlot) {
			return nil // a second copy of a task already handled
		}
		a.Started, a.LastRound, a.LastSlot = true, round, slot
		return c.start(ctx, m)
	case *msg.SecAggKeyList, *msg.SecAggForwardedKeys, *msg.SecAggSurvivors:
		return c.step(ctx, m)
	}
	return fmt.Errorf("secure-aggregation client cannot handle %T", m)
}

// inProtocol is an agent's behaviour that may be in a round's protocol
// of secure aggregation when it is parked (agentRange.Park): a
// secAggClient, or a behaviour embedding one.
type inProtocol interface {
	inRound() bool
	protocolRound() int
}

// inRound reports whether the client is in its round's protocol: it
// advertised its keys and has not sent its last message nor left.
func (c *secAggClient) inRound() bool { return c.client != nil }

// protocolRound returns the round of the client's last task.
func (c *secAggClient) protocolRound() int { return c.round }

// start trains on the round's model and advertises the client's keys,
// unless its device fails it first. A device that drops out of the round,
// or crashes in it, vanishes before a phase drawn uniformly from the
// agent's StreamDropoutPhase stream.
func (c *secAggClient) start(ctx *actors.Context, m *msg.GlobalModel) error {
	c.round, c.Slot, c.client, c.next, c.dropAt = ctx.Round(), int(m.GetSlot()), nil, secagg.AdvertiseKeys, secagg.PhaseCount
	c.clients = c.Config.Draws()
	if n := int(m.GetClients()); n > 0 {
		c.clients = n // the round's own, under Poisson participation
	}
	if d := c.Device; d != nil {
		switch {
		case d.Crashed(c.round) && d.CrashRound() < c.round:
			c.drop(ctx, "crashed")
			return nil
		case d.Crashed(c.round):
			c.vanish("crashed")
		case d.DropsOut():
			c.vanish("dropped out")
		}
		if c.dropAt == secagg.AdvertiseKeys {
			c.drop(ctx, c.fault+" before advertising its keys")
			return nil
		}
	}
	reply, _, _, ok, err := c.work(ctx, m)
	if err != nil || !ok {
		return err
	}
	cfg, err := c.Config.SecAggRound(c.round, c.clients, len(reply))
	if err != nil {
		return err
	}
	input := make([]float64, len(reply))
	enc, err := c.Config.SecAggInput(input, reply, m.GetWeights(), cfg.Encoder, c.Core.Rand)
	if err != nil {
		return fmt.Errorf("round %d: %w", c.round, err)
	}
	ctx.Observe(fedavg.ObsSecAggEncoding, enc.Observation(c.Slot))
	if c.client, err = secagg.NewClient(cfg, c.Slot, input, c.Core.Rand(fedavg.StreamSecAgg)); err != nil {
		return err
	}
	k := c.client.Start().(*secagg.AdvertiseKeysMsg)
	ctx.Send(c.Server, &msg.SecAggAdvertiseKeys{CipherKey: k.CipherKey, MaskKey: k.MaskKey})
	return nil
}

// vanish draws the phase before whose message the client vanishes.
func (c *secAggClient) vanish(why string) {
	c.dropAt = secagg.Phase(c.Core.Rand(fedavg.StreamDropoutPhase).IntN(int(secagg.PhaseCount)))
	c.fault = why
}

// step answers a server message of the round's protocol.
func (c *secAggClient) step(ctx *actors.Context, pm proto.Message) error {
	if c.client == nil || ctx.Round() != c.round {
		return nil // a round the client left, or a message of an older one
	}
	r := secagg.Route{From: secagg.Server, To: c.Slot}
	var m secagg.Message
	switch pm := pm.(type) {
	case *msg.SecAggKeyList:
		keys := make([]secagg.PeerKeys, len(pm.GetKeys()))
		for i, k := range pm.GetKeys() {
			keys[i] = secagg.PeerKeys{ID: int(k.GetId()), CipherKey: k.GetCipherKey(), MaskKey: k.GetMaskKey()}
		}
		m = &secagg.KeyListMsg{Route: r, Keys: keys}
	case *msg.SecAggForwardedKeys:
		m = &secagg.ForwardedKeysMsg{Route: r, Boxes: boxesFromWire(pm.GetBoxes())}
	case *msg.SecAggSurvivors:
		ids := make([]int, len(pm.GetIds()))
		for i, u := range pm.GetIds() {
			ids[i] = int(u)
		}
		m = &secagg.SurvivorsMsg{Route: r, IDs: ids}
	}
	if m.Phase() != c.next {
		return nil // a second copy
	}
	c.next++
	answer := m.Phase() + 1
	if answer == c.dropAt {
		c.drop(ctx, fmt.Sprintf("%s before its message of phase %q", c.fault, answer))
		c.client = nil
		return nil
	}
	if d := c.Device; d != nil && !d.Available(ctx.Now(), ctx.Now()) {
		c.drop(ctx, fmt.Sprintf("was unavailable for its message of phase %q", answer))
		c.client = nil
		return nil
	}
	if kl, ok := pm.(*msg.SecAggKeyList); ok {
		c.serverKey = kl.GetServerKey()
	}
	out, err := c.client.Step(m)
	if err != nil {
		return fmt.Errorf("round %d: %w", c.round, err)
	}
	switch out := out.(type) {
	case *secagg.SharedKeysMsg:
		ctx.Send(c.Server, &msg.SecAggSharedKeys{Boxes: boxesToWire(out.Boxes)})
	case *secagg.MaskedInputMsg:
		packed := fixedpoint.Pack(make([]byte, out.Size()), out.Masked, out.Bits())
		ctx.Send(c.Server, &msg.SecAggMaskedInput{Masked: packed, Bits: int32(out.Bits()), Dim: int32(len(out.Masked))})
	case *secagg.UnmaskMsg:
		plain, err := proto.MarshalOptions{Deterministic: true}.Marshal(&msg.SecAggShares{
			SelfMask: sharesToWire(out.SelfMask), MaskKey: sharesToWire(out.MaskKey)})
		if err != nil {
			return err
		}
		sealed, err := c.client.SealToServer(c.serverKey, plain)
		clear(plain)
		if err != nil {
			return err
		}
		ctx.Send(c.Server, &msg.SecAggUnmask{Sealed: sealed})
		c.client = nil // the client's part of the round is over
	}
	return nil
}
