package fedavg

import "maple/algorithms/canary"

// The fedavg side of an audit of DP-SGD's sample-level guarantee (the
// canaries themselves are algorithms/canary's): agent 0 is the audited
// client, which holds the canary examples of Config.SampleCanaries
// (Local.Canaries), and a white-box audit records its steps
// (Local.RecordStep).

// ObsAuditSteps is the observation key of the white-box view of an audit of
// the sample-level guarantee: what the audited client (agent 0) did in one
// local training, reported by the engines in the training's round, outside
// the protocol: for each local step, the model the step started from and
// the noisy sum of clipped gradients it took (2·dim numbers per step).
// Together these are every model the client went through: the step is
// w ← w − Step·(sum/B + 2ρθ).
const ObsAuditSteps = "audit/steps"

// StreamCanaryExamples is the purpose of the stream the canary examples and
// their inclusion are drawn from.
const StreamCanaryExamples = "canary-examples"

// Canaries returns the canary examples this training's dataset holds:
// agent 0's under an audit of the sample-level guarantee
// (Config.SampleCanaries), nil otherwise.
func (t *Local) Canaries() *canary.Examples {
	if t.agent.index != 0 {
		return nil
	}
	return t.agent.cfg.SampleCanaries
}

// RecordStep adds a local step to the training's white-box record
// (ObsAuditSteps) when its canaries ask for it: w the model the step
// started from, sum its noisy sum of clipped gradients.
func (t *Local) RecordStep(w, sum []float64) {
	if c := t.Canaries(); c != nil && c.Observe {
		t.record = append(append(t.record, w...), sum...)
	}
}

// AuditedClient is a PrivateClient whose sample-level guarantee canary
// examples can audit: it clips every example's gradient to ClipNorm, draws
// its batches over the canaries of Local.Canaries as over its examples,
// adds theirs (canary.Examples.AddClipped) and records its steps
// (Local.RecordStep).
type AuditedClient interface {
	PrivateClient
	// ClipNorm is C, the norm each example's gradient is clipped to.
	ClipNorm() float64
}
