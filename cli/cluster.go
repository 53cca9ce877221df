package cli

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"

	"maple/cluster"
	"maple/scenarios/run"
)

// clusterFlags are maple run's flags that hand the plan's jobs to the
// workers of a cluster (maple worker) instead of this machine's cores.
type clusterFlags struct {
	workers    workerList
	secretFile string
	listen     string
	wait       time.Duration
}

// add registers the flags on cmd.
func (c *clusterFlags) add(cmd *cobra.Command) {
	cmd.Flags().Var(&c.workers, "cluster", "run the jobs on the workers listening at these host:port (maple worker --listen), comma-separated")
	cmd.Flags().StringVar(&c.secretFile, "cluster-secret-file", "", "with --cluster: file holding the cluster's shared secret (default: $"+cluster.SecretEnv+")")
	cmd.Flags().StringVar(&c.listen, "cluster-listen", "", "with --cluster: IP[:port] this process listens on for the workers' answers (default 127.0.0.1, any free port)")
	cmd.Flags().DurationVar(&c.wait, "cluster-wait", cluster.DefaultWait, "with --cluster: how long to wait while no worker can take jobs before giving up")
}

// executor returns the executor the flags ask for: nil (this machine)
// without --cluster, else a coordinator of the listed workers. The other
// cluster flags need --cluster, and --workers (this machine's parallel
// runs) does not apply to a cluster.
func (c *clusterFlags) executor(cmd *cobra.Command, logger *zap.Logger) (run.Executor, error) {
	if len(c.workers) == 0 {
		for _, name := range []string{"cluster-secret-file", "cluster-listen", "cluster-wait"} {
			if cmd.Flags().Changed(name) {
				return nil, usageError{fmt.Errorf("--%s only applies with --cluster", name)}
			}
		}
		return nil, nil
	}
	if cmd.Flags().Changed("workers") {
		return nil, usageError{fmt.Errorf("--workers: with --cluster, each worker runs as many jobs at once as its --slots")}
	}
	host, port := c.listen, 0
	if _, _, err := net.SplitHostPort(c.listen); err == nil {
		if host, port, err = cluster.SplitAddress(c.listen, true); err != nil {
			return nil, usageError{fmt.Errorf("--cluster-listen: %v", err)}
		}
	}
	if c.listen != "" {
		if ip, err := netip.ParseAddr(host); err != nil || ip.IsUnspecified() {
			return nil, usageError{fmt.Errorf("--cluster-listen: expected the IP address the workers reach this host at (and optionally :port), got %q", c.listen)}
		}
	}
	if c.wait <= 0 {
		return nil, usageError{fmt.Errorf("--cluster-wait: must be a positive duration, got %v", c.wait)}
	}
	secret, err := cluster.ReadSecret(c.secretFile)
	if err != nil {
		return nil, usageError{fmt.Errorf("--cluster-secret-file: %v", err)}
	}
	co, err := cluster.NewCoordinator(cluster.Config{Workers: []string(c.workers), Host: host, Port: port, Secret: secret, Wait: c.wait, Logger: logger})
	if err != nil {
		return nil, usageError{fmt.Errorf("--cluster: %v", err)}
	}
	return co, nil
}

// workerList is the value of --cluster: the workers' health endpoints,
// comma-separated, the flag repeatable. Each address is checked as the flag
// is parsed (cluster.CheckWorker), so that an address that cannot work is
// refused at once, naming the flag, instead of after the wait for workers.
type workerList []string

// Set implements pflag.Value.
func (l *workerList) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("expected the workers' host:port, comma-separated, got nothing")
	}
	list := strings.Split(s, ",")
	for _, w := range list {
		w = strings.TrimSpace(w)
		if err := cluster.CheckWorker(w); err != nil {
			if len(list) > 1 {
				return fmt.Errorf("%q: %v", w, err)
			}
			return err
		}
		if slices.Contains(*l, w) {
			return fmt.Errorf("worker %s is listed twice", w)
		}
		*l = append(*l, w)
	}
	return nil
}

// String implements pflag.Value.
func (l *workerList) String() string { return strings.Join(*l, ",") }

// Type implements pflag.Value: the name the help shows for the value.
func (l *workerList) Type() string { return "host:port,..." }
