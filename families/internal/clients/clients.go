// Package clients translates the client parameters that FedAvg and graph
// federated learning share — participation, local steps, mini-batches, the
// schedule — into the configuration of a federated unit of agents
// (algorithms/fedavg), for the two families' glue.
package clients

import (
	"maple/algorithms/fedavg"
	"maple/privacy/noise"
	"maple/scenarios"
)

// Params are the client parameters FedAvg and graph FL share (their
// sections algorithm.fedavg and algorithm.graphfl): each field holds the
// section's field of the same name.
type Params struct {
	Participation, BatchSampling, Schedule string
	Participants                           int
	LocalSteps, Batch                      scenarios.IntRange
	Normalized                             bool
}

// Config translates the client parameters p of section (the dotted
// name of their section, for errors), the step size and the noise mechanism
// of c's scenario into the configuration of a federated unit of agents
// clients, naming the field of any unknown value.
func Config(c *scenarios.CurveSpec, section string, agents int, p Params) (*fedavg.Config, error) {
	part, err := fedavg.ParseParticipation(p.Participation)
	if err != nil {
		return nil, c.Errorf(section+".participation", "%v", err)
	}
	sched, err := fedavg.ParseSchedule(p.Schedule)
	if err != nil {
		return nil, c.Errorf(section+".schedule", "%v", err)
	}
	mech, err := noise.ParseMechanism(c.Scenario.Privacy.Mechanism)
	if err != nil {
		return nil, c.Errorf("privacy.mechanism", "%v", err)
	}
	return &fedavg.Config{
		Agents:               agents,
		Participants:         p.Participants,
		Participation:        part,
		StepSize:             c.Scenario.Algorithm.StepSize,
		Normalized:           p.Normalized,
		Epochs:               fedavg.Range{Min: p.LocalSteps.Min, Max: p.LocalSteps.Max},
		Batch:                fedavg.Range{Min: p.Batch.Min, Max: p.Batch.Max},
		Schedule:             sched,
		BatchWithReplacement: p.BatchSampling == "with-replacement",
		Noise:                mech,
	}, nil
}
