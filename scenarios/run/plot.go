package run

import (
	"math"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// writePlots draws one figure per metric column, every curve a line, and
// saves it as PNG and SVG. It returns the file names written.
func writePlots(outDir, title string, curves []curveResult) ([]string, error) {
	var files []string
	for k, col := range curves[0].cols {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "iteration"
		p.Y.Label.Text = col.Label
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
		for i, c := range curves {
			if k >= len(c.cols) || c.cols[k].Name != col.Name {
				continue
			}
			pts := make(plotter.XYs, 0, len(c.mean.iterations))
			for r, it := range c.mean.iterations {
				y := c.value(r, k, col.Decibel)
				if math.IsNaN(y) || math.IsInf(y, 0) {
					continue
				}
				pts = append(pts, plotter.XY{X: float64(it), Y: y})
			}
			line, err := plotter.NewLine(pts)
			if err != nil {
				return nil, err
			}
			// Colours cycle first, then dash patterns, so every curve of a
			// figure looks different.
			line.Color = plotutil.Color(i)
			line.Dashes = plotutil.Dashes(i / len(plotutil.DefaultColors))
			line.Width = vg.Points(1.2)
			p.Add(line)
			p.Legend.Add(c.spec.Label, line)
		}
		for _, ext := range []string{".png", ".svg"} {
			name := col.Name + ext
			if err := p.Save(7*vg.Inch, 4.5*vg.Inch, filepath.Join(outDir, name)); err != nil {
				return nil, err
			}
			files = append(files, name)
		}
	}
	return files, nil
}
