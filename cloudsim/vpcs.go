package cloudsim

import (
	"math/rand/v2"
	"net/http"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// vpc has no lifecycle: VPC operations are synchronous in the spec.
type vpc struct {
	id, name, cidr, region string
	peerings               map[string]*peering
	peeringOrder           []string
}

func (s *Sim) newVPC(p *project, rng *rand.Rand, name, cidr, region string) *vpc {
	v := &vpc{id: s.newNetworkID(rng), name: name, cidr: cidr, region: region, peerings: map[string]*peering{}}
	p.vpcs[v.id] = v
	p.vpcOrder = append(p.vpcOrder, v.id)
	return v
}

func (v *vpc) wire() apiclient.VPC {
	return apiclient.VPC{ID: v.id, Name: v.name, CIDR: v.cidr, RegionCode: v.region}
}

func (p *project) lookupVPC(id string) (*vpc, error) {
	v := p.vpcs[id]
	if v == nil {
		return nil, notFoundf("VPC %s not found in project %s", id, p.id)
	}
	return v, nil
}

func (s *Sim) vpcOf(c *call) (*vpc, error) {
	return c.project.lookupVPC(c.r.PathValue("vpc_id"))
}

func (s *Sim) listVPCs(c *call) (int, any, error) {
	out := make([]apiclient.VPC, 0, len(c.project.vpcOrder))
	for _, id := range c.project.vpcOrder {
		out = append(out, c.project.vpcs[id].wire())
	}
	return http.StatusOK, out, nil
}

func (s *Sim) createVPC(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	name, cidr, region := b.text("name"), b.cidr("cidr"), b.text("region_code")
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, s.newVPC(c.project, s.rng, name, cidr, region).wire(), nil
}

func (s *Sim) getVPC(c *call) (int, any, error) {
	v, err := s.vpcOf(c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, v.wire(), nil
}

func (s *Sim) renameVPC(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	name := b.text("name")
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	v, err := s.vpcOf(c)
	if err != nil {
		return 0, nil, err
	}
	v.name = name
	if s.rev != Revision2024 {
		return http.StatusOK, message("VPC renamed to " + name), nil
	}
	return http.StatusOK, v.wire(), nil
}

func (s *Sim) deleteVPC(c *call) (int, any, error) {
	v, err := s.vpcOf(c)
	if err != nil {
		return 0, nil, err
	}
	if n := len(v.peerings); n > 0 {
		return 0, nil, conflictf("VPC %s still has %d peerings", v.id, n)
	}
	// Deleting a VPC is rare: a scan is cheaper than a reverse index kept in step.
	for _, svc := range c.project.liveServices(c.now) {
		if svc.vpcID == v.id {
			return 0, nil, conflictf("VPC %s still has attached services, for example %s", v.id, svc.id)
		}
	}
	delete(c.project.vpcs, v.id)
	c.project.vpcOrder = deleteID(c.project.vpcOrder, v.id)
	return http.StatusNoContent, nil, nil
}

func deleteID(order []string, id string) []string {
	for i, x := range order {
		if x == id {
			return append(order[:i], order[i+1:]...)
		}
	}
	return order
}

// vpcWrites are the VPC writes.
func (s *Sim) vpcWrites() []route {
	return []route{
		{"POST " + vpcsRoute, apiclient.OpCreateVPC, authBasic, s.createVPC},
		{"POST " + vpcRoute + "/rename", apiclient.OpRenameVPC, authBasic, s.renameVPC},
		{"DELETE " + vpcRoute, apiclient.OpDeleteVPC, authBasic, s.deleteVPC},
	}
}
