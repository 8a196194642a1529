package apiclient

import (
	"context"
	"net/http"
)

const (
	servicesPath = "/projects/{project_id}/services"
	servicePath  = servicesPath + "/{service_id}"
)

// ListServices lists the project's services.
func (c *Client) ListServices(ctx context.Context) ([]Service, error) {
	return doList[Service](ctx, c, call{op: OpListServices, method: http.MethodGet, tmpl: servicesPath, want: http.StatusOK})
}

// CreateService creates a service. It is asynchronous (202): the returned
// Service carries InitialPassword, and its status may change later. A nil
// Addons is sent as [] (a plain Postgres service), never as null.
func (c *Client) CreateService(ctx context.Context, req CreateServiceRequest) (*Service, error) {
	if req.Addons == nil {
		req.Addons = []string{}
	}
	return doValue[Service](ctx, c, call{op: OpCreateService, method: http.MethodPost, tmpl: servicesPath, body: req, want: http.StatusAccepted})
}

// GetService returns one service.
func (c *Client) GetService(ctx context.Context, serviceID string) (*Service, error) {
	return doValue[Service](ctx, c, call{op: OpGetService, method: http.MethodGet, tmpl: servicePath, ids: []string{serviceID}, want: http.StatusOK})
}

// DeleteService starts deleting a service (202, asynchronous).
func (c *Client) DeleteService(ctx context.Context, serviceID string) error {
	return c.do(ctx, call{op: OpDeleteService, method: http.MethodDelete, tmpl: servicePath, ids: []string{serviceID}, want: http.StatusAccepted})
}

// ResizeService starts resizing a service (202, asynchronous).
func (c *Client) ResizeService(ctx context.Context, serviceID string, req ResizeServiceRequest) error {
	return c.do(ctx, call{op: OpResizeService, method: http.MethodPost, tmpl: servicePath + "/resize", ids: []string{serviceID}, body: req, want: http.StatusAccepted})
}

// UpdatePassword sets a service's master password (204).
func (c *Client) UpdatePassword(ctx context.Context, serviceID string, req UpdatePasswordRequest) error {
	return c.do(ctx, call{op: OpUpdatePassword, method: http.MethodPost, tmpl: servicePath + "/updatePassword", ids: []string{serviceID}, body: req, want: http.StatusNoContent})
}

// SetServiceEnvironment sets a service's environment label (PROD or DEV).
func (c *Client) SetServiceEnvironment(ctx context.Context, serviceID string, req SetEnvironmentRequest) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpSetServiceEnvironment, method: http.MethodPost, tmpl: servicePath + "/setEnvironment", ids: []string{serviceID}, body: req, want: http.StatusOK})
}

// SetHA sets a service's high-availability replica count (202, asynchronous).
func (c *Client) SetHA(ctx context.Context, serviceID string, req SetHARequest) error {
	return c.do(ctx, call{op: OpSetHA, method: http.MethodPost, tmpl: servicePath + "/setHA", ids: []string{serviceID}, body: req, want: http.StatusAccepted})
}

// EnableServicePooler enables a service's connection pooler.
func (c *Client) EnableServicePooler(ctx context.Context, serviceID string) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpEnableServicePooler, method: http.MethodPost, tmpl: servicePath + "/enablePooler", ids: []string{serviceID}, want: http.StatusOK})
}

// DisableServicePooler disables a service's connection pooler.
func (c *Client) DisableServicePooler(ctx context.Context, serviceID string) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpDisableServicePooler, method: http.MethodPost, tmpl: servicePath + "/disablePooler", ids: []string{serviceID}, want: http.StatusOK})
}

// ForkService creates a new independent service from a snapshot of an
// existing one (202, asynchronous). The returned Service carries ForkedFrom
// and InitialPassword.
func (c *Client) ForkService(ctx context.Context, serviceID string, req ForkServiceRequest) (*Service, error) {
	return doValue[Service](ctx, c, call{op: OpForkService, method: http.MethodPost, tmpl: servicePath + "/forkService", ids: []string{serviceID}, body: req, want: http.StatusAccepted})
}

// AttachToVPC starts attaching a service to a VPC (202, asynchronous).
func (c *Client) AttachToVPC(ctx context.Context, serviceID string, req VPCAttachmentRequest) error {
	return c.do(ctx, call{op: OpAttachToVPC, method: http.MethodPost, tmpl: servicePath + "/attachToVPC", ids: []string{serviceID}, body: req, want: http.StatusAccepted})
}

// DetachFromVPC starts detaching a service from a VPC (202, asynchronous).
func (c *Client) DetachFromVPC(ctx context.Context, serviceID string, req VPCAttachmentRequest) error {
	return c.do(ctx, call{op: OpDetachFromVPC, method: http.MethodPost, tmpl: servicePath + "/detachFromVPC", ids: []string{serviceID}, body: req, want: http.StatusAccepted})
}
