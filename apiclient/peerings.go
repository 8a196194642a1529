package apiclient

import (
	"context"
	"net/http"
)

// Peering operation names.
const (
	OpListPeerings  = "listPeerings"
	OpCreatePeering = "createPeering"
	OpGetPeering    = "getPeering"
	OpDeletePeering = "deletePeering"
)

var _ = register([]Operation{
	{OpListPeerings, http.MethodGet, peeringsPath, http.StatusOK, syncOp, readOp},
	{OpCreatePeering, http.MethodPost, peeringsPath, http.StatusCreated, syncOp, writeOp},
	{OpGetPeering, http.MethodGet, peeringPath, http.StatusOK, syncOp, readOp},
	{OpDeletePeering, http.MethodDelete, peeringPath, http.StatusNoContent, syncOp, writeOp},
})

// ListPeerings lists a VPC's peering connections.
func (c *Client) ListPeerings(ctx context.Context, vpcID string) ([]Peering, error) {
	return doList[Peering](ctx, c, call{op: OpListPeerings, ids: []string{vpcID}})
}

// CreatePeering requests a peering connection (201); it starts as pending.
func (c *Client) CreatePeering(ctx context.Context, vpcID string, req CreatePeeringRequest) (*Peering, error) {
	return doValue[Peering](ctx, c, call{op: OpCreatePeering, ids: []string{vpcID}, body: req})
}

// GetPeering returns one peering connection, decoded as a list element (the spec shows no body).
func (c *Client) GetPeering(ctx context.Context, vpcID, peeringID string) (*Peering, error) {
	return doValue[Peering](ctx, c, call{op: OpGetPeering, ids: []string{vpcID, peeringID}})
}

// DeletePeering deletes a peering connection (204).
func (c *Client) DeletePeering(ctx context.Context, vpcID, peeringID string) error {
	return c.do(ctx, call{op: OpDeletePeering, ids: []string{vpcID, peeringID}})
}
