package fedavg

import (
	"math"
	"slices"

	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/inputs"
)

// How evenly the global model serves the agents (algorithm.fedavg.
// client_metrics): at every recorded iteration, each of the K agents'
// loss on its own training data — the data term without the regularizer
// (loss.Evaluate's cross-entropy; the squared error for least squares) —
// and, for a classifier, its accuracy there; the columns are their mean
// over the agents, the mean of the worst tenth (the ⌈K/10⌉ highest losses,
// lowest accuracies) and their variance. These are the statistics by which
// q-FedAvg's paper (Li et al., ICLR 2020) measures fairness, there on each
// device's test data, which maple's agents do not hold. Every recorded
// iteration evaluates every agent's whole data set.

// clientColumns returns the per-agent columns when the scenario asks for
// them, none otherwise.
func clientColumns(sc *scenarios.Scenario) []rundir.Column {
	if !fedavgParams(sc).ClientMetrics {
		return nil
	}
	cols := []rundir.Column{
		{Name: "client_loss_mean", Label: "mean client loss"},
		{Name: "client_loss_worst", Label: "client loss, worst 10%"},
		{Name: "client_loss_var", Label: "variance of client losses"},
	}
	if sc.Loss.Kind != "least-squares" {
		cols = append(cols,
			rundir.Column{Name: "client_accuracy_mean", Label: "mean client accuracy"},
			rundir.Column{Name: "client_accuracy_worst", Label: "client accuracy, worst 10%"},
			rundir.Column{Name: "client_accuracy_var", Label: "variance of client accuracies"})
	}
	return cols
}

// clientLog fills the per-agent columns of a run's table.
type clientLog struct {
	p          *inputs.Problem
	t          *rundir.Table
	col        int  // the first column, client_loss_mean
	accuracy   bool // the accuracy columns follow the loss columns
	loss, accu []float64
}

// newClientLog returns the log of the per-agent columns among cols, nil
// when there are none.
func newClientLog(p *inputs.Problem, t *rundir.Table, cols []rundir.Column) *clientLog {
	i := slices.IndexFunc(cols, func(c rundir.Column) bool { return c.Name == "client_loss_mean" })
	if i < 0 {
		return nil
	}
	k := p.Data.Agents()
	return &clientLog{p: p, t: t, col: i, accuracy: i+3 < len(cols) && cols[i+3].Name == "client_accuracy_mean",
		loss: make([]float64, k), accu: make([]float64, k)}
}

// record evaluates w on every agent's data into row.
func (c *clientLog) record(row int, w []float64) {
	for k := range c.loss {
		e := c.p.Loss.Evaluate(w, c.p.Data.Set(k))
		c.loss[k], c.accu[k] = e.CrossEntropy, e.Accuracy
	}
	c.set(row, c.col, c.loss, true)
	if c.accuracy {
		c.set(row, c.col+3, c.accu, false)
	}
}

// set writes the spread of xs into the three columns from col.
func (c *clientLog) set(row, col int, xs []float64, highIsWorse bool) {
	mean, worst, variance := spread(xs, highIsWorse)
	c.t.Set(row, col, mean)
	c.t.Set(row, col+1, worst)
	c.t.Set(row, col+2, variance)
}

// spread returns the mean of xs, the mean of its worst tenth (its ⌈n/10⌉
// largest values if high is worse, smallest otherwise) and its variance
// (over n). It sorts xs.
func spread(xs []float64, highIsWorse bool) (mean, worst, variance float64) {
	n := len(xs)
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	variance /= float64(n)
	slices.Sort(xs)
	tenth := int(math.Ceil(float64(n) / 10))
	tail := xs[:tenth]
	if highIsWorse {
		tail = xs[n-tenth:]
	}
	for _, x := range tail {
		worst += x
	}
	return mean, worst / float64(tenth), variance
}
