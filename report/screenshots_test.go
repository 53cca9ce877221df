package report

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"maple/internal/browser"
	"maple/rundir"
	"maple/scenarios"
	"maple/scenarios/run"
)

// screenshots is where TestScreenshots writes the screenshots of
// docs/report.md; without it the test is skipped:
//
//	go test ./report -run TestScreenshots -screenshots ../docs/figures
var screenshots = flag.String("screenshots", "", "write the report screenshots of docs/report.md into this directory")

// The screenshots of docs/report.md: the reports of three bundled
// scenarios, run at their full size, in a 1200 px wide window, from the top
// of the page to the end of the charts (the tables below them are
// text), and the privacy audit of a fourth (12 000 runs and a run of
// 1 000 canaries: some eight minutes of CPU), from its heading to the end
// of its first chart; with the mouse over a chart so that its legend shows
// values.
func TestScreenshots(t *testing.T) {
	if *screenshots == "" {
		t.Skip("-screenshots DIR writes the screenshots of docs/report.md")
	}
	for _, shot := range []struct {
		// from is the element the capture starts at ("": the top of the
		// page), until the one it ends before.
		scenario, file, from, hover, until string
	}{
		{"quickstart.yaml", "report-quickstart.png", "", "chart-msd", "privacy"},
		{"systems/stragglers.yaml", "report-stragglers.png", "", "chart-msd", "privacy"},
		{"fedavg/step-size-sweep.yaml", "report-step-size-sweep.png", "", "chart-steady-msd-vs-step_size", "privacy"},
		{"dp/audit-dp-fedavg.yaml", "report-audit.png", "privacy-audit", "chart-audit-1", "chart-audit-2"},
	} {
		dir := t.TempDir()
		plan, err := scenarios.LoadBundled(shot.scenario, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := run.Execute(plan, dir, run.Options{}); err != nil {
			t.Fatal(err)
		}
		if err := rundir.WriteProvenance(dir, run.Version, []string{"maple", "run", "scenarios/" + shot.scenario}); err != nil {
			t.Fatal(err)
		}
		path, _, err := Write(dir)
		if err != nil {
			t.Fatal(err)
		}
		// A viewport taller than the part shown: the mouse can reach every
		// chart and one capture takes it all.
		tb := tab(t, path, browser.TabOptions{Width: 1200, Height: 4000})
		var at struct{ X, Y, From, Until float64 }
		eval(t, tb, `(() => {
			const from = document.getElementById(`+strconv.Quote(shot.from)+`);
			if (from) from.scrollIntoView({block: "start"});
			const u = mapleCharts[`+strconv.Quote(shot.hover)+`].u, o = u.over.getBoundingClientRect();
			const k = Math.floor(u.data[0].length * 0.6);
			return {X: o.left + u.valToPos(u.data[0][k], "x"), Y: o.top + o.height / 2,
				From: from ? Math.max(0, from.getBoundingClientRect().top - 16) : 0,
				Until: document.getElementById(`+strconv.Quote(shot.until)+`).getBoundingClientRect().top - 16};
		})()`, &at)
		if err := tb.Mouse(at.X, at.Y); err != nil {
			t.Fatal(err)
		}
		eval(t, tb, `(async () => {`+frames+` return true; })()`, new(bool))
		raw, err := tb.Screenshot(false)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		b := img.Bounds()
		cut := img.(interface {
			SubImage(image.Rectangle) image.Image
		}).SubImage(image.Rect(b.Min.X, b.Min.Y+int(at.From), b.Max.X, min(b.Max.Y, b.Min.Y+int(at.Until))))
		var out bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, cut); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*screenshots, shot.file), out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d×%d px", shot.file, cut.Bounds().Dx(), cut.Bounds().Dy())
	}
}
