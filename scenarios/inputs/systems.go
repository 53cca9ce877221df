package inputs

import (
	"context"
	"io"

	"maple/algorithms/systems"
	"maple/scenarios"
)

// SystemsModel builds the systems model of a curve's scenario (the network
// section), reading the files it names (stopping once ctx is done). Problems
// are scenario errors naming the field.
func SystemsModel(ctx context.Context, c *scenarios.CurveSpec, dir string) (*systems.Model, error) {
	sc := c.Scenario
	n := &sc.Network
	agents := sc.Data.Agents
	m := &systems.Model{
		Latency: n.Latency, Jitter: n.Jitter, Bandwidth: n.Bandwidth, GradientTime: n.GradientTime,
		Loss: n.Loss, Duplicate: n.Duplicate, Dropout: n.Dropout,
	}
	if st := n.StepTime; st != nil {
		kind, err := systems.ParseComputeKind(st.Kind)
		if err != nil {
			return nil, c.Errorf("network.step_time.kind", "%v", err)
		}
		m.Compute = systems.Compute{Kind: kind, Value: st.Value, Min: st.Range.Min, Max: st.Range.Max,
			Median: st.Median, Sigma: st.Sigma, PerStep: st.Redraw == "per-step"}
		if kind == systems.Table {
			m.Compute.Table, err = readFile(ctx, c, dir, "network.step_time.file", st.File, maxTableBytes, func(r io.Reader, name string) ([]float64, error) {
				return systems.ReadStepTable(r, name, agents)
			})
			if err != nil {
				return nil, err
			}
		}
	}
	for _, dc := range n.Classes {
		cl := systems.Class{Name: dc.Name, Fraction: dc.Fraction, Slowdown: dc.Slowdown, Latency: dc.Latency, Bandwidth: dc.Bandwidth, Dropout: -1}
		if dc.Dropout != nil {
			cl.Dropout = *dc.Dropout
		}
		m.Classes = append(m.Classes, cl)
	}
	if n.Availability != "" {
		var err error
		m.Availability, err = readFile(ctx, c, dir, "network.availability", n.Availability, maxTableBytes, func(r io.Reader, name string) (map[int][]systems.Window, error) {
			return systems.ReadAvailability(r, name, agents)
		})
		if err != nil {
			return nil, err
		}
	}
	if cr := n.Crashes; cr != nil {
		m.CrashRate = cr.Rate
		if len(cr.At) > 0 {
			m.Crashes = map[int]int{}
			for _, at := range cr.At {
				m.Crashes[at.Agent] = at.Round
			}
		}
	}
	if err := m.Validate(agents); err != nil {
		return nil, c.Errorf("network", "%v", err)
	}
	return m, nil
}
