package cluster

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// SplitAddress splits addr, host:port, and checks both parts: the host
// must be an IP address or a host name (CheckHost) or empty, the port a
// number from 1 to 65535, or 0 when anyPort is set (listen on any free
// port). It is how every address of a cluster — the workers a coordinator
// lists, the address a worker listens on — is read, so that an address that
// cannot work is refused when it is given, not after a wait. Its errors do
// not repeat addr unless it is not host:port at all.
func SplitAddress(addr string, anyPort bool) (host string, port int, err error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("expected host:port, got %q", addr)
	}
	if host != "" {
		if err := CheckHost(host); err != nil {
			return "", 0, err
		}
	}
	n, err := strconv.ParseUint(p, 10, 16)
	lowest := uint64(1)
	if anyPort {
		lowest = 0
	}
	if err != nil || n < lowest {
		return "", 0, fmt.Errorf("expected a port number from %d to 65535, got %q", lowest, p)
	}
	return host, int(n), nil
}

// CheckWorker checks the address of a worker as a coordinator lists it
// (its health endpoint, `maple worker --listen`): a host that names one
// machine, not "every interface", and a port from 1 to 65535.
func CheckWorker(addr string) error {
	host, _, err := SplitAddress(addr, false)
	if err != nil {
		return err
	}
	if host == "" {
		return fmt.Errorf("expected host:port, with the host the worker is reached at, got %q", addr)
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		return fmt.Errorf("%s is every interface, not a host a worker is reached at", host)
	}
	return nil
}

// CheckHost checks that host is an IP address or a host name: dot-separated
// labels of letters, digits and hyphens, each of 1 to 63 characters and
// neither starting nor ending with a hyphen, 253 characters at most
// (RFC 1123).
func CheckHost(host string) error {
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	name := strings.TrimSuffix(host, ".")
	bad := fmt.Errorf("expected an IP address or a host name, got %q", host)
	if name == "" || len(name) > 253 {
		return bad
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return bad
		}
		for _, c := range label {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return bad
			}
		}
	}
	return nil
}
