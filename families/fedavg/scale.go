package fedavg

import (
	"maple/algorithms/fedavg"
	"maple/scenarios"
	"maple/scenarios/run"
)

// This file holds what the cost of a FedAvg run is made of at scale
// (docs/design.md, "Ten million clients"): how its agents are held between
// their tasks, and the estimate the checks before running use.

// keepBytes is the memory the agents of a run may take held whole
// (fedavgHold); tests lower it to park the agents of small runs.
var keepBytes float64 = fedavg.KeepBytes

// The memory an agent takes, by how it is held (fedavg.Pool).
const (
	// memberBytes is an agent held whole besides its data: the Agent and
	// its scratch, two or three ChaCha8 streams of 330 bytes, the Member
	// and its map entry.
	memberBytes = 2048
	// parkedBytes is a parked agent: the record of its tasks and the
	// position of its mini-batch stream (rng.Position, 40 bytes) in the
	// pool's map, and the engine's record of its clock.
	parkedBytes = 320
	// streamBytes is each further stream position a parked agent keeps:
	// its noise, per-round schedule, device (per-step compute times,
	// dropouts), attack and link (jitter, faults) streams.
	streamBytes = 64
)

// fedavgHold is how a run holds its agents between their tasks: whole when
// every agent's data and state fit in fedavg.KeepBytes — an agent is then
// built once — and parked otherwise, rebuilt from the run seed at each of
// its tasks. held says the problem holds the datasets anyway (read from
// files), so that keeping an agent costs its state alone.
func fedavgHold(sc *scenarios.Scenario, held bool) fedavg.Holding {
	if float64(sc.Data.Agents)*agentBytes(sc, held) <= keepBytes {
		return fedavg.HoldKeep
	}
	return fedavg.HoldPark
}

// agentBytes is the memory of an agent held whole: its state and, unless
// the problem holds it, its dataset.
func agentBytes(sc *scenarios.Scenario, held bool) float64 {
	if held {
		return memberBytes
	}
	return memberBytes + run.AgentDataBytes(sc)
}

// fedavgEstimate is the cost of one FedAvg run: per round a Tick, a Done and
// a model to and from each of the L participants, each of which runs up to
// E_k local steps on up to B_k samples, and, under the adaptive agent policy
// of importance sampling, a probe of every agent (the optimal policy probes
// once). Its memory is that of the agents that get a task — at most
// min(K, T·L) of them, T·L for a probing policy — held whole or parked
// (fedavgHold), the L agents training at once whole, and what remains per
// agent of the K: a byte per agent for the adversaries, two for the device
// classes (four while they are dealt), and 49 for importance sampling of
// agents (p_k, the inclusion probabilities, the reports). Parked agents are
// rebuilt at each task, which costs drawing their data again. Run 0 also
// passes over every agent for the summary's noise bound and model drift.
func fedavgEstimate(sc *scenarios.Scenario, md run.Model) run.Estimate {
	fa, d := fedavgParams(sc), md.Dim
	K := float64(sc.Data.Agents)
	L := float64(fa.Participants)
	if fa.Participation == fedavg.Full.String() {
		L = K
	}
	T := float64(sc.Iterations)
	held := !run.Generated(sc)
	touched, tasks := min(K, T*L), T*L
	probes := 0.0
	switch fa.Importance.Agents {
	case "adaptive":
		probes = T * K
	case "optimal":
		probes = K
	}
	if probes > 0 {
		touched = K
	}
	perAgent := agentBytes(sc, held) + 3*d*8
	var bytes float64
	if fedavgHold(sc, held) == fedavg.HoldKeep {
		bytes = touched * perAgent
	} else {
		bytes = touched*(parkedBytes+streamBytes*parkedStreams(sc)) + (L+2)*perAgent
	}
	if fa.Adversary.Kind != "none" {
		bytes += K
	}
	if len(sc.Network.Classes) > 0 {
		bytes += 6 * K
	}
	if fa.Importance.Agents != "uniform" {
		bytes += 49 * K
	}
	ops := tasks*(float64(fa.LocalSteps.Max)*float64(fa.Batch.Max)*md.SampleOps+4*d) + probes*float64(sc.Data.Samples.Max)*md.SampleOps
	if !held {
		// Building an agent of generated data: drawing its data (about 10
		// operations per coordinate and 1000 for its stream) and its own
		// streams; parked agents are built at every task.
		m := float64(max(sc.Data.Dim, 1))
		build := 10*float64(sc.Data.Samples.Max)*(m+1) + 3000
		if fedavgHold(sc, held) == fedavg.HoldPark {
			ops += (tasks + probes) * build
		} else {
			ops += touched * build
		}
		// Run 0's pass for the summary: every agent drawn, its sample
		// gradient norms and, for least squares, its local minimizer.
		ops += K * (build + 8*float64(sc.Data.Samples.Max)*d*d) / float64(max(sc.Runs, 1))
	}
	return run.Estimate{
		Bytes:       bytes,
		Ops:         ops,
		Messages:    1 + T*(2+2*L) + 2*probes,
		RecordBytes: 140,
		VectorLen:   d,
		// A client's work grows with its local steps and batch; ten of each
		// is a typical round (FedAvg's E and B).
		Drivers: []run.Driver{
			{Field: "algorithm.fedavg.local_steps", Ratio: float64(fa.LocalSteps.Max) / 10},
			{Field: "algorithm.fedavg.batch", Ratio: float64(fa.Batch.Max) / 10},
		},
	}
}

// parkedStreams is the number of stream positions a parked agent keeps
// besides its mini-batches': its noise, its per-round schedule, its
// device's per-step compute times and dropouts, its link streams, and its
// secure-aggregation and distributed-DP streams.
func parkedStreams(sc *scenarios.Scenario) float64 {
	n := 0.0
	fa := fedavgParams(sc)
	if sc.Privacy.Scheme != "none" {
		n++
	}
	if fa.Schedule == fedavg.PerRound.String() {
		n++
	}
	net := &sc.Network
	if net.StepTime != nil && net.StepTime.Redraw == "per-step" {
		n++
	}
	if net.Dropout > 0 || len(net.Classes) > 0 {
		n++
	}
	if net.Jitter > 0 {
		n++
	}
	if net.Loss > 0 || net.Duplicate > 0 {
		n++
	}
	// Secure aggregation's client streams: the protocol's, the phase a
	// failing device vanishes before, and the rounding onto the grid —
	// distributed DP's, with its noise, or the unbiased rounding's.
	if sa := sc.Privacy.SecureAggregation; sa != nil {
		n++
		if net.Dropout > 0 || net.Crashes != nil {
			n++
		}
		if sa.Protocol != "none" {
			n++
		}
	}
	return n
}
