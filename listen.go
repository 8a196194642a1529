package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/mdlayher/vsock"
	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/net/netutil"
)

type boundListeners struct {
	main  []net.Listener
	admin net.Listener // nil without --admin.listen-address
}

func bindListeners(f *flags, logger *slog.Logger) (*boundListeners, error) {
	main, err := listen(f.web, logger)
	if err != nil {
		flag := "web.listen-address"
		if f.web.WebSystemdSocket != nil && *f.web.WebSystemdSocket {
			flag = "web.systemd-socket"
		}
		return nil, fmt.Errorf("--%s (%s): %w", flag, envarOf(flag), err)
	}
	lns := &boundListeners{main: main}
	if lns.admin, err = f.admin.Listen(); err != nil {
		lns.close()
		return nil, err
	}
	return lns, nil
}

// After a shutdown, which closed them already, it does nothing.
func (b *boundListeners) close() {
	for _, l := range b.main {
		_ = l.Close()
	}
	if b.admin != nil {
		_ = b.admin.Close()
	}
}

// serveMain is web.ListenAndServe with at most maxConns connections per
// listener: the toolkit's unbounded accepts exhausted the file descriptors.
func serveMain(srv *http.Server, listeners []net.Listener, flags *web.FlagConfig, maxConns int, logger *slog.Logger) error {
	if maxConns > 0 {
		limited := make([]net.Listener, len(listeners))
		for i, l := range listeners {
			limited[i] = netutil.LimitListener(l, maxConns)
		}
		listeners = limited
	}
	return web.ServeMultiple(listeners, srv, flags, logger)
}

func listen(flags *web.FlagConfig, logger *slog.Logger) ([]net.Listener, error) {
	if flags.WebSystemdSocket != nil && *flags.WebSystemdSocket {
		logger.Info("Listening on systemd activated listeners instead of port listeners.")
		listeners, err := activation.Listeners()
		if err == nil && len(listeners) == 0 {
			err = errors.New("no socket activation file descriptors found")
		}
		return listeners, err
	}
	if flags.WebListenAddresses == nil || len(*flags.WebListenAddresses) == 0 {
		return nil, web.ErrNoListeners
	}
	var listeners []net.Listener
	for _, address := range *flags.WebListenAddresses {
		l, err := listenOn(address)
		if err != nil {
			for _, opened := range listeners {
				_ = opened.Close()
			}
			return nil, err
		}
		listeners = append(listeners, l)
	}
	return listeners, nil
}

func listenOn(address string) (net.Listener, error) {
	if !strings.HasPrefix(address, "vsock://") {
		return net.Listen("tcp", address)
	}
	u, err := url.Parse(address)
	if err != nil {
		return nil, err
	}
	_, portStr, err := net.SplitHostPort(u.Host)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("vsock port %q: %w", portStr, err)
	}
	return vsock.Listen(uint32(port), nil)
}
