//go:build !unix

// Package fileiotest makes the special files that tests of file readers
// feed them.
package fileiotest

import "testing"

// FIFO skips the test: this system has no named pipes.
func FIFO(t testing.TB, name, content string) string {
	t.Skip("no named pipes on this system")
	return ""
}

// FIFOAt skips the test: this system has no named pipes.
func FIFOAt(t testing.TB, path, content string) string {
	t.Skip("no named pipes on this system")
	return ""
}
