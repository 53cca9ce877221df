package run

import (
	"maple/actors"
	"maple/algorithms/systems"
	"maple/rundir"
	"maple/scenarios"
)

// TimeColumns is the virtual-time column of output.x_axis time: the virtual
// time at the end of each recorded iteration, an axis every other metric is
// also drawn against.
func TimeColumns(sc *scenarios.Scenario) []rundir.Column {
	if sc.Output.XAxis != "time" {
		return nil
	}
	return []rundir.Column{{Name: "time", Label: "virtual time (s)", Axis: true}}
}

// Columns of the systems model's events, per recorded round.
var faultColumns = []rundir.Column{
	{Name: "dropped", Label: "agents that did not answer, per round"},
	{Name: "late", Label: "replies after their round closed, per round"},
	{Name: "lost", Label: "messages lost on their links, per round"},
}

// SystemsColumns are the columns the systems model adds to a family's: the
// virtual time (output.x_axis time) and, when replies can go missing, the
// per-round counts of faultColumns.
func SystemsColumns(sc *scenarios.Scenario, faulty bool) []rundir.Column {
	cols := TimeColumns(sc)
	if faulty {
		cols = append(cols, faultColumns...)
	}
	return cols
}

// SystemsLog keeps what the systems model does during one run — the virtual
// time of every round and the counts of its events — and writes the
// systems columns of the run's table.
type SystemsLog struct {
	t             *rundir.Table
	timeCol       int // column of time, −1 if absent
	faultCol      int // column of dropped (late, lost follow), −1 if absent
	rounds        int
	dropped, late []float64
	lost          []float64
	totals        map[string]int
	staleness     float64
	lastTime      float64
	timeObserved  bool
	staleUpdates  int
	emptyRounds   int
	timeouts      int
	duplicated    int
}

// NewSystemsLog returns the log of a run whose table has columns cols.
func NewSystemsLog(sc *scenarios.Scenario, t *rundir.Table, cols []rundir.Column) *SystemsLog {
	l := &SystemsLog{t: t, timeCol: -1, faultCol: -1, rounds: sc.Iterations, totals: map[string]int{},
		dropped: make([]float64, sc.Iterations+1), late: make([]float64, sc.Iterations+1), lost: make([]float64, sc.Iterations+1)}
	for i, c := range cols {
		switch c.Name {
		case "time":
			l.timeCol = i
		case "dropped":
			l.faultCol = i
		}
	}
	if l.timeCol >= 0 {
		t.Set(0, l.timeCol, 0)
	}
	return l
}

// Observe records an observation of the systems model (the keys of
// the families' systems models and the engine's).
func (l *SystemsLog) Observe(round int, key string, v []float64) {
	count := func(per []float64) {
		if round >= 0 && round < len(per) {
			per[round]++
		}
	}
	switch key {
	case "time":
		l.lastTime, l.timeObserved = v[0], true
		if l.timeCol >= 0 {
			if row := l.t.Row(round); row >= 0 {
				l.t.Set(row, l.timeCol, v[0])
			}
		}
	case "dropped":
		count(l.dropped)
	case "late":
		count(l.late)
	case actors.KeyLost:
		count(l.lost)
	case actors.KeyDuplicate:
		l.duplicated++
	case "empty":
		l.emptyRounds++
	case "timeout":
		l.timeouts++
	case "staleness":
		l.staleness += v[0]
		l.staleUpdates++
	default:
		return
	}
	l.totals[key]++
}

// Finish writes the per-round counts into the table and, for run 0, the
// totals into the summary's details under "systems", which it returns for
// the family to complete (nil for other runs).
func (l *SystemsLog) Finish(j *Job, m *systems.Model, agents int) map[string]any {
	if l.faultCol >= 0 {
		for r, it := range l.t.Iterations {
			l.t.Set(r, l.faultCol, l.dropped[it])
			l.t.Set(r, l.faultCol+1, l.late[it])
			l.t.Set(r, l.faultCol+2, l.lost[it])
		}
	}
	if l.timeObserved {
		j.Stats.duration = l.lastTime
	}
	if j.Run != 0 {
		return nil
	}
	details := map[string]any{}
	sum := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		return s
	}
	details["dropped"] = sum(l.dropped)
	details["late"] = sum(l.late)
	details["lost"] = sum(l.lost)
	details["duplicated"] = l.duplicated
	if l.emptyRounds > 0 {
		details["empty_rounds"] = l.emptyRounds
	}
	if l.timeouts > 0 {
		details["timeouts"] = l.timeouts
	}
	if l.staleUpdates > 0 {
		details["mean_staleness"] = l.staleness / float64(l.staleUpdates)
	}
	if l.timeObserved && l.lastTime > 0 {
		details["virtual_time"] = l.lastTime
		details["virtual_time_per_round"] = l.lastTime / float64(l.rounds)
	}
	if len(m.Classes) > 0 {
		counts := m.ClassCounts(agents)
		classes := map[string]int{}
		for i, c := range m.Classes {
			classes[c.Name] = counts[i]
		}
		details["classes"] = classes
	}
	j.Stats.Details["systems"] = details
	return details
}
