package report

import (
	_ "embed"
	"html/template"
)

// The charting library, uPlot (MIT licence, report/uplot/LICENSE), pinned
// and checksummed in report/uplot/SHA256SUMS; scripts/fetch-uplot fetches it
// again from the npm registry.
var (
	//go:embed uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed uplot/uPlot.min.css
	uplotCSS string
	//go:embed report.js
	reportJS string
)

// script is the page's script: uPlot, then the report's own, in a CDATA
// section so that the page stays well-formed XHTML.
var script = template.JS("//<![CDATA[\n" + uplotJS + "\n" + reportJS + "\n//]]>") // #nosec G203: embedded, checksummed files

// style is uPlot's style sheet.
var style = template.CSS(uplotCSS) // #nosec G203: embedded, checksummed file
