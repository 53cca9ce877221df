package cluster

import (
	"context"
	"testing"
	"time"

	"maple/scenarios/run"
)

// BenchmarkSweep runs the bundled sweep fedavg/step-size-sweep.yaml (4
// curves × 20 runs: 80 jobs) in process on one core and on 1, 2 and 3
// local workers of one slot each (each coordinator a process of its own, as
// maple run --cluster is), and a one-job plan on one worker for the fixed
// cost of a cluster run. It reports the wall time per plan and per job:
//
//	go test -run XXX -bench Sweep -benchtime 3x ./cluster/
//
// The speed-up on n workers is the in-process time over theirs; the cost
// of a job on the cluster, beyond its run, is the difference of the
// per-job times of one worker and in process, once the fixed cost is
// taken out (docs/design.md).
func BenchmarkSweep(b *testing.B) {
	var addrs []string
	for range 3 {
		addrs = append(addrs, spawnWorker(b, workerOpts{slots: 1}).addr)
	}
	sweep := coordSpec{Bundled: "fedavg/step-size-sweep.yaml"}
	one := coordSpec{Bundled: "fedavg/step-size-sweep.yaml", Sets: []string{"runs=1", "sweep={algorithm.step_size: [0.01]}"}}
	for _, c := range []struct {
		name    string
		spec    coordSpec
		workers int // 0: in process
	}{
		{"in-process", sweep, 0},
		{"workers-1", sweep, 1},
		{"workers-2", sweep, 2},
		{"workers-3", sweep, 3},
		{"one-job-in-process", one, 0},
		{"one-job-on-a-worker", one, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			p, err := loadSpec(c.spec)
			if err != nil {
				b.Fatal(err)
			}
			jobs := len(run.Jobs(p, &run.Options{}, ""))
			start := time.Now()
			for range b.N {
				if c.workers == 0 {
					if _, err := run.ExecuteContext(context.Background(), p, b.TempDir(), run.Options{Workers: 1}); err != nil {
						b.Fatal(err)
					}
					continue
				}
				spec := c.spec
				spec.Workers = addrs[:c.workers]
				if _, result := coordinate(b, spec); result != "ok" {
					b.Fatal(result)
				}
			}
			perJob := time.Since(start).Seconds() / float64(b.N*jobs)
			b.ReportMetric(perJob*1e3, "ms/job")
			b.ReportMetric(float64(jobs), "jobs")
		})
	}
}
