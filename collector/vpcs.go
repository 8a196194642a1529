package collector

import "github.com/clouddb/clouddb_exporter/fleet"

var vpcInfoDesc = newDesc("clouddb_vpc_info",
	"Static attributes of a VPC, value 1.",
	"project_id", "vpc_id", "name", "cidr", "region_code")

func collectVPCs(out *Sink, s *fleet.Snapshot) {
	for _, v := range s.VPCs {
		out.gauge(vpcInfoDesc, 1, s.ProjectID, v.ID, v.Name, v.CIDR, v.RegionCode)
	}
}
