package admin

import (
	"context"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type createPeeringBody struct {
	PeerAccountID  *string `json:"peer_account_id"`
	PeerRegionCode *string `json:"peer_region_code"`
	PeerVPCID      *string `json:"peer_vpc_id"`
}

func decodeCreatePeering(raw []byte) (any, error) {
	b, err := decodeStrict[createPeeringBody](raw)
	if err != nil {
		return nil, err
	}
	var c checker
	req := apiclient.CreatePeeringRequest{
		PeerAccountID:  c.ident("peer_account_id", b.PeerAccountID),
		PeerRegionCode: c.ident("peer_region_code", b.PeerRegionCode),
		PeerVPCID:      c.ident("peer_vpc_id", b.PeerVPCID),
	}
	return req, c.err()
}

func peeringTarget(v ids, result any) target {
	t := target{kind: kindPeering, vpcID: v[idVPC], peeringID: v[idPeering]}
	if p, ok := result.(*apiclient.Peering); ok && p != nil && t.peeringID == "" {
		t.peeringID = p.ID
	}
	return t
}

func peeringEndpoints() []*endpoint {
	return []*endpoint{
		{
			op: apiclient.OpCreatePeering, idempotent: true, decode: decodeCreatePeering, target: peeringTarget,
			example: Example{On: "analytics-vpc", Body: `{"peer_account_id":"111122223333","peer_region_code":"eu-west-1","peer_vpc_id":"vpc-1"}`, Bad: `{"peer_account_id":"111122223333","peer_region_code":"eu-west-1"}`, BadField: "peer_vpc_id"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, body any) (any, error) {
				return c.CreatePeering(ctx, v[idVPC], body.(apiclient.CreatePeeringRequest))
			},
		},
		{
			op: apiclient.OpDeletePeering, optIn: true, decode: bodyless, target: peeringTarget,
			example: Example{On: "prod-vpc", Body: ``, Bad: `null`, BadField: "body"},
			call: func(ctx context.Context, c *apiclient.Client, v ids, _ any) (any, error) {
				return nil, c.DeletePeering(ctx, v[idVPC], v[idPeering])
			},
		},
	}
}
