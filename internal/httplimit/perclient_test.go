package httplimit

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// TestPerClientListener: connections beyond the bound from one client
// address are closed as soon as accepted, so that one address holding
// hundreds of idle connections (530 made every other admin caller wait
// 7-9 s) cannot take the listener's places; another address and a freed
// place are served.
func TestPerClientListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := PerClientListener(inner, 2)
	defer func() { _ = ln.Close() }()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(local string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// closed waits for the server's side of c to close (EOF), the test's
	// deadline bounding a wait for one that stays open.
	closed := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		return errors.Is(err, io.EOF)
	}
	a1, a2 := dial("127.0.0.1"), dial("127.0.0.1")
	server1, server2 := <-accepted, <-accepted
	third := dial("127.0.0.1")
	if !closed(third) {
		t.Error("a third connection from one address was kept, want it closed")
	}
	other := dial("127.0.0.2")
	if c := <-accepted; c.RemoteAddr().(*net.TCPAddr).IP.String() != "127.0.0.2" {
		t.Errorf("accepted %s, want the other address's connection", c.RemoteAddr())
	}
	_ = server1.Close()
	if !closed(a1) {
		t.Fatal("the server's close did not reach the client")
	}
	again := dial("127.0.0.1")
	select {
	case c := <-accepted:
		if c.RemoteAddr().String() != again.LocalAddr().String() {
			t.Errorf("accepted %s, want the connection made after a place was freed", c.RemoteAddr())
		}
	case <-time.After(10 * time.Second):
		t.Error("a connection after a place was freed was not accepted")
	}
	_, _ = a2, other
	_ = server2
}
