//go:build !linux

package data

// populate does nothing where there is no MADV_POPULATE_WRITE: the pages of
// b are faulted in as they are first written.
func populate([]byte) {}
