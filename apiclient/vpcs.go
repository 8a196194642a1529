package apiclient

import (
	"context"
	"net/http"
)

const (
	vpcsPath = "/projects/{project_id}/vpcs"
	vpcPath  = vpcsPath + "/{vpc_id}"
)

// ListVPCs lists the project's VPCs.
func (c *Client) ListVPCs(ctx context.Context) ([]VPC, error) {
	return doList[VPC](ctx, c, call{op: OpListVPCs, method: http.MethodGet, tmpl: vpcsPath, want: http.StatusOK})
}

// CreateVPC creates a VPC (201).
func (c *Client) CreateVPC(ctx context.Context, req CreateVPCRequest) (*VPC, error) {
	return doValue[VPC](ctx, c, call{op: OpCreateVPC, method: http.MethodPost, tmpl: vpcsPath, body: req, want: http.StatusCreated})
}

// GetVPC returns one VPC.
func (c *Client) GetVPC(ctx context.Context, vpcID string) (*VPC, error) {
	return doValue[VPC](ctx, c, call{op: OpGetVPC, method: http.MethodGet, tmpl: vpcPath, ids: []string{vpcID}, want: http.StatusOK})
}

// RenameVPC renames a VPC and returns it with its new name.
func (c *Client) RenameVPC(ctx context.Context, vpcID string, req RenameVPCRequest) (*VPC, error) {
	return doValue[VPC](ctx, c, call{op: OpRenameVPC, method: http.MethodPost, tmpl: vpcPath + "/rename", ids: []string{vpcID}, body: req, want: http.StatusOK})
}

// DeleteVPC deletes a VPC (204).
func (c *Client) DeleteVPC(ctx context.Context, vpcID string) error {
	return c.do(ctx, call{op: OpDeleteVPC, method: http.MethodDelete, tmpl: vpcPath, ids: []string{vpcID}, want: http.StatusNoContent})
}
