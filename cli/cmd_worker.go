package cli

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"maple/cluster"
)

func init() { addCommand(newWorkerCommand) }

type workerFlags struct {
	listen     string
	advertise  string
	remotePort int
	secretFile string
	slots      int
	cache      string
}

func newWorkerCommand(g *globalFlags) *cobra.Command {
	f := &workerFlags{}
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Join a cluster and run the jobs of coordinators (maple run --cluster)",
		Long: "Join maple's cluster and run the jobs that coordinators (maple run --cluster) hand out,\n" +
			"until interrupted (SIGINT, SIGTERM). The worker serves its health endpoint at --listen,\n" +
			"the address coordinators list, and takes jobs only from a coordinator that holds the\n" +
			"cluster's shared secret (--secret-file, or the environment variable " + cluster.SecretEnv + ").\n" +
			"It reads only the files coordinators ship. See docs/deployment.md.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return runWorker(cmd, g, f) },
	}
	cmd.Flags().StringVar(&f.listen, "listen", "127.0.0.1:7070", "host:port of the worker's health endpoint; its actors listen on the same host (loopback unless told otherwise)")
	cmd.Flags().StringVar(&f.advertise, "advertise", "", "the host coordinators reach this worker at, when --listen is on every interface (0.0.0.0)")
	cmd.Flags().IntVar(&f.remotePort, "remote-port", 0, "port of the worker's actors (default: any free port)")
	cmd.Flags().StringVar(&f.secretFile, "secret-file", "", "file holding the cluster's shared secret (default: $"+cluster.SecretEnv+")")
	cmd.Flags().IntVar(&f.slots, "slots", 0, "jobs run at once (default: number of CPUs)")
	cmd.Flags().StringVar(&f.cache, "cache", "", "directory that keeps the files coordinators ship, by content hash (default: a temporary directory)")
	return cmd
}

func runWorker(cmd *cobra.Command, g *globalFlags, f *workerFlags) error {
	logger, err := g.newLogger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer logger.Sync() //nolint:errcheck // stderr sync errors are not actionable
	host, _, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usageError{fmt.Errorf("--listen: expected host:port, got %q", f.listen)}
	}
	if ip := net.ParseIP(host); (host == "" || ip != nil && ip.IsUnspecified()) && f.advertise == "" {
		return usageError{fmt.Errorf("--listen: %q listens on every interface: give --advertise, the address coordinators reach this worker at", f.listen)}
	}
	if f.slots < 0 {
		return usageError{fmt.Errorf("--slots: must be a positive number of jobs (or 0 for one per CPU), got %d", f.slots)}
	}
	if f.remotePort < 0 || f.remotePort > 65535 {
		return usageError{fmt.Errorf("--remote-port: expected a port, got %d", f.remotePort)}
	}
	secret, err := cluster.ReadSecret(f.secretFile)
	if err != nil {
		return usageError{fmt.Errorf("--secret-file: %v", err)}
	}
	health, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("--listen: %v", err)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	w, err := cluster.StartWorker(cluster.WorkerConfig{Health: health, Host: host, Port: f.remotePort, Advertise: f.advertise,
		Secret: secret, Slots: f.slots, Cache: f.cache, Logger: logger})
	if err != nil {
		health.Close()
		return err
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	fmt.Fprintf(cmd.OutOrStdout(), "maple worker listening on %s (actors at %s); stop it with Ctrl-C\n", health.Addr(), w.Address())
	<-sigs
	fmt.Fprintln(cmd.ErrOrStderr(), "maple worker: stopping")
	w.Stop()
	return nil
}
