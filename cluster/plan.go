package cluster

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"

	"gopkg.in/yaml.v3"

	"maple/cluster/wire"
	"maple/scenarios"
	"maple/scenarios/run"
)

// fingerprint hashes what a plan's jobs compute from: each curve's label
// and resolved scenario. A worker that rebuilds the coordinator's plan from
// its text checks that the fingerprints agree before running any job.
func fingerprint(plan *scenarios.Plan) []byte {
	h := sha256.New()
	for _, c := range plan.Curves {
		sc, err := yaml.Marshal(c.Scenario)
		if err != nil {
			sc = []byte(err.Error()) // cannot happen for a loaded plan; differs from any scenario
		}
		for _, part := range [][]byte{[]byte(c.Label), sc} {
			h.Write(binary.AppendUvarint(nil, uint64(len(part))))
			h.Write(part)
		}
	}
	return h.Sum(nil)
}

// rawDetails converts a run's details to their wire form.
func rawDetails(d map[string]json.RawMessage) map[string][]byte {
	out := make(map[string][]byte, len(d))
	for k, v := range d {
		out[k] = v
	}
	return out
}

// outcomeOf converts a JobOutcome to the runner's Outcome.
func outcomeOf(o *wire.JobOutcome) *run.Outcome {
	d := make(map[string]json.RawMessage, len(o.Details))
	for k, v := range o.Details {
		d[k] = v
	}
	return &run.Outcome{Table: o.Table, Messages: o.Messages, Duration: o.Duration, Warnings: o.Warnings, Details: d}
}
