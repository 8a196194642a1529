package apiclient

import (
	"context"
	"net/http"
)

// VPC operation names.
const (
	OpListVPCs  = "listVPCs"
	OpCreateVPC = "createVPC"
	OpGetVPC    = "getVPC"
	OpRenameVPC = "renameVPC"
	OpDeleteVPC = "deleteVPC"
)

var _ = register([]Operation{
	{OpListVPCs, http.MethodGet, vpcsPath, http.StatusOK, syncOp, readOp},
	{OpCreateVPC, http.MethodPost, vpcsPath, http.StatusCreated, syncOp, writeOp},
	{OpGetVPC, http.MethodGet, vpcPath, http.StatusOK, syncOp, readOp},
	{OpRenameVPC, http.MethodPost, vpcPath + "/rename", http.StatusOK, syncOp, writeOp},
	{OpDeleteVPC, http.MethodDelete, vpcPath, http.StatusNoContent, syncOp, writeOp},
})

// ListVPCs lists the project's VPCs.
func (c *Client) ListVPCs(ctx context.Context) ([]VPC, error) {
	return doList[VPC](ctx, c, call{op: OpListVPCs})
}

// CreateVPC creates a VPC (201).
func (c *Client) CreateVPC(ctx context.Context, req CreateVPCRequest) (*VPC, error) {
	return doValue[VPC](ctx, c, call{op: OpCreateVPC, body: req})
}

// GetVPC returns one VPC.
func (c *Client) GetVPC(ctx context.Context, vpcID string) (*VPC, error) {
	return doValue[VPC](ctx, c, call{op: OpGetVPC, ids: []string{vpcID}})
}

// RenameVPC renames a VPC and returns it with its new name.
func (c *Client) RenameVPC(ctx context.Context, vpcID string, req RenameVPCRequest) (*VPC, error) {
	return doValue[VPC](ctx, c, call{op: OpRenameVPC, ids: []string{vpcID}, body: req})
}

// DeleteVPC deletes a VPC (204).
func (c *Client) DeleteVPC(ctx context.Context, vpcID string) error {
	return c.do(ctx, call{op: OpDeleteVPC, ids: []string{vpcID}})
}
