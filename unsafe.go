package main

import (
	"net"
	"net/netip"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// mainWarnings are the settings of the process and its main listener that
// work but expose something, each one "Unsafe setting" WARN at start.
func mainWarnings(f *flags, euid int) []flagval.Warning {
	var out []flagval.Warning
	open := *f.web.WebConfigFile == "" && !allLoopback(*f.web.WebListenAddresses)
	if open && f.enableLifecycle {
		out = append(out, flagval.Warning{Setting: "--web.enable-lifecycle", Reason: "POST /-/reload is served off loopback without --web.config.file: anyone who reaches the port can make the exporter re-read its files and call the API; listen on loopback or add TLS and basic auth"})
	}
	if open && f.enablePprof {
		out = append(out, flagval.Warning{Setting: "--web.enable-pprof", Reason: "the Go profiler is served off loopback without --web.config.file: anyone who reaches the port can read the exporter's internals and spend its CPU; listen on loopback or add TLS and basic auth"})
	}
	if euid == 0 {
		out = append(out, flagval.Warning{Setting: "user", Reason: "the exporter runs as root: run it as an unprivileged user (the container image and the Helm chart do)"})
	}
	return out
}

// allLoopback: systemd socket activation (no address) counts as not.
func allLoopback(addrs []string) bool {
	if len(addrs) == 0 {
		return false
	}
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			return false
		}
		if host == "localhost" {
			continue
		}
		if ip, err := netip.ParseAddr(host); err != nil || !ip.IsLoopback() {
			return false
		}
	}
	return true
}
