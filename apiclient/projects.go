package apiclient

import (
	"context"
	"net/http"
)

// OpListProjects is revision 2026's GET /projects.
const OpListProjects = "listProjects"

var _ = register([]Operation{{OpListProjects, http.MethodGet, "/projects", http.StatusOK, syncOp, readOp}})

// ListProjects lists the projects the credentials see (revision 2026): a key pair its own, a user all.
func (c *Client) ListProjects(ctx context.Context) ([]Project, error) {
	return doList[Project](ctx, c, call{op: OpListProjects})
}
