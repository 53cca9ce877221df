//go:build unix

// Package fileiotest makes the special files that tests of file readers
// feed them: a named pipe that never hangs the test, whether the reader
// under test refuses it (as it should) or reads it.
package fileiotest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// FIFO returns the path of a new named pipe in a temporary directory,
// named name, and a writer that puts content into it: a reader that opens
// the pipe reads content and then the end of the file, so that a reader
// which fails to refuse the pipe does not block the test. The writer ends
// with the test.
func FIFO(t testing.TB, name, content string) string {
	t.Helper()
	return FIFOAt(t, filepath.Join(t.TempDir(), name), content)
}

// FIFOAt is FIFO at a path the caller chooses (an agent's file in a
// directory of data, the trace of a run directory), which must not exist.
func FIFOAt(t testing.TB, path, content string) string {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for a reader
		if err != nil {
			return
		}
		w.WriteString(content) // a few bytes: they fit in the pipe's buffer
		w.Close()
	}()
	t.Cleanup(func() {
		// If no reader opened the pipe the writer still waits for one:
		// open it without blocking so that the writer can finish.
		if r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			<-done
			r.Close()
		}
		<-done
	})
	return path
}
