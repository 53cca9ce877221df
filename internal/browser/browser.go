// Package browser drives the machine's Chromium headlessly, for the tests
// that open what maple writes for people — report.html, exported timelines —
// in a real browser. A developer's machine without Chromium skips those
// checks; under CI=true (where .ci/run installs Debian's chromium) a missing
// browser fails them instead, so that "tested in a real browser" never holds
// by accident. Require decides.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"
)

// Path returns the Chromium (or Chrome) executable: $MAPLE_CHROMIUM if set,
// else the first of chromium, chromium-browser and google-chrome on $PATH,
// or "" if there is none.
func Path() string {
	if p := os.Getenv("MAPLE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TB is the part of testing.TB that Require uses.
type TB interface {
	Helper()
	Skip(args ...any)
	Fatal(args ...any)
}

// Require returns Path for a test that needs a real browser. Without one it
// skips the test, saying what was checked instead (checked, e.g. "the
// report was checked by parsing only"), unless the environment sets
// CI=true: there a skip would pass off an unchecked browser test as
// passed, so it fails the test.
func Require(t TB, checked string) string {
	t.Helper()
	path := Path()
	if path != "" {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium installed, and CI=true: the real-browser test must run in CI (.ci/run installs Debian's chromium; or set MAPLE_CHROMIUM)")
		return ""
	}
	t.Skip("no Chromium installed: " + checked)
	return ""
}

// Session is one headless browser with one tab.
type Session struct {
	ctx    context.Context
	cancel []context.CancelFunc
	dir    string
}

// Start launches the browser at path with a fresh profile and every
// background connection off (the machine has no network), and gives the
// whole session at most timeout, so that a hung browser fails the test
// rather than blocking it.
func Start(path string, timeout time.Duration) (*Session, error) {
	dir, err := os.MkdirTemp("", "maple-browser-")
	if err != nil {
		return nil, err
	}
	s := &Session{dir: dir}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.UserDataDir(dir), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true))
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	s.cancel = append(s.cancel, cancel)
	ctx, cancel = chromedp.NewExecAllocator(ctx, opts...)
	s.cancel = append(s.cancel, cancel)
	s.ctx, cancel = chromedp.NewContext(ctx)
	s.cancel = append(s.cancel, cancel)
	if err := chromedp.Do(s.ctx); err != nil { // starts the browser
		s.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	return s, nil
}

// Navigate loads url and waits for it to load.
func (s *Session) Navigate(url string) error { return chromedp.Do(s.ctx, chromedp.Navigate(url)) }

// Eval evaluates the JavaScript expression js in the page, awaiting it if
// it is a promise, and decodes its JSON value into dst.
func (s *Session) Eval(js string, dst any) error {
	raw, err := chromedp.Run(s.ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, dst)
}

// Close stops the browser and removes its profile.
func (s *Session) Close() {
	for i := len(s.cancel) - 1; i >= 0; i-- {
		s.cancel[i]()
	}
	os.RemoveAll(s.dir)
}
