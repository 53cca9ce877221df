package data

import "syscall"

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 and later).
const madvPopulateWrite = 23

// populate asks the kernel to back b with memory now, in one call, rather
// than page by page as the decompressor first writes to it: on a virtual
// machine whose first touch of a fresh page costs a trap, that is most of
// the time of reading a large file. It changes no byte of b, and a kernel
// without MADV_POPULATE_WRITE (or an address it refuses) leaves b to be
// faulted in as usual.
func populate(b []byte) {
	if len(b) > 0 {
		_ = syscall.Madvise(b, madvPopulateWrite) // advice: an error leaves b as it was
	}
}
