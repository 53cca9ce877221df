package fedavg

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"maple/actors"
	"maple/actors/msg"
	"maple/algorithms/fedavg"
)

// Observation keys of the systems model, reported to the run's observer
// (outside the protocol) in the round of the message concerned.
const (
	// KeyDropped reports an agent that did not answer a task: it dropped
	// out, had crashed or was unavailable. The value is [agent].
	KeyDropped = "dropped"
	// KeyLate reports a reply that reached the server after its round
	// closed (or, asynchronously, after the server gave up on it), and
	// KeyTimeout a client the asynchronous server gave up on. The value is
	// [agent].
	KeyLate    = "late"
	KeyTimeout = "timeout"
	// KeyTime reports the server's virtual clock when it updates the model,
	// just before the model itself: [seconds].
	KeyTime = "time"
	// KeyEmpty reports a round that closed without any reply: the model is
	// unchanged. The value is [].
	KeyEmpty = "empty"
	// KeyStaleness reports the staleness τ of an update an asynchronous
	// server applied or buffered: [τ].
	KeyStaleness = "staleness"
)

// Agent is the behaviour of a FedAvg client: on GlobalModel it trains with
// its state machine and replies with its local model or update; on
// ImportanceProbe it reports its gradient noise at the probed model. Its
// device decides how long training takes and whether it answers at all;
// an adversary alters what it answers. The agent is a member of the run's
// fedavg.Pool, which keeps its state while it has no message to handle.
type Agent struct {
	// Member is the agent in the run's pool: its state machine (Core), its
	// device, its adversary and its attack stream, and the record of its
	// tasks.
	*fedavg.Member
	// Share selects the reply message (LocalModel or LocalUpdate).
	Share fedavg.Share
	// Server is the server's actor ID.
	Server actors.ID
	// GradientTime is the virtual compute time of one sample gradient when
	// Device is nil.
	GradientTime float64
	// Start, if set, holds the model a task starts from while the agent
	// trains into the storage of a model handed over to it (Context.Reuse).
	// The run's agents handle one message at a time, so they may share it:
	// it is scratch within a handling, never state.
	Start *[]float64
}

// Receive implements actors.Behaviour.
func (a *Agent) Receive(ctx *actors.Context, m proto.Message) error {
	switch m := m.(type) {
	case *msg.GlobalModel:
		// Tasks reach an agent in increasing (round, slot) order, so a task
		// that is not greater than the last one handled is a second copy.
		round, slot := ctx.Round(), int(m.GetSlot())
		if a.Started && (round < a.LastRound || round == a.LastRound && slot <= a.LastSlot) {
			return nil
		}
		a.Started, a.LastRound, a.LastSlot = true, round, slot
		ctx.Recycle() // for the server's next task, once handled
		return a.train(ctx, m)
	case *msg.ImportanceProbe:
		r, gradients := a.Core.Probe(m.GetWeights())
		ctx.Spend(float64(gradients) * a.GradientTime)
		ctx.Send(a.Server, &msg.ImportanceReport{GradNorm: r.GradNorm, Sigma2: r.Sigma2, Alpha: r.Alpha})
		return nil
	}
	return fmt.Errorf("agent cannot handle %T", m)
}

// train carries out a task: unless the device is down or drops out, it
// trains (unless it is an adversary that does not), spends the compute
// time, and replies (what an adversary makes of its reply).
func (a *Agent) train(ctx *actors.Context, m *msg.GlobalModel) error {
	d := a.Device
	switch {
	case d != nil && d.Crashed(ctx.Round()):
		a.drop(ctx, "crashed")
		return nil
	case d != nil && d.DropsOut():
		a.drop(ctx, "dropped out")
		return nil
	}
	reply, w0, out, ok, err := a.work(ctx, m)
	if err != nil || !ok {
		return err
	}
	// The reply is the agent's to give up: the server may keep its storage.
	c := a.Core.Compress(reply, w0)
	body := replyMessage(ctx, a.Share, m.GetSlot(), reply, c, out)
	// The length of body's encoding, which the trace records too.
	ctx.Observe(fedavg.ObsUplink, []float64{float64(fedavg.UplinkWireSize(m.GetSlot(), len(reply), c, len(out.ToServer), out.Report))})
	ctx.Pass(a.Server, body)
	return nil
}

// work trains on a task's model (unless the agent is an adversary that
// does not), spends the compute time unless the device is unavailable
// meanwhile, and returns the reply — what an adversary makes of it —, the
// model it started from and what else the training reports (its
// importance report and side vector); false when the agent does not
// answer.
func (a *Agent) work(ctx *actors.Context, m *msg.GlobalModel) (reply, w0 []float64, out fedavg.Outcome, ok bool, err error) {
	d := a.Device
	w0 = m.GetWeights()
	if a.Start != nil && ctx.Reuse() != nil {
		// The model is this agent's own copy: train into it, from a copy.
		*a.Start = append((*a.Start)[:0], w0...)
		reply, w0 = w0, *a.Start
	} else {
		reply = make([]float64, len(w0))
	}
	if a.Adversary == nil || a.Adversary.Trains() {
		if out, err = a.Core.Train(reply, w0, m.GetSide(), m.GetP()); err != nil {
			return nil, nil, fedavg.Outcome{}, false, err
		}
		if out.AuditSteps != nil {
			ctx.Observe(fedavg.ObsAuditSteps, out.AuditSteps)
		}
	}
	compute := float64(out.Gradients) * a.GradientTime
	if d != nil {
		compute = d.ComputeTime(out.Steps, out.Gradients)
		if !d.Available(ctx.Now(), ctx.Now()+compute) {
			a.drop(ctx, "was unavailable")
			return nil, nil, fedavg.Outcome{}, false, nil
		}
	}
	if a.Adversary != nil {
		a.Adversary.Corrupt(reply, w0, a.Share, a.AttackStream)
	}
	ctx.Spend(compute)
	return reply, w0, out, true, nil
}

// drop records that the agent does not answer its task.
func (a *Agent) drop(ctx *actors.Context, why string) {
	a.Dropped, a.Why = ctx.Round(), why
	ctx.Observe(KeyDropped, []float64{float64(a.K)})
}
