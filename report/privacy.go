package report

import (
	"fmt"
	"strings"

	"maple/rundir"
)

// privacy is the privacy budget: a row per curve that adds privacy noise,
// and ε(i) round by round where the accountant's bound composes linearly.
type privacy struct {
	Rows   []privacyRow
	Charts []chartView
	// Note names the noisy curves whose accountant reports the budget at
	// the last iteration only, which are not charted.
	Note string
}

type privacyRow struct {
	Label, Formula, Sigma, Norm, PerRound, Final, Target string
}

// epsilonColumn is the privacy budget's column in the report's charts.
var epsilonColumn = rundir.Column{Name: "epsilon", Label: "ε(i), the privacy loss after i iterations"}

// first returns the value of the first of keys that p has.
func first(p map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := p[k]; ok {
			return v
		}
	}
	return nil
}

// privacyBudget tabulates the accountant's ε of every curve with privacy
// noise and charts ε(i) = i·ε round by round where it composes linearly (the
// Laplace bounds, which report epsilon_per_iteration). Other accountants
// (Gaussian noise's (ε, δ), graph FL's bound, Rényi DP) report the budget
// at the last iteration only; their rows say so. It returns nil when no
// curve adds noise.
func privacyBudget(r *rundir.Run, curves []rundir.Curve, set *chartSet) (*privacy, error) {
	byLabel := map[string]*rundir.CurveSummary{}
	for i := range r.Summary.Curves {
		byLabel[r.Summary.Curves[i].Label] = &r.Summary.Curves[i]
	}
	pv := &privacy{}
	budget := make([]rundir.Curve, len(curves))
	var charted, final []string
	for i, c := range curves {
		budget[i] = rundir.Curve{Spec: c.Spec, Runs: 1, Mean: rundir.NewTable(0, 1, 0), Std: rundir.NewTable(0, 1, 0)}
		cs := byLabel[c.Spec.Label]
		if cs == nil {
			continue
		}
		p, ok := cs.Details["privacy"].(map[string]any)
		if !ok || p["mechanism"] == "none" || p["mechanism"] == nil {
			continue // no noise: the curve reports no privacy
		}
		row := privacyRow{Label: cs.Label, Formula: str(p["formula"]), Sigma: num(p["sigma"]), Norm: str(p["norm"]),
			PerRound: num(first(p, "epsilon_per_iteration", "epsilon_bound_per_round")),
			Final:    num(first(p, "epsilon_final", "epsilon_bound_final", "epsilon")), Target: num(p["sigma_for_target"])}
		per, linear := p["epsilon_per_iteration"].(float64)
		if !linear {
			if d, ok := p["delta"]; ok {
				row.Formula = fmt.Sprintf("%s noise, (ε, δ) at δ = %s", str(p["mechanism"]), num(d))
				if b := str(p["bound"]); b != "—" {
					row.Formula += ": " + b
				}
			}
			pv.Rows = append(pv.Rows, row)
			final = append(final, cs.Label)
			continue
		}
		pv.Rows = append(pv.Rows, row)
		charted = append(charted, cs.Label)
		t := rundir.NewTable(cs.Iterations, 1, 1)
		for k, it := range t.Iterations {
			t.Set(k, 0, float64(it)*per)
		}
		budget[i].Cols, budget[i].Mean, budget[i].Std = []rundir.Column{epsilonColumn}, t, rundir.NewTable(cs.Iterations, 1, 1)
	}
	if len(pv.Rows) == 0 {
		return nil, nil
	}
	if len(final) > 0 {
		pv.Note = fmt.Sprintf("The accountant of %s reports the budget at the last iteration only; %s not charted.",
			strings.Join(final, "; "), either(len(final) == 1, "it is", "they are"))
	}
	if len(charted) > 0 {
		var err error
		if pv.Charts, err = set.extraCharts(options(r), budget); err != nil {
			return nil, err
		}
	}
	return pv, nil
}

// auditRow sets an eavesdropper's measured reconstruction error beside its
// prediction and the accountant's ε.
type auditRow struct {
	Label, Links, Predicted, Measured, Epsilon string
}

// auditRows lists the eavesdroppers of the curves that have one: a
// details.audit naming its victim (diffusion's). Other families describe
// their privacy audit under the same key (the Gamma mechanism's, the random
// walk's, Fed-PLT's), which the privacy audit shows from the curve's audit.
func auditRows(s *rundir.Summary) []auditRow {
	var rows []auditRow
	for _, c := range s.Curves {
		a, ok := c.Details["audit"].(map[string]any)
		if _, victim := a["victim"]; !ok || !victim {
			continue
		}
		row := auditRow{Label: c.Label, Links: fmt.Sprintf("agent %v → %v", a["victim"], a["links"]),
			Predicted: "−∞ dB (exact)", Measured: value(&c, c.SteadyState, "audit_msd"), Epsilon: "no privacy noise"}
		if v, ok := a["predicted_msd_db"].(float64); ok {
			row.Predicted = strings.Replace(fmt.Sprintf("%.2f dB", v), "-", "−", 1)
		}
		if p, ok := c.Details["privacy"].(map[string]any); ok && p["mechanism"] != "none" {
			row.Epsilon = num(first(p, "epsilon_final", "epsilon_bound_final", "epsilon"))
		}
		rows = append(rows, row)
	}
	return rows
}
