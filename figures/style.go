package figures

import (
	"fmt"
	"image/color"
	"strconv"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The styles curves are drawn in, shared by the PNG and SVG figures and the
// report's charts (package report), so that a curve looks the same
// wherever it is drawn: curve i of a figure takes StyleOf(i) — colour i of
// the palette, dash pattern i and marker i, each list cycled on its own —
// and keeps it in every figure of its group, whichever metric is drawn.

// okabeIto is the Okabe–Ito palette, in the order curves take it.
var okabeIto = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
	{0xF0, 0xE4, 0x42, 0xFF}, // yellow
}

// dashes are the line patterns curves cycle through, independently of the
// colours (5 patterns against 8 colours: 40 curves before a repeat).
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
	{vg.Points(4), vg.Points(4)},
}

// markers are the glyphs curves cycle through.
var markers = []draw.GlyphDrawer{
	draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{},
	draw.RingGlyph{}, draw.PlusGlyph{}, draw.PyramidGlyph{}, draw.BoxGlyph{},
}

// BandAlpha is the opacity of a curve's band, out of 0xFF: the band is the
// curve's colour at this alpha over the white background.
const BandAlpha = 0x30

// lineWidth is the width of a curve's line, in points.
const lineWidth = 1.3

// Style is how a curve is drawn.
type Style struct {
	// Colour is the line's and the markers' colour, opaque.
	Colour color.NRGBA
	// Dashes is the dash pattern in points (on, off, …), nil for a solid
	// line.
	Dashes []vg.Length
	// Marker is the glyph of the curve's markers.
	Marker draw.GlyphDrawer
}

// StyleOf returns the style of curve i (from 0) of a figure.
func StyleOf(i int) Style {
	return Style{Colour: okabeIto[i%len(okabeIto)], Dashes: dashes[i%len(dashes)], Marker: markers[i%len(markers)]}
}

// Band returns the colour of the curve's band: its colour at BandAlpha.
func (s Style) Band() color.NRGBA {
	c := s.Colour
	c.A = BandAlpha
	return c
}

// Hex returns the colour as CSS writes it, #rrggbb.
func (s Style) Hex() string {
	return fmt.Sprintf("#%02x%02x%02x", s.Colour.R, s.Colour.G, s.Colour.B)
}

// BandCSS returns the band's colour as CSS writes it, rgba(r, g, b, a)
// with a = BandAlpha/255.
func (s Style) BandCSS() string {
	return fmt.Sprintf("rgba(%d, %d, %d, %s)", s.Colour.R, s.Colour.G, s.Colour.B,
		strconv.FormatFloat(float64(BandAlpha)/0xFF, 'g', 4, 64))
}

// curveStyle is how curve i of a figure is drawn by gonum/plot.
type curveStyle struct {
	line  draw.LineStyle
	glyph draw.GlyphStyle
	fill  color.Color
}

func styleOf(i int) curveStyle {
	s := StyleOf(i)
	return curveStyle{
		line:  draw.LineStyle{Color: s.Colour, Width: vg.Points(lineWidth), Dashes: s.Dashes},
		glyph: draw.GlyphStyle{Color: s.Colour, Radius: vg.Points(3), Shape: s.Marker},
		fill:  s.Band(),
	}
}
