package projects

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
)

// Discovery finds the projects a credential can access (GET /projects).
type Discovery struct {
	template config.Project
	client   *apiclient.Client
	creds    *credentials
	Metrics  *DiscoveryMetrics
	health   discoveryHealth
	logger   *slog.Logger
	now      func() time.Time
}

// NewDiscovery returns a Discovery for template, a project without an id.
func NewDiscovery(template config.Project, userAgent string, observer apiclient.Observer, logger *slog.Logger) (*Discovery, error) {
	cfg, err := template.ClientConfig()
	if err != nil {
		return nil, err
	}
	creds := &credentials{cur: template.Credentials, logger: logger.With("component", "discovery")}
	cfg.ProjectID, cfg.UserAgent, cfg.Observer = "", userAgent, observer
	cfg.OnUnauthorized = func() bool { return creds.reread("unauthorized") }
	client, err := apiclient.New(cfg)
	if err != nil {
		return nil, err
	}
	creds.client = client
	return &Discovery{template: template, client: client, creds: creds, logger: logger, now: time.Now}, nil
}

// Load lists the projects with the current keys, so a reload after a rotation
// hands the new ones on. On failure the running projects keep running.
func (d *Discovery) Load(ctx context.Context) ([]config.Project, error) {
	found, err := d.load(ctx)
	d.health.record(d.logger, d.Metrics, d.now(), found, err)
	if err != nil {
		return nil, &discoveryError{err}
	}
	return found, nil
}

func (d *Discovery) load(ctx context.Context) ([]config.Project, error) {
	// Read before each discovery (and on a 401) rather than watched.
	d.creds.reread("reload")
	found, err := d.client.ListProjects(ctx)
	if err != nil {
		if apiclient.IsNotFound(err) {
			return nil, fmt.Errorf("project discovery: GET /projects is not served (an API of the first revision?); set --api.project-id: %w", err)
		}
		return nil, fmt.Errorf("project discovery: %w", err)
	}
	keys := d.creds.current()
	var out []config.Project
	for _, p := range found {
		if strings.TrimSpace(p.ID) == "" || slices.ContainsFunc(out, func(c config.Project) bool { return c.ID == p.ID }) {
			continue // unusable or repeated: the first of each is kept
		}
		cfg := d.template
		cfg.ID, cfg.Name, cfg.Credentials = p.ID, p.Name, keys
		out = append(out, cfg)
	}
	slices.SortFunc(out, func(a, b config.Project) int { return strings.Compare(a.ID, b.ID) })
	if len(out) == 0 && len(found) > 0 {
		return nil, errors.New("project discovery: GET /projects answered no usable project id")
	}
	return out, nil
}
