package admin

import (
	"context"
	"encoding/json"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type createServiceBody struct {
	Name           *string          `json:"name"`
	Addons         *[]string        `json:"addons"`
	RegionCode     *string          `json:"region_code"`
	ReplicaCount   *int64           `json:"replica_count"`
	CPUMillis      *json.RawMessage `json:"cpu_millis"`
	MemoryGBs      *json.RawMessage `json:"memory_gbs"`
	EnvironmentTag *string          `json:"environment_tag"`
}

func decodeCreateService(raw []byte) (any, error) {
	b, err := decodeStrict[createServiceBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.CreateServiceRequest{
		Name:           c.name("name", b.Name),
		Addons:         c.addons("addons", b.Addons),
		ReplicaCount:   c.optionalAtLeast("replica_count", b.ReplicaCount, 0),
		EnvironmentTag: c.optionalEnvironment("environment_tag", b.EnvironmentTag),
	}
	if b.RegionCode != nil {
		req.RegionCode = c.ident("region_code", b.RegionCode)
	}
	req.CPUMillis, req.MemoryGBs = c.sizes(b.CPUMillis, b.MemoryGBs, true)
	return req, c.err()
}

type resizeServiceBody struct {
	CPUMillis *json.RawMessage `json:"cpu_millis"`
	MemoryGBs *json.RawMessage `json:"memory_gbs"`
}

func decodeResizeService(raw []byte) (any, error) {
	b, err := decodeStrict[resizeServiceBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.ResizeServiceRequest{
		CPUMillis: c.size("cpu_millis", b.CPUMillis, false),
		MemoryGBs: c.size("memory_gbs", b.MemoryGBs, false),
	}
	return req, c.err()
}

type renameServiceBody struct {
	Name *string `json:"name"`
}

func decodeRenameService(raw []byte) (any, error) {
	b, err := decodeStrict[renameServiceBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.RenameServiceRequest{Name: c.name("name", b.Name)}
	return req, c.err()
}

type updatePasswordBody struct {
	Password *string `json:"password"`
}

func decodeUpdatePassword(raw []byte) (any, error) {
	b, err := decodeStrict[updatePasswordBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.UpdatePasswordRequest{Password: apiclient.Secret(c.password("password", b.Password))}
	return req, c.err()
}

type setEnvironmentBody struct {
	Environment *string `json:"environment"`
}

func decodeSetEnvironment(raw []byte) (any, error) {
	b, err := decodeStrict[setEnvironmentBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.SetEnvironmentRequest{Environment: c.environment("environment", b.Environment)}
	return req, c.err()
}

type setHABody struct {
	ReplicaCount     *int64 `json:"replica_count"`
	SyncReplicaCount *int64 `json:"sync_replica_count"`
}

func decodeSetHA(raw []byte) (any, error) {
	b, err := decodeStrict[setHABody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	if b.ReplicaCount == nil && b.SyncReplicaCount == nil {
		c.fail("replica_count", "replica_count or sync_replica_count is required")
	}
	req := apiclient.SetHARequest{
		ReplicaCount:     c.optionalAtLeast("replica_count", b.ReplicaCount, 0),
		SyncReplicaCount: c.optionalAtLeast("sync_replica_count", b.SyncReplicaCount, 0),
	}
	return req, c.err()
}

type forkServiceBody struct {
	ForkStrategy   *string          `json:"fork_strategy"`
	TargetTime     *string          `json:"target_time"`
	Name           *string          `json:"name"`
	RegionCode     *string          `json:"region_code"`
	CPUMillis      *json.RawMessage `json:"cpu_millis"`
	MemoryGBs      *json.RawMessage `json:"memory_gbs"`
	EnvironmentTag *string          `json:"environment_tag"`
}

func decodeForkService(raw []byte) (any, error) {
	b, err := decodeStrict[forkServiceBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.ForkServiceRequest{
		ForkStrategy:   c.forkStrategy("fork_strategy", b.ForkStrategy),
		EnvironmentTag: c.optionalEnvironment("environment_tag", b.EnvironmentTag),
	}
	switch {
	case req.ForkStrategy == apiclient.ForkPITR && b.TargetTime == nil:
		c.fail("target_time", "is required when fork_strategy is %s", apiclient.ForkPITR)
	case req.ForkStrategy != apiclient.ForkPITR && b.TargetTime != nil:
		c.fail("target_time", "is only taken with fork_strategy %s", apiclient.ForkPITR)
	case b.TargetTime != nil:
		if t, err := time.Parse(time.RFC3339, *b.TargetTime); err != nil {
			c.fail("target_time", "must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z")
		} else {
			req.TargetTime = &apiclient.Time{Time: t.UTC()}
		}
	}
	if b.Name != nil {
		req.Name = c.name("name", b.Name)
	}
	if b.RegionCode != nil {
		req.RegionCode = c.ident("region_code", b.RegionCode)
	}
	if b.CPUMillis != nil || b.MemoryGBs != nil {
		req.CPUMillis, req.MemoryGBs = c.sizes(b.CPUMillis, b.MemoryGBs, true)
	}
	return req, c.err()
}

type vpcAttachmentBody struct {
	VPCID *string `json:"vpc_id"`
}

func decodeVPCAttachment(raw []byte) (any, error) {
	b, err := decodeStrict[vpcAttachmentBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.VPCAttachmentRequest{VPCID: c.ident("vpc_id", b.VPCID)}
	return req, c.err()
}

// newServiceTarget is the service a create or fork answer names.
func newServiceTarget(_ ids, result any) target {
	t := target{kind: kindService, settle: settleReady}
	if svc, ok := result.(*apiclient.Service); ok && svc != nil {
		t.serviceID = svc.ServiceID
	}
	return t
}

// serviceEndpoints are the writes to a service: its lifecycle first, then
// its settings.
func serviceEndpoints() []*endpoint {
	return append([]*endpoint{
		{
			op: apiclient.OpCreateService, idempotent: true, answersSecret: true, decode: decodeCreateService, target: newServiceTarget,
			example: Example{Body: `{"name":"new-db","addons":["time-series"],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`, Bad: `{"name":"new-db","addons":["gpu"],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`, BadField: "addons"},
			call: func(ctx context.Context, c *apiclient.Client, _ ids, body any) (any, error) {
				return c.CreateService(ctx, body.(apiclient.CreateServiceRequest))
			},
		},
		{
			op: apiclient.OpDeleteService, optIn: true, guard: guardAlways("delete it"), decode: bodyless, target: serviceTarget(settleGone),
			example: Example{On: "dev-sandbox", Body: ``, Bad: `{"confirm":"x"}`, BadField: "confirm"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return nil, c.DeleteService(ctx, v[idService])
			},
		},
		{
			// The copy's password goes to the caller: with it, any caller
			// could read any database.
			op: apiclient.OpForkService, optIn: true, idempotent: true, answersSecret: true, decode: decodeForkService, target: newServiceTarget,
			example: Example{On: "search-ai", Body: `{"fork_strategy":"NOW","name":"search-fork","cpu_millis":"1000","memory_gbs":4}`, Bad: `{"fork_strategy":"PITR","name":"search-fork"}`, BadField: "target_time"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.ForkService(ctx, v[idService], body.(apiclient.ForkServiceRequest))
			},
		},
		{
			op: apiclient.OpStartService, decode: bodyless, target: serviceTarget(settleReady),
			example: Example{On: "legacy-reports", Body: ``, Bad: `{"x":1}`, BadField: "x"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return c.StartService(ctx, v[idService])
			},
		},
		{
			// Stopping a PROD service is an outage: confirmed as a delete is.
			op: apiclient.OpStopService, guard: guardAlways("stop it"), decode: bodyless, target: serviceTarget(settlePaused),
			example: Example{On: "dev-sandbox", Body: ``, Bad: `{"now":true}`, BadField: "now"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return c.StopService(ctx, v[idService])
			},
		},
		{
			// Renaming a PROD service breaks whatever finds it by name.
			op: apiclient.OpRenameService, guard: guardAlways("rename it"), decode: decodeRenameService, target: serviceTarget(settleNone),
			example: Example{On: "dev-sandbox", Body: `{"name":"dev-sandbox-2"}`, Bad: `{"name":""}`, BadField: "name"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.RenameService(ctx, v[idService], body.(apiclient.RenameServiceRequest))
			},
		},
	}, serviceSettingEndpoints()...)
}

func serviceSettingEndpoints() []*endpoint {
	return []*endpoint{
		{
			op: apiclient.OpResizeService, decode: decodeResizeService, target: serviceTarget(settleReady),
			example: Example{On: "embeddings", Body: `{"cpu_millis":4000,"memory_gbs":16}`, Bad: `{"cpu_millis":4000,"memory_gbs":0}`, BadField: "memory_gbs"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.ResizeService(ctx, v[idService], body.(apiclient.ResizeServiceRequest))
			},
		},
		{
			// It locks out whoever holds the old password.
			op: apiclient.OpUpdatePassword, optIn: true, decode: decodeUpdatePassword, target: serviceTarget(settleNone),
			example: Example{On: "embeddings", Body: `{"password":"n3w-s3cret"}`, Bad: `{"password":""}`, BadField: "password"},
			secret:  func(body any) string { return body.(apiclient.UpdatePasswordRequest).Password.Reveal() },
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.UpdatePassword(ctx, v[idService], body.(apiclient.UpdatePasswordRequest))
			},
		},
		{
			op: apiclient.OpSetServiceEnvironment, guard: guardToDev, decode: decodeSetEnvironment, target: serviceTarget(settleNone),
			example: Example{On: "embeddings", Body: `{"environment":"DEV"}`, Bad: `{"environment":"prod"}`, BadField: "environment"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.SetServiceEnvironment(ctx, v[idService], body.(apiclient.SetEnvironmentRequest))
			},
		},
		{
			op: apiclient.OpSetHA, decode: decodeSetHA, target: serviceTarget(settleReady),
			example: Example{On: "search-ai", Body: `{"replica_count":1}`, Bad: `{"replica_count":-1}`, BadField: "replica_count"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.SetHA(ctx, v[idService], body.(apiclient.SetHARequest))
			},
		},
		{
			op: apiclient.OpEnableServicePooler, decode: bodyless, target: serviceTarget(settleNone),
			example: Example{On: "embeddings", Body: ``, Bad: `{"x":1}`, BadField: "x"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return c.EnableServicePooler(ctx, v[idService])
			},
		},
		{
			op: apiclient.OpDisableServicePooler, decode: bodyless, target: serviceTarget(settleNone),
			example: Example{On: "embeddings", Body: `{}`, Bad: `[]`, BadField: "body"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return c.DisableServicePooler(ctx, v[idService])
			},
		},
		{
			op: apiclient.OpAttachToVPC, decode: decodeVPCAttachment, target: serviceTarget(settleReady),
			example: Example{On: "dev-sandbox", Body: `{"vpc_id":"{vpc:analytics-vpc}"}`, Bad: `{"vpc_id":7}`, BadField: "vpc_id"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.AttachToVPC(ctx, v[idService], body.(apiclient.VPCAttachmentRequest))
			},
		},
		{
			op: apiclient.OpDetachFromVPC, decode: decodeVPCAttachment, target: serviceTarget(settleReady),
			example: Example{On: "metrics-prod", Body: `{"vpc_id":"{vpc:prod-vpc}"}`, Bad: `{}`, BadField: "vpc_id"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.DetachFromVPC(ctx, v[idService], body.(apiclient.VPCAttachmentRequest))
			},
		},
	}
}
