package cluster

import (
	"context"
	"syscall"
	"testing"
	"time"

	"maple/scenarios/run"
)

// selfCPU returns the CPU time (user and system) this process used so far.
func selfCPU() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkSweep runs the bundled sweep fedavg/step-size-sweep.yaml (4
// curves × 20 runs: 80 jobs) in process on one and two cores and on 1, 2
// and 3 local workers of one slot each (each coordinator a process of its
// own, as maple run --cluster is), and a one-job plan both ways for the
// fixed cost of a cluster run. It reports the wall time per plan and per
// job, and the CPU time per job of every process involved (the benchmark's
// own in process; the coordinator's and the workers' on the cluster),
// which the other processes of a shared machine do not inflate:
//
//	go test -run XXX -bench Sweep -benchtime 3x ./cluster/
//
// The speed-up on n workers is the in-process time on one core over
// theirs; the cost of a job on the cluster, beyond its run, is the
// difference of the per-job times on one worker and in process, once the
// one-job plans' difference (the fixed cost) is taken out
// (docs/design.md).
func BenchmarkSweep(b *testing.B) {
	var addrs []string
	var workers []*proc
	for range 3 {
		w := spawnWorker(b, workerOpts{slots: 1})
		addrs, workers = append(addrs, w.addr), append(workers, w)
	}
	sweep := coordSpec{Bundled: "fedavg/step-size-sweep.yaml"}
	one := coordSpec{Bundled: "fedavg/step-size-sweep.yaml", Sets: []string{"runs=1", "sweep={algorithm.step_size: [0.01]}"}}
	for _, c := range []struct {
		name    string
		spec    coordSpec
		workers int // 0: in process on one core, -n on n cores
	}{
		{"in-process", sweep, 0},
		{"in-process-2-cores", sweep, -2},
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
			var cpu time.Duration
			start := time.Now()
			for range b.N {
				if c.workers <= 0 {
					before := selfCPU()
					if _, err := run.ExecuteContext(context.Background(), p, b.TempDir(), run.Options{Workers: max(-c.workers, 1)}); err != nil {
						b.Fatal(err)
					}
					cpu += selfCPU() - before
					continue
				}
				spec := c.spec
				spec.Workers = addrs[:c.workers]
				var before time.Duration
				for _, w := range workers[:c.workers] {
					before += w.cpu(b)
				}
				_, result, used := coordinateCPU(b, spec)
				if result != "ok" {
					b.Fatal(result)
				}
				cpu += used - before
				for _, w := range workers[:c.workers] {
					cpu += w.cpu(b)
				}
			}
			n := float64(b.N * jobs)
			b.ReportMetric(time.Since(start).Seconds()*1e3/n, "ms/job")
			b.ReportMetric(cpu.Seconds()*1e3/n, "cpu-ms/job")
			b.ReportMetric(float64(jobs), "jobs")
		})
	}
}
