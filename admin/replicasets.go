package admin

import (
	"context"
	"encoding/json"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type createReplicaSetBody struct {
	Name      *string `json:"name"`
	CPUMillis *int64  `json:"cpu_millis"`
	MemoryGBs *int64  `json:"memory_gbs"`
	Nodes     *int64  `json:"nodes"`
}

func decodeCreateReplicaSet(raw []byte) (any, error) {
	b, err := decodeStrict[createReplicaSetBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.CreateReplicaSetRequest{
		Name:      c.name("name", b.Name),
		CPUMillis: c.atLeast("cpu_millis", b.CPUMillis, 1),
		MemoryGBs: c.atLeast("memory_gbs", b.MemoryGBs, 1),
		Nodes:     c.atLeast("nodes", b.Nodes, 1),
	}
	return req, c.err()
}

// resizeReplicaSetBody is revision 2026's body, resizeService's: the sizes
// as integers or digit strings; nodes is the first revision's and is
// forwarded only when given.
type resizeReplicaSetBody struct {
	CPUMillis *json.RawMessage `json:"cpu_millis"`
	MemoryGBs *json.RawMessage `json:"memory_gbs"`
	Nodes     *int64           `json:"nodes"`
}

func decodeResizeReplicaSet(raw []byte) (any, error) {
	b, err := decodeStrict[resizeReplicaSetBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.ResizeReplicaSetRequest{
		CPUMillis: c.size("cpu_millis", b.CPUMillis, false),
		MemoryGBs: c.size("memory_gbs", b.MemoryGBs, false),
		Nodes:     c.optionalAtLeast("nodes", b.Nodes, 1),
	}
	return req, c.err()
}

// newReplicaSetTarget is the replica set a create answer names.
func newReplicaSetTarget(v ids, result any) target {
	t := target{kind: kindReplicaSet, serviceID: v[idService], settle: settleReady}
	if rs, ok := result.(*apiclient.ReplicaSet); ok && rs != nil {
		t.replicaSetID = rs.ID
	}
	return t
}

func replicaSetEndpoints() []*endpoint {
	return []*endpoint{
		{
			op: apiclient.OpCreateReplicaSet, idempotent: true, decode: decodeCreateReplicaSet, target: newReplicaSetTarget,
			example: Example{On: "embeddings", Body: `{"name":"emb-read","cpu_millis":1000,"memory_gbs":4,"nodes":1}`, Bad: `{"name":"emb-read","cpu_millis":1000,"memory_gbs":4,"nodes":0}`, BadField: "nodes"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.CreateReplicaSet(ctx, v[idService], body.(apiclient.CreateReplicaSetRequest))
			},
		},
		{
			op: apiclient.OpDeleteReplicaSet, optIn: true, guard: guardAlways("delete it"), decode: bodyless, target: replicaSetTarget(settleGone),
			example: Example{On: "orders-read", Body: ``, Bad: `{"x":true}`, BadField: "x"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return nil, c.DeleteReplicaSet(ctx, v[idService], v[idReplicaSet])
			},
		},
		{
			op: apiclient.OpResizeReplicaSet, decode: decodeResizeReplicaSet, target: replicaSetTarget(settleReady),
			example: Example{On: "orders-read", Body: `{"cpu_millis":"1000","memory_gbs":4}`, Bad: `{"cpu_millis":"1000","memory_gbs":"4 GB"}`, BadField: "memory_gbs"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.ResizeReplicaSet(ctx, v[idService], v[idReplicaSet], body.(apiclient.ResizeReplicaSetRequest))
			},
		},
		{
			op: apiclient.OpEnableReplicaSetPooler, decode: bodyless, target: replicaSetTarget(settleNone),
			example: Example{On: "orders-read", Body: ``, Bad: `{"a":`, BadField: "body"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return c.EnableReplicaSetPooler(ctx, v[idService], v[idReplicaSet])
			},
		},
		{
			op: apiclient.OpDisableReplicaSetPooler, decode: bodyless, target: replicaSetTarget(settleNone),
			example: Example{On: "orders-read", Body: ``, Bad: `{} {}`, BadField: "body"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return c.DisableReplicaSetPooler(ctx, v[idService], v[idReplicaSet])
			},
		},
		{
			op: apiclient.OpSetReplicaSetEnvironment, guard: guardToDev, decode: decodeSetEnvironment, target: replicaSetTarget(settleNone),
			example: Example{On: "orders-read", Body: `{"environment":"DEV"}`, Bad: `{"environment":null}`, BadField: "environment"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.SetReplicaSetEnvironment(ctx, v[idService], v[idReplicaSet], body.(apiclient.SetEnvironmentRequest))
			},
		},
	}
}
