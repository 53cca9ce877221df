// Package clients translates the client parameters that FedAvg and graph
// federated learning share — participation, local steps, mini-batches, the
// schedule, the client behaviour — into the configuration of a federated
// unit of agents (algorithms/fedavg), for the two families' glue, and runs
// the checks the chosen behaviours make of that configuration.
package clients

import (
	"errors"

	afedavg "maple/actors/fedavg"
	"maple/algorithms/fedavg"
	"maple/internal/params"
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
	Client                                 scenarios.Behaviour
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
	cfg := &fedavg.Config{
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
	}
	if _, err := afedavg.ConfigureClient(cfg, p.Client.Kind, p.Client.Params); err != nil {
		return nil, c.Errorf(section+".client", "%v", err)
	}
	return cfg, nil
}

// Slot is a behaviour chosen for a configuration, and the scenario field
// that chose it.
type Slot struct {
	Field string
	Value any
}

// Check runs the checks each chosen behaviour makes of the rest of the
// configuration (fedavg.Checker) and reports each failure at its field: the
// parameter's when the check names one.
func Check(cfg *fedavg.Config, slots []Slot, fail func(field, msg string)) {
	for _, s := range slots {
		c, ok := s.Value.(fedavg.Checker)
		if !ok {
			continue
		}
		if err := c.Validate(cfg); err != nil {
			var pe *params.Error
			if errors.As(err, &pe) {
				fail(s.Field+"."+pe.Param, pe.Msg)
			} else {
				fail(s.Field, err.Error())
			}
		}
	}
}
