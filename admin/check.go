package admin

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/clouddb/clouddb_exporter/internal/httplimit"
)

// settings are the validated admin flags.
type settings struct {
	opts      Options
	maxConns  int
	webConfig *web.Config
	tlsConfig *tls.Config // nil for clear text
	audit     *auditFile  // nil without one or for a check
	cleanup   func()
}

// Check makes Listener's checks without building anything: no goroutine,
// no metric, no audit log created or opened, no generated token shown.
func (f *Flags) Check(_ context.Context, opts Options, simulate bool) error {
	set, err := f.validate(opts, simulate, io.Discard, checkAuditLog)
	if set != nil {
		set.cleanup()
	}
	return err
}

func (f *Flags) validate(opts Options, simulate bool, stdout io.Writer, openLog func(path string) (io.Writer, func(), error)) (*settings, error) {
	if f.listen == "" {
		return nil, f.checkUnused()
	}
	allow := splitList(f.allow)
	if len(allow) == 0 {
		allow = DefaultAllow()
	}
	if err := CheckAllow("--admin.allow", allow); err != nil {
		return nil, err
	}
	opts.Allow, opts.OperationTimeout = allow, f.operationTimeout
	if f.operationTimeout <= 0 {
		return nil, errors.New("--admin.operation-timeout (CLOUDDB_ADMIN_OPERATION_TIMEOUT) must be positive")
	}
	maxConns, err := httplimit.MaxConnections("--admin.max-connections (CLOUDDB_ADMIN_MAX_CONNECTIONS)", cmp.Or(f.maxConnections, "auto"), httplimit.AdminConnectionsShare, httplimit.AdminConnectionsCap)
	if err != nil {
		return nil, err
	}
	webConfig, err := f.authentication(&opts, simulate, stdout)
	if err != nil {
		return nil, err
	}
	set := &settings{maxConns: maxConns, webConfig: webConfig, cleanup: func() {}}
	if f.auditLog != "" {
		w, closeLog, err := openLog(f.auditLog)
		if err != nil {
			return nil, fmt.Errorf("--admin.audit-log (CLOUDDB_ADMIN_AUDIT_LOG): %w", err)
		}
		set.cleanup, opts.AuditLog = closeLog, w
		set.audit, _ = w.(*auditFile)
	}
	opts.AuditFailOpen = f.auditFailOpen
	opts.RateLimit = rateLimit(webConfig)
	set.opts = opts
	if err := f.checkTransport(set); err != nil {
		set.cleanup()
		return nil, err
	}
	return set, nil
}

func (f *Flags) checkTransport(set *settings) error {
	if _, err := checkHashes(set.opts.BasicAuthUsers, nil); err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	if set.webConfig.TLSConfig.IsEnabled() {
		// The files are re-read on each handshake: a rotation is picked up.
		tlsConfig, err := web.ConfigToTLSConfig(&set.webConfig.TLSConfig)
		if err != nil {
			return fmt.Errorf("--admin.web-config.file (CLOUDDB_ADMIN_WEB_CONFIG_FILE): %w", err)
		}
		set.tlsConfig = tlsConfig
	}
	if set.tlsConfig == nil && !isLoopback(f.listen) && !f.allowInsecureListener {
		return fmt.Errorf("--admin.listen-address (CLOUDDB_ADMIN_LISTEN_ADDRESS) %q is not a loopback address and --admin.web-config.file configures no TLS: credentials would cross the network in clear text; configure TLS, listen on loopback, or set --admin.allow-insecure-listener", f.listen)
	}
	return nil
}

func openAuditLog(path string) (io.Writer, func(), error) {
	file, err := openAuditFile(path)
	if err != nil {
		return nil, nil, err
	}
	return file, func() { _ = file.Close() }, nil
}

// checkAuditLog checks that openAuditLog could open the audit log without
// opening or creating it.
func checkAuditLog(path string) (io.Writer, func(), error) {
	nop := func() {}
	target := path
	info, err := os.Lstat(path)
	switch {
	case err == nil && info.IsDir():
		return nil, nop, fmt.Errorf("%s is a directory", path)
	case err == nil && !info.Mode().IsRegular():
		return nil, nop, fmt.Errorf("%s is not a regular file (a symbolic link, a FIFO or a device): the audit log is never written through one", path)
	case errors.Is(err, fs.ErrNotExist):
		target = filepath.Dir(path)
		info, err = os.Stat(target)
		if err == nil && !info.IsDir() {
			return nil, nop, fmt.Errorf("%s is not a directory", target)
		}
	}
	if err != nil {
		return nil, nop, err
	}
	if err := checkWritable(target); err != nil {
		return nil, nop, fmt.Errorf("cannot write %s: %w", path, err)
	}
	return io.Discard, nop, nil
}
