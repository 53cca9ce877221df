package browser

import (
	"fmt"
	"testing"
)

// recorder is a TB that records what Require does instead of doing it.
type recorder struct{ skipped, failed string }

func (*recorder) Helper()             {}
func (r *recorder) Skip(args ...any)  { r.skipped = fmt.Sprint(args...) }
func (r *recorder) Fatal(args ...any) { r.failed = fmt.Sprint(args...) }

// Without Chromium, a real-browser test is skipped on a developer's machine
// but fails under CI=true, where a skip would report an unchecked test as
// passed; with Chromium, Require returns it.
func TestRequireFailsWithoutChromiumUnderCI(t *testing.T) {
	t.Setenv("MAPLE_CHROMIUM", "")
	t.Setenv("PATH", t.TempDir()) // no chromium, chromium-browser or google-chrome
	for ci, want := range map[string]string{"": "skip", "false": "skip", "true": "fail"} {
		t.Setenv("CI", ci)
		r := &recorder{}
		if path := Require(r, "checked by parsing"); path != "" {
			t.Fatalf("CI=%q: Require returned %q without a browser", ci, path)
		}
		switch {
		case want == "skip" && (r.skipped != "no Chromium installed: checked by parsing" || r.failed != ""):
			t.Errorf("CI=%q: skipped %q, failed %q; want a skip", ci, r.skipped, r.failed)
		case want == "fail" && (r.failed == "" || r.skipped != ""):
			t.Errorf("CI=%q: skipped %q, failed %q; want a failure", ci, r.skipped, r.failed)
		}
	}
	t.Setenv("MAPLE_CHROMIUM", "/opt/chromium/chrome")
	t.Setenv("CI", "true")
	r := &recorder{}
	if path := Require(r, "checked by parsing"); path != "/opt/chromium/chrome" || r.failed != "" || r.skipped != "" {
		t.Errorf("with MAPLE_CHROMIUM: %q, skipped %q, failed %q", path, r.skipped, r.failed)
	}
}
