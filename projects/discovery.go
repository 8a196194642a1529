package projects

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
)

// Discovery finds the projects a credential can access (GET /projects,
// revision 2026), for an exporter given credentials but no project: every
// project found is polled with the template's settings.
type Discovery struct {
	template config.Project
	client   *apiclient.Client
}

// NewDiscovery returns a Discovery for template, a project without an id.
func NewDiscovery(template config.Project, userAgent string, observer apiclient.Observer) (*Discovery, error) {
	cfg, err := template.ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.ProjectID, cfg.UserAgent, cfg.Observer = "", userAgent, observer
	client, err := apiclient.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Discovery{template: template, client: client}, nil
}

// Load lists the projects and returns one configuration per project, sorted
// by id. A failure returns an error, and the projects running keep running.
func (d *Discovery) Load(ctx context.Context) ([]config.Project, error) {
	found, err := d.client.ListProjects(ctx)
	if err != nil {
		if apiclient.IsNotFound(err) {
			return nil, fmt.Errorf("project discovery: GET /projects is not served (an API of the first revision?); set --api.project-id: %w", err)
		}
		return nil, fmt.Errorf("project discovery: %w", err)
	}
	var out []config.Project
	for _, p := range found {
		if strings.TrimSpace(p.ID) == "" || slices.ContainsFunc(out, func(c config.Project) bool { return c.ID == p.ID }) {
			continue // unusable or repeated: the first of each is kept
		}
		cfg := d.template
		cfg.ID, cfg.Name = p.ID, p.Name
		out = append(out, cfg)
	}
	slices.SortFunc(out, func(a, b config.Project) int { return strings.Compare(a.ID, b.ID) })
	if len(out) == 0 && len(found) > 0 {
		return nil, errors.New("project discovery: GET /projects answered no usable project id")
	}
	return out, nil
}
