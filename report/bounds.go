package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"maple/figures"
	"maple/rundir"
)

// bounds is the privacy audit of the page: for every curve whose summary
// has an audit (rundir.Audit, privacy.audit), a row with the accountant's
// upper bound on ε beside the audit's lower bounds, and a chart of them
// against the iteration.
type bounds struct {
	Rows   []boundsRow
	Charts []chartView
	// Findings name the rows at which a lower bound exceeds the
	// accountant's ε, and summaries whose series do not match their
	// iterations.
	Findings []string
}

// boundsRow is one audited curve: what was audited and how, the bounds at
// its last row, and the texts that say what each bound assumes.
type boundsRow struct {
	Run, Label, Method, Canary, View, Units, Level string
	// Upper is the accountant's ε (see epsilonOrInf) and
	// Neighbours its relation and sampling.
	Upper, Neighbours string
	// Strict, Assumed and Measured are the lower bounds, MeasuredNoise the
	// noise multiplier the measured one found; Ratio is Strict/Upper.
	Strict, Assumed, Measured, MeasuredNoise, Ratio string
	Statistics                                      []statistic
}

// statistic says how one bound was computed and what it assumes.
type statistic struct{ Name, Text string }

// The lines of an audit's chart, in this order whatever the audit has, so
// that each bound keeps its style (figures.StyleOf of its index) in every
// chart.
const (
	upperLine = iota
	strictLine
	assumedLine
	measuredLine
	boundLines
)

// boundsOf returns the privacy audit of the audited curves of runs — named
// by names in a comparison (nil for one run), each curve's label prefixed
// by its run's — with a chart per curve titled title, or nil when no curve
// was audited.
func boundsOf(runs []*rundir.Run, names []string, title string, set *chartSet) (*bounds, error) {
	b := &bounds{}
	for i, r := range runs {
		for _, c := range r.Summary.Curves {
			a := c.Audit
			if a == nil {
				continue
			}
			label := c.Label
			row := boundsRowOf(a)
			row.Label = c.Label
			if names != nil {
				row.Run, label = names[i], names[i]+", "+c.Label
			}
			b.Rows = append(b.Rows, row)
			b.Findings = append(b.Findings, auditFindings(label, a)...)
			ch, caption := boundsChart(title, label, a)
			ch.Name = "audit-" + strconv.Itoa(len(b.Rows))
			v, err := set.add(ch.Name, []figures.Chart{ch})
			if err != nil {
				return nil, err
			}
			v.Common = caption
			b.Charts = append(b.Charts, v)
		}
	}
	if len(b.Rows) == 0 {
		return nil, nil
	}
	return b, nil
}

// at returns xs[k] as a float64, NaN (not evaluated, or not finite: what
// summary.json writes as null) beyond xs's end.
func at(xs []rundir.Number, k int) float64 {
	if k >= len(xs) {
		return math.NaN()
	}
	return float64(xs[k])
}

// boundsRowOf tabulates an audit at its last row.
func boundsRowOf(a *rundir.Audit) boundsRow {
	row := boundsRow{Method: a.Method, Canary: a.Canary, View: a.View,
		Level:  fmt.Sprintf("%s %%, δ = %s", strconv.FormatFloat(100*a.Confidence, 'g', 6, 64), strconv.FormatFloat(a.Delta, 'g', 4, 64)),
		Strict: epsilon(a.LowerFinal), Assumed: "—", Measured: "—", Upper: "— (no accountant)", Neighbours: "—", Ratio: "—"}
	switch {
	case a.RunsIn > 0 || a.RunsOut > 0:
		row.Units = fmt.Sprintf("%d runs in, %d out", a.RunsIn, a.RunsOut)
	case a.Canaries > 0:
		row.Units = fmt.Sprintf("%s, %d in; %d of %d guesses right", plural(a.Canaries, "canary", "canaries"), a.Included, a.Correct, a.Guesses)
	default:
		row.Units = "—"
	}
	if len(a.Upper) > 0 {
		row.Upper = epsilonOrInf(a.UpperFinal)
		row.Neighbours = neighbours(a)
		switch u := float64(a.UpperFinal); {
		case math.IsNaN(u):
			row.Ratio = "— (no finite upper bound)"
		case u > 0:
			row.Ratio = ratio(a.Ratio)
		}
		acc := a.Accountant
		if acc == "" {
			acc = "summary.json does not name the accountant"
		}
		row.Statistics = append(row.Statistics, statistic{"upper bound", acc})
	}
	row.Statistics = append(row.Statistics, statistic{"strict lower bound", a.Statistic})
	if len(a.Assumed) > 0 {
		row.Assumed = epsilon(a.AssumedFinal)
		row.Statistics = append(row.Statistics, statistic{"GDP lower bound (assumed)", a.AssumedStatistic})
	}
	if len(a.Measured) > 0 {
		row.Measured = epsilon(a.MeasuredFinal)
		row.MeasuredNoise = "z: no finite bound"
		if z := float64(a.MeasuredNoise); !math.IsNaN(z) {
			row.MeasuredNoise = "z ≤ " + strconv.FormatFloat(z, 'g', 4, 64)
		}
		row.Statistics = append(row.Statistics, statistic{"measured-noise lower bound", a.MeasuredStatistic})
	}
	return row
}

// neighbours names the accountant's neighbouring relation and sampling,
// "—" if the summary names neither.
func neighbours(a *rundir.Audit) string {
	var parts []string
	if a.Relation != "" {
		parts = append(parts, a.Relation)
	}
	if a.Sampling != "" {
		parts = append(parts, "sampling: "+a.Sampling)
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// epsilon writes a bound with four significant digits, "—" for a value
// summary.json left null.
func epsilon(x rundir.Number) string {
	if !known(x) {
		return "—"
	}
	return strings.ReplaceAll(strconv.FormatFloat(float64(x), 'g', 4, 64), "-", "−")
}

// epsilonOrInf writes an accountant's ε: summary.json writes an ε of +∞
// (an accountant that bounds nothing) as null, and so an undefined one
// (the Gamma mechanism's rows without a mechanism), which it cannot tell
// apart.
func epsilonOrInf(x rundir.Number) string {
	if !known(x) {
		return "+∞ or undefined"
	}
	return epsilon(x)
}

// ratio writes a lower bound's fraction of the upper one.
func ratio(x rundir.Number) string {
	if !known(x) {
		return "—"
	}
	return strconv.FormatFloat(float64(x), 'f', 2, 64)
}

// auditFindings names what the page must not hide about an audit: a lower
// bound above the accountant's ε at some row — the strict bound holds with
// the stated confidence whatever the mechanism, so that contradicts the
// accountant or is the chance the confidence leaves; the assumed and
// measured bounds rest besides on assumptions that can fail — and series
// whose lengths are not the iterations'.
func auditFindings(label string, a *rundir.Audit) []string {
	var out []string
	n := len(a.Iterations)
	for _, s := range []struct {
		name string
		xs   []rundir.Number
	}{{"lower", a.Lower}, {"upper", a.Upper}, {"assumed", a.Assumed}, {"measured", a.Measured}} {
		if len(s.xs) != 0 && len(s.xs) != n {
			out = append(out, fmt.Sprintf("curve %s: the audit's %s has %d values for %d iterations; those beyond are not shown", label, s.name, len(s.xs), n))
		}
	}
	if len(a.Upper) == 0 {
		return out
	}
	chance := fmt.Sprintf("each row's bound holds with confidence %s %% on its own, not jointly with the others, so this can be the chance it leaves",
		strconv.FormatFloat(100*a.Confidence, 'g', 6, 64))
	for _, s := range []struct {
		name, why string
		xs        []rundir.Number
	}{
		{"strict lower bound", "the accountant's ε or the audit is wrong, or " + chance, a.Lower},
		{"GDP lower bound", "the mechanism's trade-off curve is not Gaussian as the bound assumes, the accountant's ε is wrong, or " + chance, a.Assumed},
		{"measured-noise lower bound", "the rounds are not the declared mechanism as the bound assumes, the accountant's ε is wrong, or " + chance, a.Measured},
	} {
		above, both, worst := 0, 0, -1
		for k := range min(len(s.xs), n) {
			lo, up := at(s.xs, k), at(a.Upper, k)
			if !known(rundir.Number(lo)) || !known(rundir.Number(up)) {
				continue
			}
			both++
			if lo > up {
				above++
				if worst < 0 || lo-up > at(s.xs, worst)-at(a.Upper, worst) {
					worst = k
				}
			}
		}
		if above > 0 {
			out = append(out, fmt.Sprintf("curve %s: the %s exceeds the accountant's ε at %d of the %d rows where both are numbers (the most at iteration %d: %s > %s): %s",
				label, s.name, above, both, a.Iterations[worst], epsilon(s.xs[worst]), epsilon(a.Upper[worst]), s.why))
		}
	}
	return out
}

// boundsChart returns the chart of an audit's bounds against the
// iteration — a line per bound, with a value at every row, NaN where
// summary.json has null: the chart draws a line through the rows where it
// is a number, and hovering another row shows no value rather than a
// neighbour's — and the caption that says what the lines leave out: the
// rows where the accountant's ε is not a number: +∞, or undefined.
func boundsChart(title, label string, a *rundir.Audit) (figures.Chart, string) {
	lines := make([]figures.Line, boundLines)
	series := [boundLines][]rundir.Number{upperLine: a.Upper, strictLine: a.Lower, assumedLine: a.Assumed, measuredLine: a.Measured}
	names := [boundLines]string{strictLine: "strict", assumedLine: "GDP", measuredLine: "measured-noise"}
	var unbounded []int // rows where the upper bound is no number: +∞ or undefined
	var sparse []string // the lower bounds evaluated at some rows only
	for j, xs := range series {
		if len(xs) == 0 {
			continue
		}
		gaps := false
		for k, it := range a.Iterations {
			v := at(xs, k)
			if !known(rundir.Number(v)) && k < len(xs) {
				if j == upperLine {
					unbounded = append(unbounded, k)
				}
				gaps = true
			}
			lines[j].X = append(lines[j].X, float64(it))
			lines[j].Mean = append(lines[j].Mean, v)
		}
		if gaps && j != upperLine {
			sparse = append(sparse, names[j])
		}
	}
	lines[upperLine].Label = "upper: the accountant's ε"
	if n := neighbours(a); n != "—" {
		lines[upperLine].Label += " (" + n + ")"
	}
	if len(unbounded) > 0 {
		lines[upperLine].Label += "; +∞ or undefined at " + iterationRanges(a.Iterations, unbounded) + ", not drawn"
	}
	lines[strictLine].Label = "lower: strict (assumes nothing of the mechanism)"
	lines[assumedLine].Label = "lower: GDP (assumes a Gaussian trade-off curve)"
	lines[measuredLine].Label = "lower: measured noise (assumes the declared mechanism)"
	caption := fmt.Sprintf("%s audit, %s canary, %s view; lower bounds with confidence %s %%, ε at δ = %s.",
		a.Method, a.Canary, a.View, strconv.FormatFloat(100*a.Confidence, 'g', 6, 64), strconv.FormatFloat(a.Delta, 'g', 4, 64))
	switch {
	case len(a.Upper) == 0:
		caption += " The family records no accountant for this mechanism: no upper bound."
	case len(unbounded) > 0:
		caption += " At " + iterationRanges(a.Iterations, unbounded) + " summary.json has no number for the accountant's ε: it is +∞ (the accountant bounds nothing) " +
			"or undefined (no mechanism at that row), which summary.json writes alike as null; the upper line leaves those out."
	}
	if len(sparse) > 0 {
		caption += fmt.Sprintf(" The %s %s evaluated at some rows only (null elsewhere in summary.json), which %s.",
			andList(sparse), either(len(sparse) == 1, "bound is", "bounds are"), either(len(sparse) == 1, "its line joins", "their lines join"))
	}
	return figures.Chart{Title: title + "\n" + label, Metric: rundir.Column{Name: "audit", Label: "ε of " + label + ": the accountant's upper bound and the audit's lower bounds"},
		XLabel: "iteration", YLabel: "ε at δ = " + strconv.FormatFloat(a.Delta, 'g', 4, 64), Lines: lines, Legend: true}, caption
}

// iterationRanges writes the iterations of increasing rows of a table,
// consecutive rows as a range: "iteration 7", "iterations 3–9 and 12".
func iterationRanges(iterations, rows []int) string {
	var parts []string
	for i := 0; i < len(rows); {
		j := i
		for j+1 < len(rows) && rows[j+1] == rows[j]+1 {
			j++
		}
		part := strconv.Itoa(iterations[rows[i]])
		if j > i {
			part += "–" + strconv.Itoa(iterations[rows[j]])
		}
		parts = append(parts, part)
		i = j + 1
	}
	return either(len(rows) == 1, "iteration ", "iterations ") + andList(parts)
}
