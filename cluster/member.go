package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/labstack/echo"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Name is the name of maple's protoactor cluster: members of clusters of
// other names are ignored.
const Name = "maple"

// workerKind is the cluster kind workers advertise; the coordinator hands
// jobs to the members of that kind.
const workerKind = "maple-worker"

// workerActor is the name of the actor on each worker that receives jobs.
const workerActor = "maple-worker"

// refreshInterval is how often the automanaged provider polls the members'
// health endpoints: a member that does not answer leaves the cluster at
// the next poll.
const refreshInterval = time.Second

// gossipOff is the gossip interval of maple's members: gossip is off. The
// automanaged provider's health polling is the membership and the failure
// detection maple relies on; gossip would add nothing it uses (no grains,
// no cluster state), and in the pinned protoactor version, gossip that
// carries a blocked member writes the remote block list while other
// goroutines read it without its lock (remote.BlockList.IsBlocked and
// BlockedMembers), a data race the race detector reports.
const gossipOff = 1000 * time.Hour

// maxMessage bounds a gRPC message between members: a batch of remote
// messages, of which at most a few chunks (chunkSize) are in flight.
const maxMessage = 64 << 20

// memberConfig configures a protoactor cluster member.
type memberConfig struct {
	// host is the address remote listens on (and is reached at, unless
	// advertise is set), port its port (0: any free one, not with
	// advertise, which is reached at port).
	host      string
	port      int
	advertise string
	// health is the listener of the member's health endpoint, which the
	// automanaged provider of every member polls; hosts are the health
	// endpoints this member polls (its own included).
	health net.Listener
	hosts  []string
	kinds  []*cluster.Kind
	logger *zap.Logger
	// topology, if set, receives every topology the member sees.
	topology func(*cluster.ClusterTopology)
	// tap, if set (by tests), wraps every connection the member dials to
	// another member's remote: a wiretap of what it sends on the links.
	tap func(net.Conn) net.Conn
}

// member is a running protoactor cluster member: an actor system with
// remote, the cluster, and the automanaged provider's health endpoint.
type member struct {
	system   *actor.ActorSystem
	cluster  *cluster.Cluster
	provider *automanaged.AutoManagedProvider
	server   *echo.Echo
	ready    atomic.Bool // the health endpoint answers
}

// startMember starts a cluster member. It uses protoactor's automanaged
// provider, which needs no external service: each member serves its
// identity on a health endpoint and polls the endpoints it is given; a
// member that stops answering leaves the cluster topology, and the cluster
// publishes the change (cluster.ClusterTopology) on the event stream. The
// provider's own constructor serves the endpoint on every interface
// (0.0.0.0) with no way to choose; the member therefore serves it on its own
// listener (cfg.health, loopback unless told otherwise), through the
// provider's constructor for a caller-provided server.
func startMember(cfg memberConfig) (m *member, err error) {
	m = &member{}
	m.system = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(zapslog.NewHandler(debugCore{cfg.logger.Core()}, zapslog.WithName("protoactor")))
	}))
	m.server = echo.New()
	m.server.HideBanner, m.server.HidePort = true, true
	m.server.Listener = cfg.health
	_, port, _ := net.SplitHostPort(cfg.health.Addr().String())
	healthPort, _ := strconv.Atoi(port)
	m.server.GET("/_health", func(c echo.Context) error {
		host, port, err := m.system.GetHostPort()
		if err != nil || !m.ready.Load() {
			return c.NoContent(http.StatusServiceUnavailable)
		}
		return c.JSON(http.StatusOK, automanaged.NewNode(Name, m.system.ID, host, port, healthPort, m.cluster.GetClusterKinds()))
	})
	m.provider = automanaged.NewWithTesting(refreshInterval, healthPort, m.server, cfg.hosts...)
	opts := []remote.ConfigOption{remote.WithServerOptions(grpc.MaxRecvMsgSize(maxMessage))}
	if cfg.tap != nil {
		opts = append(opts, remote.WithDialOptions(grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
				if err != nil {
					return nil, err
				}
				return cfg.tap(c), nil
			})))
	}
	if cfg.advertise != "" {
		opts = append(opts, remote.WithAdvertisedHost(net.JoinHostPort(cfg.advertise, strconv.Itoa(cfg.port))))
	}
	rc := remote.Configure(cfg.host, cfg.port, opts...)
	config := cluster.Configure(Name, m.provider, disthash.New(), rc, cluster.WithKinds(cfg.kinds...))
	config.GossipInterval = gossipOff
	m.cluster = cluster.New(m.system, config)
	if cfg.topology != nil {
		m.system.EventStream.Subscribe(func(evt any) {
			if t, ok := evt.(*cluster.ClusterTopology); ok {
				cfg.topology(t)
			}
		})
	}
	defer func() {
		// remote and the provider panic when they cannot start (a port in use).
		if v := recover(); v != nil {
			err = fmt.Errorf("cannot join the cluster: %v", v)
			m.server.Close()
		}
	}()
	m.cluster.StartMember()
	return m, nil
}

// open makes the member visible to the others: until then its health
// endpoint answers 503, so no member sees it before its actors exist.
func (m *member) open() { m.ready.Store(true) }

// address returns the address other members reach this one's actors at.
func (m *member) address() string { return m.system.Address() }

// stop leaves the cluster and stops the member: the provider stops polling
// and closes the health endpoint, so the other members see this one leave
// at their next poll.
func (m *member) stop() {
	_ = m.provider.DeregisterMember()
	_ = m.provider.Shutdown(false)
	m.cluster.Gossip.Shutdown()
	m.cluster.Remote.Shutdown(false)
	m.system.Shutdown()
}

// debugCore is a zap core that logs everything at Debug: protoactor's
// cluster logs routine events (every failed health poll, every topology
// change) at Info to Error, which maple reports itself where they matter.
type debugCore struct{ zapcore.Core }

// Check implements zapcore.Core.
func (c debugCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	e.Level = zapcore.DebugLevel
	return c.Core.Check(e, ce)
}

// With implements zapcore.Core.
func (c debugCore) With(f []zapcore.Field) zapcore.Core { return debugCore{c.Core.With(f)} }

// Enabled implements zapcore.LevelEnabler.
func (c debugCore) Enabled(zapcore.Level) bool { return c.Core.Enabled(zapcore.DebugLevel) }
