package collector

import (
	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	peeringInfoDesc = newDesc("clouddb_vpc_peering_info",
		"Static attributes of a VPC peering, value 1, from the list of peerings of a VPC (id, peer_account_id, peer_region_code, peer_vpc_id, provisioned_id)."+cachedNote,
		"project_id", "vpc_id", "peering_id", "peer_account_id", "peer_region_code", "peer_vpc_id", "provisioned_id")
	peeringStatusDesc = newDesc("clouddb_vpc_peering_status",
		"Status of a VPC peering as a state set, from the status field: 1 for the current status, 0 for the other known ones (pending, active); any other status is one more series with value 1."+cachedNote,
		"project_id", "vpc_id", "peering_id", "status")
	peeringStatusChangedDesc = newDesc("clouddb_vpc_peering_status_changed_timestamp_seconds",
		"Unix seconds at which the exporter first saw the current status of a VPC peering (the API reports no transition times)."+cachedNote,
		"project_id", "vpc_id", "peering_id")
	peeringErrorDesc = newDesc("clouddb_vpc_peering_error",
		"Whether a VPC peering reports an error (1) or not (0): 1 when error_message is present and not empty. The message itself is not exported."+cachedNote,
		"project_id", "vpc_id", "peering_id")
)

// collectPeerings emits the metrics of every VPC peering of s.
func collectPeerings(out *sink, s *fleet.Snapshot) {
	p := s.ProjectID
	for i := range s.Peerings {
		pr := &s.Peerings[i]
		vpc, id := pr.VPCID, pr.ID
		out.gauge(peeringInfoDesc, 1, p, vpc, id, pr.PeerAccountID, pr.PeerRegionCode, pr.PeerVPCID, pr.ProvisionedID)
		stateSet(out, peeringStatusDesc, apiclient.PeeringStatuses, pr.Status, p, vpc, id)
		timestamp(out, peeringStatusChangedDesc, pr.StatusSince, p, vpc, id)
		// The message is free text of unbounded variety: it never becomes
		// a label, only its presence does.
		out.gauge(peeringErrorDesc, boolValue(pr.ErrorMessage != nil && *pr.ErrorMessage != ""), p, vpc, id)
	}
}
