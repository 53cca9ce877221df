package diffusion

import (
	"fmt"
	"slices"
	"strconv"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/diffusion"
	"maple/algorithms/systems"
)

// Observation keys under which agents report to the run's observer (outside
// the protocol: these are not messages and are not traced).
const (
	// KeyModel reports w_{p,i} at the end of every round.
	KeyModel = "model"
	// KeySetup reports, at the end of a round in which the agent sent LGH
	// set-up messages, their counts [roles, keys, relays]
	// (diffusion.SetupCounts).
	KeySetup = "lgh-setup"
	// KeyTime reports the agent's virtual clock when it reports its model
	// (just before it): [seconds].
	KeyTime = "time"
)

// SharedKey returns the key under which an agent reports the noise-free
// value y it shared in stage j ("shared/j", see diffusion.Agent.Shared) at
// the end of every round: what an eavesdropper tries to reconstruct.
func SharedKey(j int) string {
	if j >= 0 && j < len(sharedKeys) {
		return sharedKeys[j]
	}
	return "shared/" + strconv.Itoa(j)
}

// NoiseKey returns the key under which an agent reports its graph-homomorphic
// draw g_p of stage j at the end of every round ("gh-noise/j"), from which the
// observer evaluates the network residual (diffusion.GHResidual).
func NoiseKey(j int) string {
	if j >= 0 && j < len(noiseKeys) {
		return noiseKeys[j]
	}
	return "gh-noise/" + strconv.Itoa(j)
}

// The keys of the three stages, built once: agents report under them every
// round.
var (
	sharedKeys = [3]string{"shared/0", "shared/1", "shared/2"}
	noiseKeys  = [3]string{"gh-noise/0", "gh-noise/1", "gh-noise/2"}
)

// Agent is the behaviour of one agent: it decodes each message, hands it to
// its state machine and sends what the state machine puts in its outbox. When
// an iteration completes it reports the model (and GH draws and set-up counts)
// to the observer and sends Done to the scheduler.
type Agent struct {
	// Core is the agent's state machine.
	Core *diffusion.Agent
	// Scheduler is the scheduler's ID; agent q's ID is First + q.
	Scheduler, First actors.ID
	// Agents is P.
	Agents int
	// GradientTime is the virtual compute time of one sample gradient.
	GradientTime float64

	// Device, if set, charges the compute time of the gradients (it then
	// replaces GradientTime).
	Device *systems.Device

	in    diffusion.Message // the decoded incoming message other than a share, reused
	share diffusion.Message // the decoded incoming share, reused
	box   outbox
	live  diffusion.Live // the round's live links, decoded from DiffusionLinks
	now   [1]float64     // the KeyTime report, reused (observers copy)
	done  msg.Done       // the Done of every round: empty, immutable
}

// SetupRound is the round of the local graph-homomorphic set-up messages
// (role announcements, public keys and their relays): round 0, before the
// first iteration, so that a trace separates the one-off set-up from the
// iterations. The state machine runs the set-up as part of iteration 1; the
// behaviour only labels its messages.
const SetupRound = 0

// Receive implements actors.Behaviour.
func (a *Agent) Receive(ctx *actors.Context, m proto.Message) error {
	if !a.box.ready {
		a.box.setup(a.First, a.GradientTime, a.Device, a.Core.OutDegree())
	}
	a.box.ctx = ctx
	err := a.receive(ctx, m)
	a.box.ctx = nil
	return err
}

// receive is Receive with the outbox open.
func (a *Agent) receive(ctx *actors.Context, m proto.Message) error {
	if ctx.Round() == SetupRound && isSetup(m) {
		ctx.SetRound(1) // what it sends in reply, but set-up, is iteration 1's
	}
	var complete bool
	var err error
	switch l := m.(type) {
	case *msg.Tick:
		complete, err = a.Core.Begin(ctx.Round(), &a.box)
	case *msg.DiffusionLinks:
		a.live = diffusion.Live{Down: l.GetDown(), Self: l.GetSelf(), Senders: l.GetSenders(), Weights: l.GetWeights(),
			Receivers: l.GetReceivers(), Given: l.GetGiven()}
		complete, err = a.Core.BeginLive(ctx.Round(), &a.live, &a.box)
	default:
		var in *diffusion.Message
		if in, err = a.decode(ctx, m); err == nil {
			complete, err = a.Core.Step(ctx.Round(), in, &a.box)
			a.box.recycle() // the state machine has copied the values
		}
	}
	if err != nil || !complete {
		return err
	}
	a.report(ctx)
	ctx.Send(a.Scheduler, &a.done)
	return nil
}

// decode translates a protobuf message into a.share, for a share, or a.in,
// and returns it.
func (a *Agent) decode(ctx *actors.Context, m proto.Message) (*diffusion.Message, error) {
	from := int(ctx.Sender() - a.First)
	if from < 0 || from >= a.Agents {
		return nil, fmt.Errorf("%s from %s, which is not an agent", actors.MessageName(m), ctx.Name(ctx.Sender()))
	}
	if m, ok := m.(*msg.StageShare); ok {
		a.share.Kind, a.share.Peer, a.share.Stage, a.share.Values = diffusion.Share, from, int(m.GetStage()), m.GetPayload()
		return &a.share, nil
	}
	a.in = diffusion.Message{Peer: from}
	switch m := m.(type) {
	case *msg.RoleAssign:
		a.in.Kind, a.in.Role, a.in.Weight = diffusion.Role, m.GetRole().Pairmask(), m.GetWeight()
		for _, p := range m.GetPartners() {
			a.in.Partners = append(a.in.Partners, int(p))
		}
	case *msg.PublicKey:
		a.in.Kind, a.in.Key = diffusion.PublicKey, m.GetKey()
	case *msg.RelayedPublicKey:
		a.in.Kind, a.in.Other, a.in.Key = diffusion.RelayedKey, int(m.GetOrigin()), m.GetKey()
	case *msg.PaperPublic:
		a.in.Kind, a.in.Other, a.in.Stage, a.in.Values = diffusion.PaperPublic, int(m.GetPartner()), int(m.GetStage()), m.GetValues()
	case *msg.RelayedPaperPublic:
		a.in.Kind, a.in.Other, a.in.Stage, a.in.Values = diffusion.RelayedPaper, int(m.GetOrigin()), int(m.GetStage()), m.GetValues()
	case *msg.DiffusionMaskRequest:
		a.in.Kind, a.in.Stage = diffusion.MaskRequest, int(m.GetStage())
		for _, p := range m.GetAbsent() {
			a.in.Partners = append(a.in.Partners, int(p))
		}
	case *msg.DiffusionMaskReveal:
		a.in.Kind, a.in.Stage, a.in.Values = diffusion.MaskReveal, int(m.GetStage()), m.GetValues()
	case *msg.DiffusionRekey:
		a.in.Kind, a.in.Stage, a.in.Role, a.in.Keys = diffusion.Rekey, int(m.GetStage()), m.GetRole().Pairmask(), m.GetKeys()
		for _, p := range m.GetPartners() {
			a.in.Partners = append(a.in.Partners, int(p))
		}
	case *msg.DiffusionRekeyedShare:
		a.in.Kind, a.in.Stage, a.in.Values = diffusion.RekeyedShare, int(m.GetStage()), m.GetPayload()
	default:
		return nil, fmt.Errorf("agent cannot handle %s", actors.MessageName(m))
	}
	return &a.in, nil
}

// report tells the observer what the metrics need at the end of a round.
func (a *Agent) report(ctx *actors.Context) {
	a.now[0] = ctx.Now()
	ctx.Observe(KeyTime, a.now[:])
	ctx.Observe(KeyModel, a.Core.Model())
	for j := range 3 {
		if g := a.Core.Draw(j); g != nil {
			ctx.Observe(NoiseKey(j), g)
		}
		if y := a.Core.Shared(j); y != nil {
			ctx.Observe(SharedKey(j), y)
		}
	}
	if c := a.Core.Counts(); c.Total() > 0 {
		ctx.Observe(KeySetup, []float64{float64(c.Roles), float64(c.Keys), float64(c.Relays)})
	}
}

// outbox turns the state machine's messages into protobuf messages. Every
// message gets its own copy of the vectors and keys, which the state machine
// reuses; messages are immutable once sent. Shares, the bulk of the traffic,
// are passed (Context.Pass), each to its one receiver, which keeps it for its
// own shares once it has handled it if nobody else holds it (Context.Reuse:
// no duplicate, no wiretap): in a run without faults or taps an agent's
// shares are the ones it received, refilled, and a share allocates nothing.
type outbox struct {
	ctx          *actors.Context
	first        actors.ID
	gradientTime float64
	device       *systems.Device
	spare        []*msg.StageShare // received shares nobody else holds, for the agent's own
	keep         int               // the most spares kept: the agent's shares in one stage
	ready        bool              // setup has been called
}

// setup readies the outbox, once, for an agent whose peers' IDs start at
// first and that keeps at most keep spare shares; the handling of each
// message then sets ctx, and clears it once done.
func (o *outbox) setup(first actors.ID, gradientTime float64, device *systems.Device, keep int) {
	o.first, o.gradientTime, o.device, o.keep, o.ready = first, gradientTime, device, keep, true
}

// recycle keeps the message being handled, if it is a share that nobody
// else holds, for one of the agent's own shares: call it once the state
// machine is done with the message's values.
func (o *outbox) recycle() {
	if s, ok := o.ctx.Reuse().(*msg.StageShare); ok && len(o.spare) < o.keep {
		o.spare = append(o.spare, s)
	}
}

// Send implements diffusion.Outbox.
func (o *outbox) Send(m *diffusion.Message) {
	var body proto.Message
	switch m.Kind {
	case diffusion.Share:
		var s *msg.StageShare
		if n := len(o.spare); n > 0 {
			s, o.spare = o.spare[n-1], o.spare[:n-1]
		} else {
			s = &msg.StageShare{}
		}
		s.Stage, s.Payload = int32(m.Stage), append(s.Payload[:0], m.Values...)
		o.ctx.Pass(o.first+actors.ID(m.Peer), s) // nobody else holds it
		return
	case diffusion.Role:
		r := &msg.RoleAssign{Role: msg.MaskRoleOf(m.Role), Weight: m.Weight}
		for _, p := range m.Partners {
			r.Partners = append(r.Partners, int32(p))
		}
		body = r
	case diffusion.PublicKey:
		body = &msg.PublicKey{Key: slices.Clone(m.Key)}
	case diffusion.RelayedKey:
		body = &msg.RelayedPublicKey{Origin: int32(m.Other), Key: slices.Clone(m.Key)}
	case diffusion.PaperPublic:
		body = &msg.PaperPublic{Partner: int32(m.Other), Stage: int32(m.Stage), Values: slices.Clone(m.Values)}
	case diffusion.RelayedPaper:
		body = &msg.RelayedPaperPublic{Origin: int32(m.Other), Stage: int32(m.Stage), Values: slices.Clone(m.Values)}
	case diffusion.MaskRequest:
		r := &msg.DiffusionMaskRequest{Stage: int32(m.Stage)}
		for _, p := range m.Partners {
			r.Absent = append(r.Absent, int32(p))
		}
		body = r
	case diffusion.MaskReveal:
		body = &msg.DiffusionMaskReveal{Stage: int32(m.Stage), Values: slices.Clone(m.Values)}
	case diffusion.Rekey:
		r := &msg.DiffusionRekey{Stage: int32(m.Stage), Role: msg.MaskRoleOf(m.Role)}
		for _, p := range m.Partners {
			r.Partners = append(r.Partners, int32(p))
		}
		for _, k := range m.Keys {
			r.Keys = append(r.Keys, slices.Clone(k))
		}
		body = r
	case diffusion.RekeyedShare:
		body = &msg.DiffusionRekeyedShare{Stage: int32(m.Stage), Payload: slices.Clone(m.Values)}
	}
	if isSetup(body) {
		round := o.ctx.Round()
		o.ctx.SetRound(SetupRound)
		defer o.ctx.SetRound(round)
	}
	o.ctx.Send(o.first+actors.ID(m.Peer), body)
}

// isSetup reports whether m is a set-up message, sent in SetupRound.
func isSetup(m proto.Message) bool {
	switch m.(type) {
	case *msg.RoleAssign, *msg.PublicKey, *msg.RelayedPublicKey:
		return true
	}
	return false
}

// Spend implements diffusion.Outbox.
func (o *outbox) Spend(n int) {
	if o.device != nil {
		o.ctx.Spend(o.device.ComputeTime(1, n)) // one gradient step of n sample gradients
		return
	}
	o.ctx.Spend(float64(n) * o.gradientTime)
}

// Warn implements diffusion.Outbox.
func (o *outbox) Warn(message string) { o.ctx.Warn(message) }

// Report implements diffusion.Outbox: an observation, outside the protocol.
func (o *outbox) Report(key string, v []float64) { o.ctx.Observe(key, v) }
