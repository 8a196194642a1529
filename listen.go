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

// listenAndServe is the toolkit's web.ListenAndServe (systemd sockets,
// vsock:// and TCP addresses), with at most maxConns connections open on
// each listener (0: no limit). Beyond it a client waits in the kernel's
// accept queue instead of taking a file descriptor: the toolkit accepts
// without bound, and idle connections exhausted the process's.
func listenAndServe(srv *http.Server, flags *web.FlagConfig, maxConns int, logger *slog.Logger) error {
	listeners, err := listen(flags, logger)
	if err != nil {
		return err
	}
	for i, l := range listeners {
		defer func() { _ = l.Close() }() // after Serve returns; Shutdown closes it first
		if maxConns > 0 {
			listeners[i] = netutil.LimitListener(l, maxConns)
		}
	}
	return web.ServeMultiple(listeners, srv, flags, logger)
}

// listen opens the listeners of the --web.* flags as the toolkit does.
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
