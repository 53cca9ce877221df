package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maple report writes RUN_DIR/report.html, or with --out another file; with
// several run directories compare.html in the working directory. Each
// prints the page's path alone.
func TestReportCommand(t *testing.T) {
	tmp := t.TempDir()
	var dirs []string
	for _, seed := range []string{"1", "2"} {
		dir := filepath.Join(tmp, "seed"+seed)
		if code, out, errOut := maple(t, "run", "--out", dir, "--set", "runs=2", "--set", "iterations=10", "--set", "seed="+seed); code != 0 {
			t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
		}
		dirs = append(dirs, dir)
	}
	code, out, errOut := maple(t, "report", dirs[0])
	if want := filepath.Join(dirs[0], "report.html") + "\n"; code != 0 || out != want || errOut != "" {
		t.Errorf("report: exit %d, printed %q (want %q), %q", code, out, want, errOut)
	}
	other := filepath.Join(tmp, "elsewhere.html")
	if code, out, _ := maple(t, "report", dirs[0], "--out", other); code != 0 || out != other+"\n" {
		t.Errorf("report --out: exit %d, printed %q", code, out)
	}
	t.Chdir(tmp)
	code, out, errOut = maple(t, "report", dirs[0], dirs[1])
	if code != 0 || out != "compare.html\n" || errOut != "" {
		t.Fatalf("report A B: exit %d, printed %q, %q", code, out, errOut)
	}
	page := string(read(t, filepath.Join(tmp, "compare.html")))
	for _, want := range []string{"Comparison of seed1, seed2", `id="differences-table"`, `"label":"seed1"`, `"label":"seed2"`} {
		if !strings.Contains(page, want) {
			t.Errorf("compare.html lacks %q", want)
		}
	}
}

// A directory that is not a run directory is a user error: one line naming
// the file that is missing, exit 2, no page written.
func TestReportRefusesWhatIsNotARunDirectory(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	code, out, errOut := maple(t, "report", empty)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if code != 2 || out != "" || len(lines) != 1 || !strings.Contains(lines[0], filepath.Join(empty, "scenario.yaml")) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line naming scenario.yaml", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(empty, "report.html")); err == nil {
		t.Error("a report was written")
	}
	if code, _, errOut := maple(t, "report"); code != 2 || !strings.Contains(errOut, "requires at least 1 arg") {
		t.Errorf("no argument: exit %d, %q", code, errOut)
	}
}

// A run that stopped while drawing its figures (summary.json still marked
// "pending": "figures") has all its numbers: maple report writes its page,
// prints the page's path, and warns on standard error, once, that the run
// is incomplete — as the page does.
func TestReportFlagsARunPendingFigures(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if code, out, errOut := maple(t, "run", "--out", dir, "--set", "runs=1", "--set", "iterations=5", "--set", "output.plot=false"); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	summary := filepath.Join(dir, "summary.json")
	b := read(t, summary)
	marked := strings.Replace(string(b), `"scenario": "quickstart",`, `"scenario": "quickstart", "pending": "figures",`, 1)
	if marked == string(b) {
		t.Fatalf("summary.json has no scenario to mark:\n%s", b)
	}
	if err := os.WriteFile(summary, []byte(marked), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := maple(t, "report", dir)
	page := filepath.Join(dir, "report.html")
	const warning = `: summary.json is marked "pending": "figures": the run stopped while drawing its figures`
	if code != 0 || out != page+"\n" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "maple: warning: "+dir+warning) {
		t.Errorf("exit %d, stdout %q, stderr %q; want the page's path and one warning naming %s", code, out, errOut, dir)
	}
	if !strings.Contains(string(read(t, page)), "the run stopped while drawing its figures") {
		t.Error("the page does not say that the figures are pending")
	}
}
