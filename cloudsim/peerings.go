package cloudsim

import (
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type peering struct {
	id, peerAccountID, peerRegionCode, peerVPCID, provisionedID string
	errorMessage                                                *string
	life                                                        lifecycle
}

// The create response omits error_message (docs/api.md, "Peering").
type createdPeering struct {
	ID             string `json:"id"`
	PeerAccountID  string `json:"peer_account_id"`
	PeerRegionCode string `json:"peer_region_code"`
	PeerVPCID      string `json:"peer_vpc_id"`
	ProvisionedID  string `json:"provisioned_id"`
	Status         string `json:"status"`
}

func (s *Sim) newPeering(v *vpc, rng *rand.Rand, account, region, peerVPC string) *peering {
	pr := &peering{
		id:             s.newNetworkID(rng),
		peerAccountID:  account,
		peerRegionCode: region,
		peerVPCID:      peerVPC,
		life:           settle(apiclient.PeeringActive),
	}
	pr.provisionedID = "pcx-" + s.newID(rng)
	v.peerings[pr.id] = pr
	v.peeringOrder = append(v.peeringOrder, pr.id)
	return pr
}

func (pr *peering) wire(now time.Time) apiclient.Peering {
	out := apiclient.Peering{
		ID:             pr.id,
		PeerAccountID:  pr.peerAccountID,
		PeerRegionCode: pr.peerRegionCode,
		PeerVPCID:      pr.peerVPCID,
		ProvisionedID:  pr.provisionedID,
		Status:         pr.life.status(now),
	}
	if pr.errorMessage != nil {
		msg := *pr.errorMessage
		out.ErrorMessage = &msg
	}
	return out
}

func (v *vpc) lookupPeering(id string) (*peering, error) {
	pr := v.peerings[id]
	if pr == nil {
		return nil, notFoundf("peering %s not found in VPC %s", id, v.id)
	}
	return pr, nil
}

func (s *Sim) peeringOf(c *call) (*vpc, *peering, error) {
	v, err := s.vpcOf(c)
	if err != nil {
		return nil, nil, err
	}
	pr, err := v.lookupPeering(c.r.PathValue("peering_id"))
	return v, pr, err
}

func (s *Sim) listPeerings(c *call) (int, any, error) {
	v, err := s.vpcOf(c)
	if err != nil {
		return 0, nil, err
	}
	out := make([]apiclient.Peering, 0, len(v.peeringOrder))
	for _, id := range v.peeringOrder {
		out = append(out, v.peerings[id].wire(c.now))
	}
	return http.StatusOK, out, nil
}

func (s *Sim) createPeering(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	account, region, peerVPC := b.text("peer_account_id"), b.text("peer_region_code"), b.text("peer_vpc_id")
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	v, err := s.vpcOf(c)
	if err != nil {
		return 0, nil, err
	}
	pr := s.newPeering(v, s.rng, account, region, peerVPC)
	pr.life.begin(c.now, apiclient.PeeringActive, step{apiclient.PeeringPending, s.timings.Peering})
	// The spec shows a new peering as pending even when it will be active at once.
	return http.StatusCreated, createdPeering{
		ID: pr.id, PeerAccountID: pr.peerAccountID, PeerRegionCode: pr.peerRegionCode,
		PeerVPCID: pr.peerVPCID, ProvisionedID: pr.provisionedID, Status: apiclient.PeeringPending,
	}, nil
}

func (s *Sim) getPeering(c *call) (int, any, error) {
	_, pr, err := s.peeringOf(c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, pr.wire(c.now), nil
}

func (s *Sim) deletePeering(c *call) (int, any, error) {
	v, pr, err := s.peeringOf(c)
	if err != nil {
		return 0, nil, err
	}
	delete(v.peerings, pr.id)
	v.peeringOrder = deleteID(v.peeringOrder, pr.id)
	return http.StatusNoContent, nil, nil
}

// peeringWrites are the peering writes.
func (s *Sim) peeringWrites() []route {
	return []route{
		{"POST " + peeringsRoute, apiclient.OpCreatePeering, authBasic, s.createPeering},
		{"DELETE " + peeringsRoute + "/{peering_id}", apiclient.OpDeletePeering, authBasic, s.deletePeering},
	}
}
