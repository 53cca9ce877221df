// Package browser drives the machine's Chromium headlessly, for the tests
// that open what maple writes for people — report.html, exported timelines —
// in a real browser. A developer's machine without Chromium skips those
// checks; under CI=true (where .ci/run installs Debian's chromium) a missing
// browser fails them instead, so that "tested in a real browser" never holds
// by accident. Require decides. A Session is one browser; tests that share
// it open a Tab each, with its own viewport, scripts on or off, and the
// record of the requests its pages made.
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
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

// Tab is another tab of a Session's browser, with its own viewport and
// script setting, recording the requests of its pages. Tests that share one
// browser open a tab each.
type Tab struct {
	ctx        context.Context
	cancel     context.CancelFunc
	mu         sync.Mutex
	requests   []string
	exceptions []string
}

// TabOptions set up a tab.
type TabOptions struct {
	// Width and Height are the viewport's size in CSS pixels, one device
	// pixel each (the browser's default if zero).
	Width, Height int64
	// NoScripts disables the pages' scripts, as a reader who turned them
	// off would (the tab's own Eval still runs).
	NoScripts bool
}

// NewTab opens a tab in the session's browser.
func (s *Session) NewTab(o TabOptions) (*Tab, error) {
	ctx, cancel := chromedp.NewContext(s.ctx)
	t := &Tab{ctx: ctx, cancel: cancel}
	err := chromedp.Listen(ctx, func(ev any) {
		t.mu.Lock()
		defer t.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			t.requests = append(t.requests, e.Request.URL)
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				msg += " " + d.Exception.Description
			}
			t.exceptions = append(t.exceptions, fmt.Sprintf("%s:%d:%d: %s", d.URL, d.LineNumber+1, d.ColumnNumber+1, msg))
		}
	})
	var steps []chromedp.Action[chromedp.Void]
	if o.Width > 0 && o.Height > 0 {
		steps = append(steps, chromedp.EmulateViewport(o.Width, o.Height))
	}
	if o.NoScripts {
		steps = append(steps, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
			return err
		}))
	}
	if err == nil {
		err = chromedp.Do(ctx, steps...)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return t, nil
}

// Navigate loads url and waits for it to load.
func (t *Tab) Navigate(url string) error { return chromedp.Do(t.ctx, chromedp.Navigate(url)) }

// Eval evaluates the JavaScript expression js in the page, awaiting it if
// it is a promise, and decodes its JSON value into dst.
func (t *Tab) Eval(js string, dst any) error {
	raw, err := chromedp.Run(t.ctx, chromedp.Evaluate[[]byte](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, dst)
}

// Requests returns the URLs the tab's pages requested, in order: the pages
// themselves and everything they loaded.
func (t *Tab) Requests() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.requests)
}

// Exceptions returns the uncaught exceptions of the tab's pages' scripts.
func (t *Tab) Exceptions() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.exceptions)
}

// Mouse moves the mouse to (x, y), in CSS pixels of the viewport, as a
// person would: the page sees real mouse events.
func (t *Tab) Mouse(x, y float64) error {
	return chromedp.Do(t.ctx, chromedp.MouseEvent(chromedp.MouseMoved, x, y))
}

// Click clicks the left button at (x, y).
func (t *Tab) Click(x, y float64) error { return chromedp.Do(t.ctx, chromedp.MouseClickXY(x, y)) }

// Screenshot captures the viewport; with full, the whole page beyond it.
// It returns the PNG image.
func (t *Tab) Screenshot(full bool) ([]byte, error) {
	if full {
		return chromedp.Run(t.ctx, chromedp.FullScreenshot(100))
	}
	return chromedp.Run(t.ctx, chromedp.CaptureScreenshot())
}

// Close closes the tab.
func (t *Tab) Close() { t.cancel() }

// Close stops the browser and removes its profile.
func (s *Session) Close() {
	for i := len(s.cancel) - 1; i >= 0; i-- {
		s.cancel[i]()
	}
	os.RemoveAll(s.dir)
}
