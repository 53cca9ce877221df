package cputime

import (
	"testing"
	"time"
)

// TestTotalCountsBusyWork checks that a loop that keeps this goroutine busy
// adds CPU time and wall time, and that sleeping adds wall time only. The
// bounds are loose on purpose: the busy loop runs until the process has used
// at least 20 ms of CPU (so the CPU total is at least that), and a 30 ms
// sleep adds at least 30 ms of wall time and far less CPU than that (the
// other threads of an idle test binary use well under 30 ms while it
// sleeps). Wall time can exceed CPU time by any amount on a loaded machine,
// so no upper bound is asserted on it.
func TestTotalCountsBusyWork(t *testing.T) {
	var busy Total
	m := Now()
	x := 1.0
	for Process()-m.cpu < 20*time.Millisecond {
		for i := 0; i < 1000; i++ {
			x = x*1.0000001 + 1e-9
		}
	}
	busy.Since(m)
	if busy.CPU < 20*time.Millisecond || busy.Wall <= 0 {
		t.Errorf("busy loop: %+v, want CPU ≥ 20ms and some wall time (x = %v)", busy, x)
	}

	var idle Total
	m = Now()
	time.Sleep(30 * time.Millisecond)
	idle.Since(m)
	if idle.Wall < 30*time.Millisecond || idle.CPU >= 30*time.Millisecond {
		t.Errorf("sleep: %+v, want wall ≥ 30ms and CPU < 30ms", idle)
	}
}
