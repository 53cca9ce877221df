package all

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"maple/scenarios"
	"maple/scenarios/run"
)

// relay is an executor that runs every job as a worker in another process
// would: on jobs of its own (rebuilt from the plan's text, tracing into its
// own directory), handing back only each job's Outcome and trace bytes.
type relay struct {
	trace string // the relay's trace directory
}

func (r relay) Execute(ctx context.Context, q *run.Queue) error {
	p := q.Plan()
	mirror, err := scenarios.Parse(p.Source, p.File, p.Dir, p.Sets)
	if err != nil {
		return err
	}
	traceDir := ""
	if q.Len() > 0 && q.Job(0).TracePath() != "" {
		traceDir = r.trace
	}
	theirs := run.Jobs(mirror, q.Options(), traceDir)
	slot := run.NewSlot(q.Options())
	defer slot.Close()
	for {
		j, ok := q.Next()
		if !ok {
			return nil
		}
		w := theirs[j.Position()]
		if err := slot.Execute(ctx, w); err != nil {
			q.Done(j, err)
			continue
		}
		o, err := w.Outcome()
		if err == nil && traceDir != "" {
			var b []byte
			if b, err = os.ReadFile(w.TracePath()); err == nil {
				err = os.WriteFile(j.TracePath(), b, 0o644)
			}
		}
		if err == nil {
			err = j.SetOutcome(o)
		}
		q.Done(j, err)
	}
}

// A plan whose jobs' results travel as data — the metrics table, the stats,
// warnings and details, the trace store — writes the run directory of the
// same plan run in process, byte for byte, trace on and off.
func TestResultsCarriedAsDataWriteTheSameRunDirectory(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		tracing bool
		engine  run.Engine
	}{
		{"fedavg/privatized.yaml", true, run.Actors},
		{"graphfl/fig2.yaml", true, run.Actors},
		{"systems/dropouts.yaml", false, run.Reference}, // warns: latency is not simulated
		{"importance/fig2.1.yaml", false, run.Actors},
	} {
		p, err := scenarios.LoadBundled(c.name, []string{"runs=2", "iterations=6", "output.plot=false"})
		if err != nil {
			t.Fatal(err)
		}
		local, res := execute(t, p, run.Options{Trace: c.tracing, Engine: c.engine, Workers: 2})
		relayed, _ := execute(t, p, run.Options{Trace: c.tracing, Engine: c.engine, Executor: relay{trace: t.TempDir()}})
		sameRunDirectory(t, c.name, local, relayed)
		if c.engine == run.Reference && len(res.Summary.Curves[0].Warnings) == 0 {
			t.Errorf("%s on the reference engine: no warning to carry", c.name)
		}
	}
}

// sameRunDirectory checks that two run directories hold the same files with
// the same bytes.
func sameRunDirectory(t *testing.T, name, a, b string) {
	t.Helper()
	files := func(dir string) map[string][]byte {
		out := map[string][]byte{}
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, path)
				out[rel], _ = os.ReadFile(path)
			}
			return nil
		})
		return out
	}
	fa, fb := files(a), files(b)
	if len(fa) != len(fb) || len(fa) < 3 {
		t.Errorf("%s: %d files against %d", name, len(fa), len(fb))
	}
	for f, data := range fa {
		if !bytes.Equal(data, fb[f]) {
			t.Errorf("%s: %s differs", name, f)
		}
	}
}
