package fedavg

import (
	"slices"

	"maple/algorithms/fedavg"
	"maple/rundir"
	"maple/scenarios"
)

// This file wires the compression of the agents' replies
// (algorithm.fedavg.compress, a registry of actors/fedavg) and the bytes
// column (algorithm.fedavg.uplink_bytes) to the scenario: what they refuse
// and the column's bookkeeping.

// The scenario fields of compression.
const (
	fieldCompress    = "algorithm.fedavg.compress"
	fieldUplinkBytes = "algorithm.fedavg.uplink_bytes"
)

// colUplinkBytes is the bytes column: the bytes of the replies the agents
// have sent (their protobuf encoding), cumulative.
const colUplinkBytes = "uplink_bytes"

// validateCompress refuses compression with the privacy features that work
// on dense replies, votes without the server that takes their majority,
// and the bytes column where the agents send no replies.
func validateCompress(v *scenarios.Validator, sc *scenarios.Scenario, fa *FedAvg, draft *fedavg.Config) {
	p := &sc.Privacy
	secure := p.SecureAggregation != nil && p.SecureAggregation.Protocol != "none"
	if draft.Compressing() {
		switch {
		case secure:
			v.Fail(fieldCompress, "%s", fedavg.CompressSecAgg)
		case p.DP != nil:
			v.Fail(fieldCompress, "%s", fedavg.CompressDP)
		case p.Audit != nil:
			v.Fail(fieldCompress, "privacy.audit watches agent 0's dense reply or update (its canaries, its wiretap); compressed replies are not audited")
		}
		if err := draft.CheckVotes(); err != nil {
			v.Fail(fieldCompress, "%s", err)
		}
	}
	if fa.UplinkBytes && secure {
		v.Fail(fieldUplinkBytes, "under secure aggregation the agents send masked shares, not replies: their bytes are in the secure-aggregation cost columns")
	}
}

// uplinkColumns is the bytes column of a scenario that asks for it.
func uplinkColumns(sc *scenarios.Scenario) []rundir.Column {
	if !fedavgParams(sc).UplinkBytes {
		return nil
	}
	return []rundir.Column{{Name: colUplinkBytes, Label: "bytes the agents sent (protobuf, cumulative)", Axis: true}}
}

// uplinkLog counts the bytes of the replies the agents send
// (fedavg.ObsUplink) into the bytes column, at every recorded model.
type uplinkLog struct {
	col   int // the column, −1 without it
	bytes float64
}

// newUplinkLog returns the log of a run whose table has columns cols.
func newUplinkLog(cols []rundir.Column) *uplinkLog {
	return &uplinkLog{col: slices.IndexFunc(cols, func(c rundir.Column) bool { return c.Name == colUplinkBytes })}
}

// observe counts a reply's bytes, and reports whether key was one.
func (l *uplinkLog) observe(key string, v []float64) bool {
	if key != fedavg.ObsUplink {
		return false
	}
	l.bytes += v[0]
	return true
}

// record writes the bytes sent so far into row.
func (l *uplinkLog) record(t *rundir.Table, row int) {
	if l.col >= 0 {
		t.Set(row, l.col, l.bytes)
	}
}
