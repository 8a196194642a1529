package admin

import (
	"context"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type createServiceBody struct {
	Name       *string   `json:"name"`
	Addons     *[]string `json:"addons"`
	RegionCode *string   `json:"region_code"`
	CPUMillis  *int64    `json:"cpu_millis"`
	MemoryGBs  *int64    `json:"memory_gbs"`
}

func decodeCreateService(raw []byte) (any, error) {
	b, err := decodeStrict[createServiceBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.CreateServiceRequest{
		Name:       c.name("name", b.Name),
		Addons:     c.addons("addons", b.Addons),
		RegionCode: c.ident("region_code", b.RegionCode),
		CPUMillis:  c.atLeast("cpu_millis", b.CPUMillis, 1),
		MemoryGBs:  c.atLeast("memory_gbs", b.MemoryGBs, 1),
	}
	return req, c.err()
}

type resizeServiceBody struct {
	CPUMillis *int64 `json:"cpu_millis"`
	MemoryGBs *int64 `json:"memory_gbs"`
}

func decodeResizeService(raw []byte) (any, error) {
	b, err := decodeStrict[resizeServiceBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.ResizeServiceRequest{
		CPUMillis: c.atLeast("cpu_millis", b.CPUMillis, 1),
		MemoryGBs: c.atLeast("memory_gbs", b.MemoryGBs, 1),
	}
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
	ReplicaCount *int64 `json:"replica_count"`
}

func decodeSetHA(raw []byte) (any, error) {
	b, err := decodeStrict[setHABody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.SetHARequest{ReplicaCount: c.atLeast("replica_count", b.ReplicaCount, 0)}
	return req, c.err()
}

type forkServiceBody struct {
	Name       *string `json:"name"`
	RegionCode *string `json:"region_code"`
	CPUMillis  *int64  `json:"cpu_millis"`
	MemoryGBs  *int64  `json:"memory_gbs"`
}

func decodeForkService(raw []byte) (any, error) {
	b, err := decodeStrict[forkServiceBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.ForkServiceRequest{
		Name:       c.name("name", b.Name),
		RegionCode: c.ident("region_code", b.RegionCode),
		CPUMillis:  c.atLeast("cpu_millis", b.CPUMillis, 1),
		MemoryGBs:  c.atLeast("memory_gbs", b.MemoryGBs, 1),
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

func serviceEndpoints() []*endpoint {
	return []*endpoint{
		{
			op: apiclient.OpCreateService, idempotent: true, decode: decodeCreateService, target: newServiceTarget,
			call: func(ctx context.Context, c *apiclient.Client, _ ids, body any) (any, error) {
				return c.CreateService(ctx, body.(apiclient.CreateServiceRequest))
			},
		},
		{
			op: apiclient.OpDeleteService, guarded: true, decode: bodyless, target: serviceTarget(settleGone),
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return nil, c.DeleteService(ctx, v[idService])
			},
		},
		{
			op: apiclient.OpResizeService, decode: decodeResizeService, target: serviceTarget(settleReady),
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.ResizeService(ctx, v[idService], body.(apiclient.ResizeServiceRequest))
			},
		},
		{
			op: apiclient.OpUpdatePassword, decode: decodeUpdatePassword, target: serviceTarget(settleNone),
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.UpdatePassword(ctx, v[idService], body.(apiclient.UpdatePasswordRequest))
			},
		},
		{
			op: apiclient.OpSetServiceEnvironment, decode: decodeSetEnvironment, target: serviceTarget(settleNone),
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.SetServiceEnvironment(ctx, v[idService], body.(apiclient.SetEnvironmentRequest))
			},
		},
		{
			op: apiclient.OpSetHA, decode: decodeSetHA, target: serviceTarget(settleReady),
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.SetHA(ctx, v[idService], body.(apiclient.SetHARequest))
			},
		},
		{
			op: apiclient.OpEnableServicePooler, decode: bodyless, target: serviceTarget(settleNone),
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return c.EnableServicePooler(ctx, v[idService])
			},
		},
		{
			op: apiclient.OpDisableServicePooler, decode: bodyless, target: serviceTarget(settleNone),
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return c.DisableServicePooler(ctx, v[idService])
			},
		},
		{
			op: apiclient.OpForkService, idempotent: true, decode: decodeForkService, target: newServiceTarget,
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.ForkService(ctx, v[idService], body.(apiclient.ForkServiceRequest))
			},
		},
		{
			op: apiclient.OpAttachToVPC, decode: decodeVPCAttachment, target: serviceTarget(settleReady),
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.AttachToVPC(ctx, v[idService], body.(apiclient.VPCAttachmentRequest))
			},
		},
		{
			op: apiclient.OpDetachFromVPC, decode: decodeVPCAttachment, target: serviceTarget(settleReady),
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return nil, c.DetachFromVPC(ctx, v[idService], body.(apiclient.VPCAttachmentRequest))
			},
		},
	}
}
