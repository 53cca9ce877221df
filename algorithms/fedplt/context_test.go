package fedplt

import (
	"context"
	"errors"
	"maple/internal/ctxtest"
	"testing"
)

// Every method's reference checks its context once per round: done after 3
// checks, it runs exactly 3 rounds (the monitor records the initial models
// and each round) and stops with the context's error. Not interrupted it is
// Reference, which the engine-parity tests run.
func TestReferencesObserveInterruption(t *testing.T) {
	p := testProblem(t, 4, 10, 3, 0)
	for _, m := range []Method{PLT, FedPD, FedLin, Tamuna, LED, FiveGCS} {
		cfg := testConfig(t, m, p, nil)
		x0, err := InitialModels(cfg, p, SeededStreams(1))
		if err != nil {
			t.Fatal(err)
		}
		mon := NewMonitor(cfg.Method, p.Obj, p.Sets, cfg.Prox, make([]float64, p.Dim()), cfg.Rho, 0, x0, x0)
		start := len(mon.Records)
		k, err := ReferenceContext(ctxtest.Countdown(3), cfg, p, x0, 1, 50, mon)
		if !errors.Is(err, context.Canceled) || k != 3 || len(mon.Records)-start != 3 {
			t.Errorf("%v done after 3 checks: %d rounds (%d recorded), %v; want 3 and context.Canceled", m, k, len(mon.Records)-start, err)
		}
	}
}
