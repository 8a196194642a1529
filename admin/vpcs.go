package admin

import (
	"context"
	"net/http"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type createVPCBody struct {
	Name       *string `json:"name"`
	CIDR       *string `json:"cidr"`
	RegionCode *string `json:"region_code"`
}

func decodeCreateVPC(raw []byte) (any, error) {
	b, err := decodeStrict[createVPCBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.CreateVPCRequest{
		Name:       c.name("name", b.Name),
		CIDR:       c.cidr("cidr", b.CIDR),
		RegionCode: c.ident("region_code", b.RegionCode),
	}
	return req, c.err()
}

type renameVPCBody struct {
	Name *string `json:"name"`
}

func decodeRenameVPC(raw []byte) (any, error) {
	b, err := decodeStrict[renameVPCBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.RenameVPCRequest{Name: c.name("name", b.Name)}
	return req, c.err()
}

func vpcTarget(v ids, result any) target {
	t := target{kind: kindVPC, vpcID: v[idVPC]}
	if vpc, ok := result.(*apiclient.VPC); ok && vpc != nil && t.vpcID == "" {
		t.vpcID = vpc.ID
	}
	return t
}

func vpcEndpoints() []*endpoint {
	return []*endpoint{
		{
			op: apiclient.OpCreateVPC, idempotent: true, decode: decodeCreateVPC, target: vpcTarget,
			example: Example{Body: `{"name":"new-vpc","cidr":"10.30.0.0/16","region_code":"us-east-1"}`, Bad: `{"name":"new-vpc","cidr":"10.30.0.1/16","region_code":"us-east-1"}`, BadField: "cidr"},
			call: func(ctx context.Context, c *apiclient.Client, _ ids, body any) (any, error) {
				return c.CreateVPC(ctx, body.(apiclient.CreateVPCRequest))
			},
		},
		{
			op: apiclient.OpRenameVPC, decode: decodeRenameVPC, target: vpcTarget,
			example: Example{On: "analytics-vpc", Body: `{"name":"analytics-vpc-2"}`, Bad: `{"name":" "}`, BadField: "name"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.RenameVPC(ctx, v[idVPC], body.(apiclient.RenameVPCRequest))
			},
		},
		{
			op: apiclient.OpDeleteVPC, optIn: true, decode: bodyless, target: vpcTarget,
			example: Example{On: "analytics-vpc", Body: ``, Bad: `{"force":true}`, BadField: "force", Status: http.StatusConflict},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return nil, c.DeleteVPC(ctx, v[idVPC])
			},
		},
	}
}
