package cluster

import (
	"net"
	"strconv"
	"strings"
	"testing"
)

// Addresses are split and checked as a coordinator lists its workers and a
// worker its endpoint: every refusal says what was expected.
func TestAddresses(t *testing.T) {
	for _, c := range []struct {
		addr    string
		anyPort bool
		host    string
		port    int
		err     string
	}{
		{addr: "127.0.0.1:7070", host: "127.0.0.1", port: 7070},
		{addr: "[::1]:1", host: "::1", port: 1},
		{addr: "[fe80::1%eth0]:65535", host: "fe80::1%eth0", port: 65535},
		{addr: "worker-3.example.org:7070", host: "worker-3.example.org", port: 7070},
		{addr: "localhost.:7070", host: "localhost.", port: 7070},
		{addr: "127.0.0.1:0", anyPort: true, host: "127.0.0.1", port: 0},
		{addr: ":7070", anyPort: true, host: "", port: 7070},
		{addr: "127.0.0.1:0", err: `expected a port number from 1 to 65535, got "0"`},
		{addr: "127.0.0.1:-5", err: `expected a port number from 1 to 65535, got "-5"`},
		{addr: "127.0.0.1:abc", err: `expected a port number from 1 to 65535, got "abc"`},
		{addr: "127.0.0.1:99999", anyPort: true, err: `expected a port number from 0 to 65535, got "99999"`},
		{addr: "127.0.0.1:+80", err: `got "+80"`},
		{addr: "127.0.0.1:http", err: `got "http"`},
		{addr: "127.0.0.1", err: `expected host:port, got "127.0.0.1"`},
		{addr: "", err: `expected host:port, got ""`},
		{addr: "a b:1", err: `expected an IP address or a host name, got "a b"`},
		{addr: "-worker:1", err: `got "-worker"`},
		{addr: "worker..org:1", err: `got "worker..org"`},
		{addr: "x_y:1", err: `got "x_y"`},
		{addr: strings.Repeat("a", 64) + ":1", err: "expected an IP address or a host name"},
	} {
		host, port, err := SplitAddress(c.addr, c.anyPort)
		switch {
		case c.err == "" && (err != nil || host != c.host || port != c.port):
			t.Errorf("SplitAddress(%q, %v) = %q, %d, %v; want %q, %d", c.addr, c.anyPort, host, port, err, c.host, c.port)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("SplitAddress(%q, %v): %v, want an error with %q", c.addr, c.anyPort, err, c.err)
		}
	}
	for addr, want := range map[string]string{
		"10.0.0.11:7070": "",
		":7070":          "expected host:port, with the host the worker is reached at",
		"0.0.0.0:7070":   "0.0.0.0 is every interface",
		"[::]:7070":      ":: is every interface",
		"10.0.0.11:0":    "expected a port number from 1 to 65535",
	} {
		err := CheckWorker(addr)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("CheckWorker(%q) = %v, want %q", addr, err, want)
		}
	}
}

// Whatever the text, SplitAddress returns an error or a host and port that
// join back into an address it accepts again, with the same parts.
func FuzzSplitAddress(f *testing.F) {
	for _, s := range []string{"127.0.0.1:7070", "[::1]:0", "a.b:65535", ":1", "x:99999", "[fe80::1%eth0]:80", "a b:1"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, addr string, anyPort bool) {
		host, port, err := SplitAddress(addr, anyPort)
		if err != nil {
			return
		}
		if port < 0 || port > 65535 || port == 0 && !anyPort {
			t.Fatalf("SplitAddress(%q, %v) accepted port %d", addr, anyPort, port)
		}
		again := net.JoinHostPort(host, strconv.Itoa(port))
		if h, p, err := SplitAddress(again, anyPort); err != nil || h != host || p != port {
			t.Fatalf("SplitAddress(%q) = %q, %d; its join %q gives %q, %d, %v", addr, host, port, again, h, p, err)
		}
	})
}
