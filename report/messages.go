package report

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"

	"maple/actors/trace"
	"maple/actors/trace/stats"
	"maple/rundir"
)

// messages are the message statistics: from the trace when the run has one
// — per round and curve, per type and per actor — else the counts of
// summary.json.
type messages struct {
	Source string
	Charts []chartView
	// Setup describes round 0, the messages before the first iteration.
	Setup   []string
	Types   []stats.RoundType
	Actors  []stats.Actor
	Omitted int // actors left out of the table
	PerRun  [][2]string
}

// maxActorRows bounds the per-actor table; the rest are counted.
const maxActorRows = 60

// The columns of the per-round charts.
var (
	messagesColumn = rundir.Column{Name: "messages", Label: "messages per round, mean over the runs"}
	bytesColumn    = rundir.Column{Name: "bytes", Label: "bytes per round (protobuf), mean over the runs"}
)

// messageStats summarizes the trace, or without one the summary's counts.
func messageStats(r *rundir.Run, curves []rundir.Curve, set *chartSet) (*messages, error) {
	t, err := rundir.OpenTrace(r.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		m := &messages{Source: "summary.json (the run has no trace: run it with --trace for the counts per round, per type and per actor)"}
		for _, c := range r.Summary.Curves {
			// summary.json leaves out a zero count and a zero duration
			// (omitempty): a run without messages or without a clock.
			if !(c.MessagesPerRun > 0) {
				continue
			}
			text := fmt.Sprintf("%.0f messages per run", float64(c.MessagesPerRun))
			if c.VirtualTime > 0 {
				text += fmt.Sprintf(", %s s of virtual time", strconv.FormatFloat(float64(c.VirtualTime), 'g', 6, 64))
			}
			m.PerRun = append(m.PerRun, [2]string{c.Label, text})
		}
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	defer t.Close()
	all := stats.New()
	perCurve := make([]*stats.Accumulator, len(curves))
	index := map[string]int{}
	for i, c := range curves {
		perCurve[i] = stats.New()
		index[c.Spec.Label] = i
	}
	err = t.Scan(trace.Filter{}, func(rec *trace.Record) error {
		all.Add(rec)
		if i, ok := index[rec.Curve]; ok {
			perCurve[i].Add(rec)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	st := all.Stats()
	m := &messages{Source: fmt.Sprintf("%s: %s in %s", filepath.Base(t.Path), plural(st.Records, "message", "messages"), plural(st.Runs, "run", "runs")),
		Types: st.Types, Actors: st.Actors}
	if st.Duration > 0 {
		m.Source += fmt.Sprintf(", %s s of virtual time in all", strconv.FormatFloat(st.Duration, 'g', 6, 64))
	}
	if len(m.Actors) > maxActorRows {
		m.Omitted = len(m.Actors) - maxActorRows
		m.Actors = m.Actors[:maxActorRows]
	}
	counts := make([]rundir.Curve, len(curves))
	drawn := false
	for i, c := range curves {
		counts[i] = rundir.Curve{Spec: c.Spec, Runs: 1, Mean: rundir.NewTable(0, 1, 0), Std: rundir.NewTable(0, 1, 0)}
		cs := perCurve[i].Stats()
		if cs.Runs == 0 {
			continue
		}
		last := 0
		for _, rt := range cs.Rounds {
			last = max(last, rt.Round)
		}
		mean, std := rundir.NewTable(last, 1, 2), rundir.NewTable(last, 1, 2)
		for k := range mean.Iterations {
			mean.Set(k, 0, 0)
			mean.Set(k, 1, 0)
		}
		runs := float64(cs.Runs)
		var setupCount, setupBytes float64
		for _, rt := range cs.Rounds {
			if rt.Round < 0 {
				continue
			}
			mean.Set(rt.Round, 0, mean.Get(rt.Round, 0)+float64(rt.Count)/runs)
			mean.Set(rt.Round, 1, mean.Get(rt.Round, 1)+float64(rt.Bytes)/runs)
			if rt.Round == 0 {
				setupCount += float64(rt.Count) / runs
				setupBytes += float64(rt.Bytes) / runs
			}
		}
		if setupCount > 0 {
			m.Setup = append(m.Setup, fmt.Sprintf("%s: %s %s, %s bytes per run", c.Spec.Label, strconv.FormatFloat(setupCount, 'g', 6, 64),
				either(setupCount == 1, "message", "messages"), strconv.FormatFloat(setupBytes, 'g', 6, 64)))
		}
		if last > 0 {
			counts[i].Cols, counts[i].Mean, counts[i].Std = []rundir.Column{messagesColumn, bytesColumn}, mean, std
			drawn = true
		}
	}
	if drawn {
		if m.Charts, err = set.extraCharts(options(r), counts); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// setupNote is the sentence about round 0.
func (m *messages) SetupNote() string {
	if len(m.Setup) == 0 {
		return ""
	}
	return "Round 0, before the first iteration (the start and any set-up, such as key agreement), is not charted: " + strings.Join(m.Setup, "; ") + "."
}
