//go:build !unix

package fileio

// nonBlocking is zero where named pipes cannot be opened without blocking;
// the check before opening still refuses them.
const nonBlocking = 0
