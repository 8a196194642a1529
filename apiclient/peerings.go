package apiclient

import (
	"context"
	"net/http"
)

const (
	peeringsPath = vpcPath + "/peerings"
	peeringPath  = peeringsPath + "/{peering_id}"
)

// ListPeerings lists a VPC's peering connections.
func (c *Client) ListPeerings(ctx context.Context, vpcID string) ([]Peering, error) {
	return doList[Peering](ctx, c, call{op: OpListPeerings, method: http.MethodGet, tmpl: peeringsPath, ids: []string{vpcID}, want: http.StatusOK})
}

// CreatePeering requests a peering connection (201); it starts as pending.
func (c *Client) CreatePeering(ctx context.Context, vpcID string, req CreatePeeringRequest) (*Peering, error) {
	return doValue[Peering](ctx, c, call{op: OpCreatePeering, method: http.MethodPost, tmpl: peeringsPath, ids: []string{vpcID}, body: req, want: http.StatusCreated})
}

// GetPeering returns one peering connection. The spec does not show this
// answer's body; it is decoded as a Peering, like the list's elements.
func (c *Client) GetPeering(ctx context.Context, vpcID, peeringID string) (*Peering, error) {
	return doValue[Peering](ctx, c, call{op: OpGetPeering, method: http.MethodGet, tmpl: peeringPath, ids: []string{vpcID, peeringID}, want: http.StatusOK})
}

// DeletePeering deletes a peering connection (204).
func (c *Client) DeletePeering(ctx context.Context, vpcID, peeringID string) error {
	return c.do(ctx, call{op: OpDeletePeering, method: http.MethodDelete, tmpl: peeringPath, ids: []string{vpcID, peeringID}, want: http.StatusNoContent})
}
