package apiclient

import (
	"context"
	"net/http"
)

const (
	replicaSetsPath = servicePath + "/replicaSets"
	replicaSetPath  = replicaSetsPath + "/{replica_set_id}"
)

// ListReplicaSets lists a service's read replica sets.
func (c *Client) ListReplicaSets(ctx context.Context, serviceID string) ([]ReplicaSet, error) {
	return doList[ReplicaSet](ctx, c, call{op: OpListReplicaSets, method: http.MethodGet, tmpl: replicaSetsPath, ids: []string{serviceID}, want: http.StatusOK})
}

// CreateReplicaSet creates a read replica set (202, asynchronous). The
// answer carries only ID, Name, Status, Nodes, CPUMillis and MemoryGBs.
func (c *Client) CreateReplicaSet(ctx context.Context, serviceID string, req CreateReplicaSetRequest) (*ReplicaSet, error) {
	return doValue[ReplicaSet](ctx, c, call{op: OpCreateReplicaSet, method: http.MethodPost, tmpl: replicaSetsPath, ids: []string{serviceID}, body: req, want: http.StatusAccepted})
}

// DeleteReplicaSet starts deleting a read replica set (202, asynchronous).
func (c *Client) DeleteReplicaSet(ctx context.Context, serviceID, replicaSetID string) error {
	return c.do(ctx, call{op: OpDeleteReplicaSet, method: http.MethodDelete, tmpl: replicaSetPath, ids: []string{serviceID, replicaSetID}, want: http.StatusAccepted})
}

// ResizeReplicaSet starts resizing a read replica set (202, asynchronous).
func (c *Client) ResizeReplicaSet(ctx context.Context, serviceID, replicaSetID string, req ResizeReplicaSetRequest) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpResizeReplicaSet, method: http.MethodPost, tmpl: replicaSetPath + "/resize", ids: []string{serviceID, replicaSetID}, body: req, want: http.StatusAccepted})
}

// EnableReplicaSetPooler enables a read replica set's connection pooler.
func (c *Client) EnableReplicaSetPooler(ctx context.Context, serviceID, replicaSetID string) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpEnableReplicaSetPooler, method: http.MethodPost, tmpl: replicaSetPath + "/enablePooler", ids: []string{serviceID, replicaSetID}, want: http.StatusOK})
}

// DisableReplicaSetPooler disables a read replica set's connection pooler.
func (c *Client) DisableReplicaSetPooler(ctx context.Context, serviceID, replicaSetID string) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpDisableReplicaSetPooler, method: http.MethodPost, tmpl: replicaSetPath + "/disablePooler", ids: []string{serviceID, replicaSetID}, want: http.StatusOK})
}

// SetReplicaSetEnvironment sets a read replica set's environment label.
func (c *Client) SetReplicaSetEnvironment(ctx context.Context, serviceID, replicaSetID string, req SetEnvironmentRequest) (*Message, error) {
	return doValue[Message](ctx, c, call{op: OpSetReplicaSetEnvironment, method: http.MethodPost, tmpl: replicaSetPath + "/setEnvironment", ids: []string{serviceID, replicaSetID}, body: req, want: http.StatusOK})
}
