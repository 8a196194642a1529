package apiclient

import (
	"context"
	"net/http"
)

// Replica set operation names.
const (
	OpListReplicaSets          = "listReplicaSets"
	OpCreateReplicaSet         = "createReplicaSet"
	OpDeleteReplicaSet         = "deleteReplicaSet"
	OpResizeReplicaSet         = "resizeReplicaSet"
	OpEnableReplicaSetPooler   = "enableReplicaSetPooler"
	OpDisableReplicaSetPooler  = "disableReplicaSetPooler"
	OpSetReplicaSetEnvironment = "setReplicaSetEnvironment"
)

var _ = register([]Operation{
	{OpListReplicaSets, http.MethodGet, replicaSetsPath, http.StatusOK, syncOp, readOp},
	{OpCreateReplicaSet, http.MethodPost, replicaSetsPath, http.StatusAccepted, asyncOp, writeOp},
	{OpDeleteReplicaSet, http.MethodDelete, replicaSetPath, http.StatusAccepted, asyncOp, writeOp},
	{OpResizeReplicaSet, http.MethodPost, replicaSetPath + "/resize", http.StatusAccepted, asyncOp, writeOp},
	{OpEnableReplicaSetPooler, http.MethodPost, replicaSetPath + "/enablePooler", http.StatusOK, syncOp, writeOp},
	{OpDisableReplicaSetPooler, http.MethodPost, replicaSetPath + "/disablePooler", http.StatusOK, syncOp, writeOp},
	{OpSetReplicaSetEnvironment, http.MethodPost, replicaSetPath + "/setEnvironment", http.StatusOK, syncOp, writeOp},
})

// ListReplicaSets lists a service's read replica sets.
func (c *Client) ListReplicaSets(ctx context.Context, serviceID string) ([]ReplicaSet, error) {
	return doList[ReplicaSet](ctx, c, call{op: OpListReplicaSets, ids: []string{serviceID}})
}

// CreateReplicaSet creates a read replica set (202); the answer carries only its id, name, status and sizes.
func (c *Client) CreateReplicaSet(ctx context.Context, serviceID string, req CreateReplicaSetRequest) (*ReplicaSet, error) {
	return doValue[ReplicaSet](ctx, c, call{op: OpCreateReplicaSet, ids: []string{serviceID}, body: req})
}

// DeleteReplicaSet starts deleting a read replica set (202, asynchronous).
func (c *Client) DeleteReplicaSet(ctx context.Context, serviceID, replicaSetID string) error {
	return c.do(ctx, call{op: OpDeleteReplicaSet, ids: []string{serviceID, replicaSetID}})
}

// ResizeReplicaSet starts resizing a read replica set (202, asynchronous).
func (c *Client) ResizeReplicaSet(ctx context.Context, serviceID, replicaSetID string, req ResizeReplicaSetRequest) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpResizeReplicaSet, ids: []string{serviceID, replicaSetID}, body: req})
}

// EnableReplicaSetPooler enables a read replica set's connection pooler.
func (c *Client) EnableReplicaSetPooler(ctx context.Context, serviceID, replicaSetID string) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpEnableReplicaSetPooler, ids: []string{serviceID, replicaSetID}})
}

// DisableReplicaSetPooler disables a read replica set's connection pooler.
func (c *Client) DisableReplicaSetPooler(ctx context.Context, serviceID, replicaSetID string) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpDisableReplicaSetPooler, ids: []string{serviceID, replicaSetID}})
}

// SetReplicaSetEnvironment sets a read replica set's environment label.
func (c *Client) SetReplicaSetEnvironment(ctx context.Context, serviceID, replicaSetID string, req SetEnvironmentRequest) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpSetReplicaSetEnvironment, ids: []string{serviceID, replicaSetID}, body: req})
}
