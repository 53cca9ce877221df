package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"maple/figures"
	"maple/rundir"
	"maple/scenarios"
)

// chartView is a chart of the page: its heading and caption, and the static
// SVG figure the page shows without scripts. Its data is in the chart set.
type chartView struct {
	ID, Heading, Common string
	SVG                 template.HTML
}

// chartSet gathers the data of the page's charts, for the script.
type chartSet struct {
	output scenarios.Output
	specs  []jsChart
	ids    map[string]bool
	// flat are the metrics that are zero throughout, not drawn.
	flat map[string]bool
}

func newChartSet(out scenarios.Output) *chartSet {
	return &chartSet{output: out, ids: map[string]bool{}, flat: map[string]bool{}}
}

// jsChart is a chart as the script draws it: its y axis, the scale it
// starts on, and one view per x axis it can be drawn against, the default
// first.
type jsChart struct {
	ID string `json:"id"`
	// Y labels the y axis, without a unit of scale; DB is set when the
	// values are mean-square deviations, which have a dB form.
	Y  string `json:"y"`
	DB bool   `json:"db"`
	// Scale is the scale shown first: linear, log or db.
	Scale string `json:"scale"`
	// Sweep marks a steady state against a parameter; XTicks are the
	// parameter's values.
	Sweep  bool     `json:"sweep"`
	XTicks []jsNum  `json:"xticks,omitempty"`
	Views  []jsView `json:"views"`
}

// jsView is a chart against one x axis.
type jsView struct {
	X string `json:"x"`
	// Log is set when the axis starts logarithmic, Whole when its values
	// are whole numbers (iterations).
	Log   bool     `json:"log"`
	Whole bool     `json:"whole,omitempty"`
	Lines []jsLine `json:"lines"`
}

// jsLine is a curve, on the linear scale, in its figure style: x, the mean
// m and its standard error se (absent with a single run); a sweep line's
// fitted power law at its ends.
type jsLine struct {
	Label string     `json:"label"`
	Color string     `json:"color"`
	Band  string     `json:"band"`
	Dash  []float64  `json:"dash,omitempty"`
	X     []jsNum    `json:"x"`
	M     []jsNum    `json:"m"`
	SE    []jsNum    `json:"se,omitempty"`
	Fit   [][2]jsNum `json:"fit,omitempty"`
}

// jsNum is a number of the charts' data: null when it is not finite.
type jsNum float64

// MarshalJSON implements json.Marshaler.
func (x jsNum) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

func nums(xs []float64) []jsNum {
	if xs == nil {
		return nil
	}
	out := make([]jsNum, len(xs))
	for i, x := range xs {
		out[i] = jsNum(x)
	}
	return out
}

// json returns the data of every chart, for the page's #maple-data.
func (s *chartSet) json() (template.JS, error) {
	if s.specs == nil {
		s.specs = []jsChart{}
	}
	js, err := json.Marshal(s.specs) // escapes <, > and &: safe in a script element
	if err != nil {
		return "", err
	}
	return template.JS(js), nil // #nosec G203: JSON with <, >, & escaped
}

// options returns how the figures of run r are drawn, as maple run drew
// them, but with every column a curve has.
func options(r *rundir.Run) figures.Options {
	title := r.Summary.Description
	if title == "" {
		title = r.Summary.Scenario
	}
	return figures.Options{Title: title, Name: r.Summary.Scenario, GroupBy: r.Output.GroupBy, Linear: r.Output.Linear,
		From: r.Output.PlotFrom}
}

// metricCharts returns the charts of the curves' metrics — one per metric
// (and group of output.group_by), drawn against the iteration and each
// axis column, against the virtual time first with output.x_axis time —
// and the sweep charts, leaving out the metrics that are zero throughout,
// which flat names in one sentence.
func (s *chartSet) metricCharts(opts figures.Options, curves []rundir.Curve) (charts, sweeps []chartView, flat string, err error) {
	all, err := figures.Charts(opts, curves)
	if err != nil {
		return nil, nil, "", err
	}
	type key struct{ group, metric string }
	var order []key
	views := map[key][]figures.Chart{}
	// Per metric, the values drawn against the iteration, and those not 0.
	type count struct{ all, nonzero int }
	values := map[string]*count{}
	for _, ch := range all {
		if ch.Sweep {
			continue
		}
		k := key{ch.Group, ch.Metric.Name}
		if _, ok := views[k]; !ok {
			order = append(order, k)
		}
		views[k] = append(views[k], ch)
		if ch.Against != "" {
			continue
		}
		n := values[k.metric]
		if n == nil {
			n = &count{}
			values[k.metric] = n
		}
		for _, l := range ch.Lines {
			for _, m := range l.Mean {
				n.all++
				if m != 0 {
					n.nonzero++
				}
			}
		}
	}
	var flats []string
	for _, k := range order {
		if n := values[k.metric]; n != nil && n.all > 0 && n.nonzero == 0 {
			if !s.flat[k.metric] {
				s.flat[k.metric] = true
				name := k.metric
				if label := views[k][0].Metric.Label; label != name {
					name += " (" + label + ")"
				}
				flats = append(flats, name)
			}
			continue
		}
		vs := views[k]
		name := vs[0].Name // against the iteration: the chart's id whatever its first view
		if s.output.XAxis == "time" {
			// The scenario's own axis first: its virtual time.
			if i := slices.IndexFunc(vs, func(c figures.Chart) bool { return c.Against == "time" }); i > 0 {
				vs = append([]figures.Chart{vs[i]}, slices.Delete(slices.Clone(vs), i, i+1)...)
			}
		}
		v, err := s.add(name, vs)
		if err != nil {
			return nil, nil, "", err
		}
		charts = append(charts, v)
	}
	for _, ch := range all {
		if !ch.Sweep || s.flat[ch.Metric.Name] {
			continue
		}
		v, err := s.add(ch.Name, []figures.Chart{ch})
		if err != nil {
			return nil, nil, "", err
		}
		sweeps = append(sweeps, v)
	}
	if len(flats) > 0 {
		flat = fmt.Sprintf("%s: 0 at every recorded iteration of every curve, not drawn.", andList(flats))
	}
	return charts, sweeps, flat, nil
}

// extraCharts returns the charts of columns the report computes (the
// privacy budget, the message counts): against the iteration only.
func (s *chartSet) extraCharts(opts figures.Options, curves []rundir.Curve) ([]chartView, error) {
	all, err := figures.Charts(opts, curves)
	if err != nil {
		return nil, err
	}
	var out []chartView
	for _, ch := range all {
		if ch.Sweep || ch.Against != "" {
			continue
		}
		v, err := s.add(ch.Name, []figures.Chart{ch})
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func andList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// either returns one if single, else many.
func either(single bool, one, many string) string {
	if single {
		return one
	}
	return many
}

// add records the chart drawn against each of views (the first shown
// first) and returns its view for the page, with the first view's static
// figure; its id is chart-NAME.
func (s *chartSet) add(name string, views []figures.Chart) (chartView, error) {
	first := views[0]
	id := "chart-" + name
	for n := 2; s.ids[id]; n++ {
		id = fmt.Sprintf("chart-%s-%d", name, n)
	}
	s.ids[id] = true
	label := strings.TrimSuffix(first.Metric.Label, " (dB)")
	v := chartView{ID: id, Heading: label, Common: strings.Join(first.Common, ", ")}
	if first.Sweep {
		v.Heading = "steady-state " + label + " against " + first.XLabel
	}
	svg, err := first.SVG()
	if err != nil {
		return v, err
	}
	v.SVG = inlineSVG(svg)
	spec := jsChart{ID: id, Y: label, DB: first.Metric.Decibel, Scale: "linear", Sweep: first.Sweep}
	switch {
	case first.Sweep:
		spec.Scale, spec.XTicks = "log", nums(first.XTicks)
	case first.Decibel:
		spec.Scale = "db"
	}
	for _, ch := range views {
		view := jsView{X: ch.XLabel, Log: ch.LogX, Whole: !ch.Sweep && ch.Against == ""}
		for i, l := range ch.Lines {
			st := figures.StyleOf(i)
			line := jsLine{Label: l.Label, Color: st.Hex(), Band: st.BandCSS(), X: nums(l.X), M: nums(l.Mean), SE: nums(l.SE)}
			for _, d := range st.Dashes {
				line.Dash = append(line.Dash, d.Points())
			}
			if ch.Sweep && len(l.X) < 2 {
				line.X, line.M = nil, nil // a line of fewer than two values is not drawn, as in the figure
			}
			if len(l.Fit) == 2 && len(line.X) > 0 {
				line.Fit = [][2]jsNum{{jsNum(l.Fit[0].X), jsNum(l.Fit[0].Y)}, {jsNum(l.Fit[1].X), jsNum(l.Fit[1].Y)}}
			}
			if line.X == nil {
				line.X, line.M = []jsNum{}, []jsNum{}
			}
			view.Lines = append(view.Lines, line)
		}
		spec.Views = append(spec.Views, view)
	}
	s.specs = append(s.specs, spec)
	return v, nil
}

// inlineSVG prepares an SVG document for the page: its <svg> element alone,
// its text in DejaVu Sans (as in the PNGs) or else the reader's sans-serif.
func inlineSVG(doc []byte) template.HTML {
	s := string(doc)
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:]
	}
	s = strings.ReplaceAll(s, "font-family:DejaVu Sans;", "font-family:'DejaVu Sans',sans-serif;")
	return template.HTML(s) // #nosec G203: drawn by gonum/plot from the run's numbers and labels, which it escapes
}
