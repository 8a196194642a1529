package httplimit

import (
	"net"
	"net/netip"
	"sync"
)

// AdminConnectionsPerClient bounds the admin listener's connections from
// one client address (an IPv6 /64): an eighth of its default cap, so that
// one address cannot hold the places every other caller waits for.
const AdminConnectionsPerClient = AdminConnectionsCap / 8

// PerClientListener closes, as soon as accepted, a connection from a client
// address that already holds limit open connections. Behind a proxy every
// client shares the proxy's address: give the proxy its own limits.
func PerClientListener(ln net.Listener, limit int) net.Listener {
	return &perClient{Listener: ln, limit: limit, open: map[netip.Prefix]int{}}
}

type perClient struct {
	net.Listener
	limit int

	mu   sync.Mutex
	open map[netip.Prefix]int
}

func (l *perClient) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		key, ok := clientPrefix(c.RemoteAddr())
		if !ok {
			return c, nil
		}
		l.mu.Lock()
		full := l.open[key] >= l.limit
		if !full {
			l.open[key]++
		}
		l.mu.Unlock()
		if full {
			_ = c.Close() // refused: nothing was read or written
			continue
		}
		return &clientConn{Conn: c, release: func() { l.release(key) }}, nil
	}
}

func (l *perClient) release(key netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

func clientPrefix(addr net.Addr) (netip.Prefix, bool) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Prefix{}, false
	}
	ip, ok := netip.AddrFromSlice(tcp.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ip = ip.Unmap()
	bits := 32
	if ip.Is6() {
		bits = 64
	}
	p, err := ip.Prefix(bits)
	return p, err == nil
}

type clientConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *clientConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
