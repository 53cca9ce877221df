//go:build unix

package fileio

import "syscall"

// nonBlocking opens a named pipe without waiting for a writer, so that one
// swapped in after the check is refused rather than waited on. It has no
// effect on regular files.
const nonBlocking = syscall.O_NONBLOCK
