package apiclient

import (
	"context"
	"net/http"
	"time"
)

// Service operation names.
const (
	OpListServices          = "listServices"
	OpCreateService         = "createService"
	OpGetService            = "getService"
	OpDeleteService         = "deleteService"
	OpResizeService         = "resizeService"
	OpUpdatePassword        = "updatePassword"
	OpSetServiceEnvironment = "setServiceEnvironment"
	OpSetHA                 = "setHA"
	OpEnableServicePooler   = "enableServicePooler"
	OpDisableServicePooler  = "disableServicePooler"
	OpForkService           = "forkService"
	OpAttachToVPC           = "attachToVPC"
	OpDetachFromVPC         = "detachFromVPC"
	// Revision 2026 only.
	OpStartService  = "startService"
	OpStopService   = "stopService"
	OpRenameService = "renameService"
	// Revision 2026 only: usage series (a preview) and logs.
	OpGetServiceMetricsAvailableSeries = "getServiceMetricsAvailableSeries"
	OpGetServiceMetricsSeries          = "getServiceMetricsSeries"
	OpGetServiceLogs                   = "getServiceLogs"
)

var _ = register([]Operation{
	{OpListServices, http.MethodGet, servicesPath, http.StatusOK, syncOp, readOp},
	{OpCreateService, http.MethodPost, servicesPath, http.StatusAccepted, asyncOp, writeOp},
	{OpGetService, http.MethodGet, servicePath, http.StatusOK, syncOp, readOp},
	{OpDeleteService, http.MethodDelete, servicePath, http.StatusAccepted, asyncOp, writeOp},
	{OpResizeService, http.MethodPost, servicePath + "/resize", http.StatusAccepted, asyncOp, writeOp},
	{OpUpdatePassword, http.MethodPost, servicePath + "/updatePassword", http.StatusNoContent, syncOp, writeOp},
	{OpSetServiceEnvironment, http.MethodPost, servicePath + "/setEnvironment", http.StatusOK, syncOp, writeOp},
	{OpSetHA, http.MethodPost, servicePath + "/setHA", http.StatusAccepted, asyncOp, writeOp},
	{OpEnableServicePooler, http.MethodPost, servicePath + "/enablePooler", http.StatusOK, syncOp, writeOp},
	{OpDisableServicePooler, http.MethodPost, servicePath + "/disablePooler", http.StatusOK, syncOp, writeOp},
	{OpForkService, http.MethodPost, servicePath + "/forkService", http.StatusAccepted, asyncOp, writeOp},
	{OpAttachToVPC, http.MethodPost, servicePath + "/attachToVPC", http.StatusAccepted, asyncOp, writeOp},
	{OpDetachFromVPC, http.MethodPost, servicePath + "/detachFromVPC", http.StatusAccepted, asyncOp, writeOp},
	{OpStartService, http.MethodPost, servicePath + "/start", http.StatusAccepted, asyncOp, writeOp},                               // revision 2026
	{OpStopService, http.MethodPost, servicePath + "/stop", http.StatusAccepted, asyncOp, writeOp},                                 // revision 2026
	{OpRenameService, http.MethodPost, servicePath + "/rename", http.StatusOK, syncOp, writeOp},                                    // revision 2026
	{OpGetServiceMetricsAvailableSeries, http.MethodGet, servicePath + "/metrics/available-series", http.StatusOK, syncOp, readOp}, // revision 2026
	{OpGetServiceMetricsSeries, http.MethodPost, servicePath + "/metrics/series", http.StatusOK, syncOp, readOp},                   // revision 2026: a POST that reads
	{OpGetServiceLogs, http.MethodGet, servicePath + "/logs", http.StatusOK, syncOp, readOp},                                       // revision 2026
}, Example{Op: OpGetServiceMetricsSeries, Arg: SeriesRequest{Name: "p_database_qps", From: exampleFrom, To: exampleTo, BucketSeconds: 60}},
	Example{Op: OpGetServiceLogs, Arg: LogsQuery{Since: exampleFrom.Time, Until: exampleTo.Time, Severities: []string{SeverityError}},
		Query: "severities=ERROR&since=2026-01-02T03%3A04%3A00Z&until=2026-01-02T03%3A06%3A00Z"})

var exampleFrom, exampleTo = Time{time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}, Time{time.Date(2026, 1, 2, 3, 6, 0, 0, time.UTC)}

// ListServices lists the project's services.
func (c *Client) ListServices(ctx context.Context) ([]Service, error) {
	return doList[Service](ctx, c, call{op: OpListServices})
}

// StreamServices hands each decoded service to each (which owns it), so that a caller never holds the
// fleet twice; a retry calls begin again. An error after some services means the list is incomplete.
func (c *Client) StreamServices(ctx context.Context, begin func(), each func(*Service)) error {
	return c.do(ctx, call{op: OpListServices, out: &[]Service{}, begin: begin, each: func(elem any) {
		each(elem.(*Service))
	}})
}

// CreateService creates a service (202); the answer carries InitialPassword. A nil Addons is sent as [].
func (c *Client) CreateService(ctx context.Context, req CreateServiceRequest) (*Service, error) {
	if req.Addons == nil {
		req.Addons = []string{}
	}
	return doValue[Service](ctx, c, call{op: OpCreateService, body: req})
}

// GetService returns one service.
func (c *Client) GetService(ctx context.Context, serviceID string) (*Service, error) {
	return doValue[Service](ctx, c, call{op: OpGetService, ids: []string{serviceID}})
}

// DeleteService starts deleting a service (202, asynchronous).
func (c *Client) DeleteService(ctx context.Context, serviceID string) error {
	return c.do(ctx, call{op: OpDeleteService, ids: []string{serviceID}})
}

// ResizeService starts resizing a service (202, asynchronous).
func (c *Client) ResizeService(ctx context.Context, serviceID string, req ResizeServiceRequest) error {
	return c.do(ctx, call{op: OpResizeService, ids: []string{serviceID}, body: req})
}

// UpdatePassword sets a service's master password (204).
func (c *Client) UpdatePassword(ctx context.Context, serviceID string, req UpdatePasswordRequest) error {
	return c.do(ctx, call{op: OpUpdatePassword, ids: []string{serviceID}, body: req})
}

// SetServiceEnvironment sets a service's environment label (PROD or DEV).
func (c *Client) SetServiceEnvironment(ctx context.Context, serviceID string, req SetEnvironmentRequest) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpSetServiceEnvironment, ids: []string{serviceID}, body: req})
}

// SetHA sets a service's high-availability replica count (202, asynchronous).
func (c *Client) SetHA(ctx context.Context, serviceID string, req SetHARequest) error {
	return c.do(ctx, call{op: OpSetHA, ids: []string{serviceID}, body: req})
}

// EnableServicePooler enables a service's connection pooler.
func (c *Client) EnableServicePooler(ctx context.Context, serviceID string) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpEnableServicePooler, ids: []string{serviceID}})
}

// DisableServicePooler disables a service's connection pooler.
func (c *Client) DisableServicePooler(ctx context.Context, serviceID string) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpDisableServicePooler, ids: []string{serviceID}})
}

// ForkService creates a service from an existing one (202); the answer carries its InitialPassword.
func (c *Client) ForkService(ctx context.Context, serviceID string, req ForkServiceRequest) (*Service, error) {
	return doValue[Service](ctx, c, call{op: OpForkService, ids: []string{serviceID}, body: req})
}

// AttachToVPC starts attaching a service to a VPC (202, asynchronous).
func (c *Client) AttachToVPC(ctx context.Context, serviceID string, req VPCAttachmentRequest) error {
	return c.do(ctx, call{op: OpAttachToVPC, ids: []string{serviceID}, body: req})
}

// DetachFromVPC starts detaching a service from a VPC (202, asynchronous).
func (c *Client) DetachFromVPC(ctx context.Context, serviceID string, req VPCAttachmentRequest) error {
	return c.do(ctx, call{op: OpDetachFromVPC, ids: []string{serviceID}, body: req})
}

// StartService resumes a paused service (revision 2026; 202).
func (c *Client) StartService(ctx context.Context, serviceID string) (*Service, error) {
	return doValue[Service](ctx, c, call{op: OpStartService, ids: []string{serviceID}})
}

// StopService pauses a service (revision 2026; 202).
func (c *Client) StopService(ctx context.Context, serviceID string) (*Service, error) {
	return doValue[Service](ctx, c, call{op: OpStopService, ids: []string{serviceID}})
}

// RenameService renames a service (revision 2026): 200 with the service.
func (c *Client) RenameService(ctx context.Context, serviceID string, req RenameServiceRequest) (*Service, error) {
	return doValue[Service](ctx, c, call{op: OpRenameService, ids: []string{serviceID}, body: req})
}
