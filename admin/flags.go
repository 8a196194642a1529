package admin

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/net/netutil"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
	"github.com/clouddb/clouddb_exporter/internal/httplimit"
	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// Flags are the admin.* flags.
type Flags struct {
	listen, webConfig, tokenFile, auditLog string
	maxConnections                         string
	auditFailOpen, allowInsecureListener   bool
	allow                                  []string
	operationTimeout                       time.Duration
}

// Enabled reports whether --admin.listen-address is set.
func (f *Flags) Enabled() bool { return f.listen != "" }

// AddFlags registers the admin.* flags on app.
func AddFlags(app *kingpin.Application) *Flags {
	f := &Flags{}
	app.Flag("admin.listen-address", "Address of the admin surface (write operations); empty disables it.").
		Envar("CLOUDDB_ADMIN_LISTEN_ADDRESS").StringVar(&f.listen)
	app.Flag("admin.web-config.file", "TLS and basic-auth configuration of the admin listener.").
		Envar("CLOUDDB_ADMIN_WEB_CONFIG_FILE").StringVar(&f.webConfig)
	app.Flag("admin.allow-insecure-listener", "Allow the admin surface without TLS on an address that is not loopback.").
		Envar("CLOUDDB_ADMIN_ALLOW_INSECURE_LISTENER").BoolVar(&f.allowInsecureListener)
	app.Flag("admin.token-file", "File with the admin surface's bearer token.").
		Envar("CLOUDDB_ADMIN_TOKEN_FILE").StringVar(&f.tokenFile)
	app.Flag("admin.allow", "Write operations the admin surface permits (comma-separated).").
		Envar("CLOUDDB_ADMIN_ALLOW").StringsVar(&f.allow)
	app.Flag("admin.audit-log", "File the admin surface appends a JSON audit record per request to.").
		Envar("CLOUDDB_ADMIN_AUDIT_LOG").StringVar(&f.auditLog)
	app.Flag("admin.audit-fail-open", "Let writes go on when --admin.audit-log cannot be written.").
		Envar("CLOUDDB_ADMIN_AUDIT_FAIL_OPEN").BoolVar(&f.auditFailOpen)
	app.Flag("admin.max-connections", "Connections open at once on the admin listener (auto: by RLIMIT_NOFILE).").
		Default("auto").Envar("CLOUDDB_ADMIN_MAX_CONNECTIONS").StringVar(&f.maxConnections)
	flagval.Duration(app, "admin.operation-timeout", "How long an asynchronous admin operation is tracked before timing out.",
		DefaultOperationTimeout.String(), "CLOUDDB_ADMIN_OPERATION_TIMEOUT", &f.operationTimeout)
	return f
}

// Listener is the admin surface's own HTTP listener.
type Listener struct {
	srv      *http.Server
	tls      *tls.Config // nil for clear text
	grace    time.Duration
	maxConns int        // 0: no bound
	audit    *auditFile // nil without --admin.audit-log
	logger   *slog.Logger
	surface  *Server
}

// Reopen reopens the audit log after a rotation; a failure is logged.
func (a *Listener) Reopen() {
	if a.audit == nil {
		return
	}
	if err := a.audit.Reopen(); err != nil {
		a.logger.Error("Cannot reopen the audit log", "path", a.audit.path, "err", err)
		return
	}
	a.logger.Info("Audit log reopened", "path", a.audit.path)
}

// Listen binds --admin.listen-address (nil when off) before anything
// starts, so that a taken port stops the exporter at once, naming the flag.
func (f *Flags) Listen() (net.Listener, error) {
	if f.listen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, fmt.Errorf("--admin.listen-address (CLOUDDB_ADMIN_LISTEN_ADDRESS): %w", err)
	}
	return ln, nil
}

// Serve serves the admin surface on ln until Shutdown (http.ErrServerClosed).
func (a *Listener) Serve(ln net.Listener, logger *slog.Logger) error {
	var err error
	// Per client first: a connection refused for its address takes no
	// place of the listener's.
	ln = httplimit.PerClientListener(ln, httplimit.AdminConnectionsPerClient)
	if a.maxConns > 0 {
		ln = netutil.LimitListener(ln, a.maxConns)
	}
	logger.Info("Listening on", "listener", "admin", "address", ln.Addr().String(), "tls", a.tls != nil, "max_connections", a.maxConns,
		"max_connections_per_client", httplimit.AdminConnectionsPerClient)
	if a.tls != nil {
		a.srv.TLSConfig = a.tls
		err = a.srv.ServeTLS(ln, "", "")
	} else {
		err = a.srv.Serve(ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("admin listener: %w", err)
	}
	return err
}

// withHeaders sets the web configuration's headers: the surface is not
// served by exporter-toolkit's web.Serve.
func withHeaders(h http.Handler, c *web.Config) http.Handler {
	headers := c.HTTPConfig.Header
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		h.ServeHTTP(w, r)
	})
}

func rateLimit(c *web.Config) *RateLimit {
	if c.RateLimiterConfig.Interval == 0 {
		return nil
	}
	return &RateLimit{Interval: c.RateLimiterConfig.Interval, Burst: c.RateLimiterConfig.Burst}
}

// Shutdown waits for the writes in flight up to their upstream bound,
// whatever ctx's deadline: the API may still apply a write cut short, and
// its caller and the audit log would never learn its outcome. It then
// stops the tracking and waits for the audit log's last writers, so that
// the cleanup closes the log after them.
func (a *Listener) Shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.grace)
	defer cancel()
	if err := a.srv.Shutdown(ctx); err != nil {
		return err // requests still run: they, and the tracking, find the log closed
	}
	a.surface.Close()
	return nil
}

// Listener builds the admin listener from the flags and opts (nil when
// --admin.listen-address is empty); cleanup closes the audit log.
func (f *Flags) Listener(ctx context.Context, opts Options, simulate bool, stdout io.Writer) (*Listener, func(), error) {
	return f.listener(ctx, opts, simulate, stdout, openAuditLog)
}

func (f *Flags) listener(ctx context.Context, opts Options, simulate bool, stdout io.Writer, openLog func(path string) (io.Writer, func(), error)) (*Listener, func(), error) {
	nop := func() {}
	set, err := f.validate(opts, simulate, stdout, openLog)
	if set == nil || err != nil {
		return nil, nop, err
	}
	surface, err := New(ctx, set.opts)
	if err != nil {
		set.cleanup()
		return nil, nop, err
	}
	opts = set.opts
	opts.Logger.Info("Admin surface enabled", "address", f.listen, "allow", strings.Join(opts.Allow, ","),
		"basic_auth", len(opts.BasicAuthUsers) > 0, "audit_log", f.auditLog)
	// The surface bounds its requests in flight itself, so that it audits
	// those it refuses.
	timeouts := surface.opts.Timeouts
	srv := httplimit.Server(&http.Server{Handler: httplimit.Deadlines(withHeaders(surface, set.webConfig), timeouts)}, timeouts, opts.Logger)
	if !set.webConfig.HTTPConfig.HTTP2 {
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // HTTP/1.1 only
	}
	return &Listener{srv: srv, tls: set.tlsConfig, grace: surface.opts.RequestTimeout + shutdownMargin, maxConns: set.maxConns,
		audit: set.audit, logger: opts.Logger.With("component", "admin"), surface: surface}, set.cleanup, nil
}

func (f *Flags) checkUnused() error {
	for flag, v := range map[string]string{"--admin.web-config.file": f.webConfig, "--admin.token-file": f.tokenFile, "--admin.audit-log": f.auditLog} {
		if v != "" {
			return fmt.Errorf("%s is set but --admin.listen-address is empty: set both or neither", flag)
		}
	}
	if len(f.allow) > 0 {
		return errors.New("--admin.allow is set but --admin.listen-address is empty: set both or neither")
	}
	return nil
}

// authentication fills opts' token or basic-auth users, or makes up a
// token for a --simulate run on loopback.
func (f *Flags) authentication(opts *Options, simulate bool, stdout io.Writer) (*web.Config, error) {
	webConfig := &web.Config{}
	if f.webConfig != "" {
		if err := web.Validate(f.webConfig); err != nil {
			return nil, fmt.Errorf("--admin.web-config.file (CLOUDDB_ADMIN_WEB_CONFIG_FILE): %w", err)
		}
		wc, err := LoadWebConfig(f.webConfig)
		if err != nil {
			return nil, fmt.Errorf("--admin.web-config.file (CLOUDDB_ADMIN_WEB_CONFIG_FILE): %w", err)
		}
		webConfig, opts.BasicAuthUsers = wc, users(wc)
	}
	if f.tokenFile != "" {
		raw, err := safefile.ReadLinked(f.tokenFile, maxTokenFile)
		if err != nil {
			return nil, fmt.Errorf("--admin.token-file (CLOUDDB_ADMIN_TOKEN_FILE): %w", err)
		}
		opts.Token = strings.TrimSpace(string(raw))
		if opts.Token == "" {
			return nil, errors.New("--admin.token-file (CLOUDDB_ADMIN_TOKEN_FILE): the file is empty")
		}
		if len(opts.Token) < MinTokenLength {
			return nil, fmt.Errorf("--admin.token-file (CLOUDDB_ADMIN_TOKEN_FILE): the token is shorter than %d characters; use a random one of at least %d (openssl rand -hex 32)", MinTokenLength, GoodTokenLength)
		}
	}
	switch {
	case opts.Token != "" && len(opts.BasicAuthUsers) > 0:
		return nil, errors.New("--admin.token-file and basic_auth_users in --admin.web-config.file both use the Authorization header: configure one")
	case opts.Token == "" && len(opts.BasicAuthUsers) == 0 && simulate && isLoopback(f.listen):
		opts.Token = rand.Text()
		// A token nobody saw would lock the surface for the whole run.
		if _, err := fmt.Fprintf(stdout, "Admin token for this --simulate run (shown once): %s\n", opts.Token); err != nil {
			return nil, fmt.Errorf("showing the generated admin token: %w", err)
		}
	case opts.Token == "" && len(opts.BasicAuthUsers) == 0:
		return nil, errors.New("--admin.listen-address needs authentication: set --admin.token-file or basic_auth_users in --admin.web-config.file")
	}
	return webConfig, nil
}

// maxTokenFile bounds --admin.token-file: a token is a line.
const maxTokenFile = 64 << 10

// Lengths of an admin token: refused below MinTokenLength, warned about
// below GoodTokenLength. Only its length stops guessing: it has no rate
// limit of its own besides the optional rate_limit.
const (
	MinTokenLength  = 8
	GoodTokenLength = 16
)

// Warnings reports admin settings that work but expose the surface.
func (f *Flags) Warnings() []flagval.Warning {
	if f.listen == "" {
		return nil
	}
	var out []flagval.Warning
	if f.allowInsecureListener && !isLoopback(f.listen) && !f.servesTLS() {
		out = append(out, flagval.Warning{Setting: "--admin.allow-insecure-listener", Reason: "the admin listener serves clear text off loopback: its credentials and the writes' answers (database passwords included) cross the network readable; configure TLS in --admin.web-config.file"})
	}
	if f.auditFailOpen {
		out = append(out, flagval.Warning{Setting: "--admin.audit-fail-open", Reason: "writes go on when the audit log cannot be written: a write may leave no audit record"})
	}
	if f.tokenFile == "" {
		return out
	}
	if raw, err := safefile.ReadLinked(f.tokenFile, maxTokenFile); err == nil && len(strings.TrimSpace(string(raw))) < GoodTokenLength {
		out = append(out, flagval.Warning{Setting: "--admin.token-file", Reason: fmt.Sprintf("the token is shorter than %d characters: use a random one of at least %d", GoodTokenLength, GoodTokenLength)})
	}
	if w, ok := flagval.SecretFileWarning("--admin.token-file", f.tokenFile); ok {
		out = append(out, w)
	}
	return out
}

// servesTLS: a web configuration that cannot be read is refused by the
// checks, not warned about.
func (f *Flags) servesTLS() bool {
	if f.webConfig == "" {
		return false
	}
	c, err := LoadWebConfig(f.webConfig)
	return err == nil && c.TLSConfig.IsEnabled()
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// splitList keeps an empty name, for the check to refuse.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for name := range strings.SplitSeq(v, ",") {
			out = append(out, strings.TrimSpace(name))
		}
	}
	return out
}
