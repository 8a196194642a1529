package apiclient

import "context"

func (*Project) dropField(FieldError) {} // keeps no record: both fields are text, a lost one reads ""
func (*Project) idField() string      { return "id" }

// ListProjects lists the projects the credentials can access (revision
// 2026): a key pair sees its own, a user all of theirs.
func (c *Client) ListProjects(ctx context.Context) ([]Project, error) {
	return doList[Project](ctx, c, call{op: OpListProjects})
}
