package cli

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
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
	cmd.Flags().StringVar(&f.advertise, "advertise", "", "the host coordinators reach this worker at, when --listen is on every interface (0.0.0.0); needs --remote-port")
	cmd.Flags().IntVar(&f.remotePort, "remote-port", 0, "port of the worker's actors (default: any free port)")
	cmd.Flags().StringVar(&f.secretFile, "secret-file", "", "file holding the cluster's shared secret (default: $"+cluster.SecretEnv+")")
	cmd.Flags().IntVar(&f.slots, "slots", 0, fmt.Sprintf("jobs run at once, at most %d (default: number of CPUs)", cluster.MaxSlots))
	cmd.Flags().StringVar(&f.cache, "cache", "", "directory that keeps the files coordinators ship, by content hash (default: a temporary directory)")
	return cmd
}

func runWorker(cmd *cobra.Command, g *globalFlags, f *workerFlags) error {
	logger, err := g.newLogger(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	defer logger.Sync() //nolint:errcheck // stderr sync errors are not actionable
	host, _, err := cluster.SplitAddress(f.listen, true)
	if err != nil {
		return usageError{fmt.Errorf("--listen: %v", err)}
	}
	if ip, err := netip.ParseAddr(host); (host == "" || err == nil && ip.IsUnspecified()) && f.advertise == "" {
		return usageError{fmt.Errorf("--listen: %q listens on every interface: give --advertise, the address coordinators reach this worker at", f.listen)}
	}
	if f.advertise != "" {
		if err := cluster.CheckHost(f.advertise); err != nil {
			return usageError{fmt.Errorf("--advertise: %v", err)}
		}
		if f.remotePort == 0 {
			return usageError{errors.New("--advertise needs --remote-port: the port coordinators reach the worker's actors at")}
		}
	}
	if f.slots < 0 || f.slots > cluster.MaxSlots {
		return usageError{fmt.Errorf("--slots: must be a number of jobs from 1 to %d (or 0 for one per CPU), got %d", cluster.MaxSlots, f.slots)}
	}
	if f.remotePort < 0 || f.remotePort > 65535 {
		return usageError{fmt.Errorf("--remote-port: expected a port number from 1 to 65535 (or 0 for any free port), got %d", f.remotePort)}
	}
	secret, err := cluster.ReadSecret(f.secretFile)
	if err != nil {
		return usageError{fmt.Errorf("--secret-file: %v", err)}
	}
	if f.cache != "" {
		if err := checkCache(f.cache); err != nil {
			return usageError{fmt.Errorf("--cache: %v", err)}
		}
	}
	health, err := net.Listen("tcp", f.listen)
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return usageError{fmt.Errorf("--listen: %s is not an address of this host", host)}
	}
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

// checkCache makes sure the worker can keep files in dir: a directory,
// made if missing, in which it can create files.
func checkCache(dir string) error {
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".maple-check-*")
	if err != nil {
		return fmt.Errorf("cannot keep files in %s: %v", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
