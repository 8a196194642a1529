package collector

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	peeringInfoDesc = newDesc("clouddb_vpc_peering_info",
		"Static attributes of a VPC peering, value 1.",
		"project_id", "vpc_id", "peering_id", "peer_account_id", "peer_region_code", "peer_vpc_id", "provisioned_id")
	peeringStatusDesc = newDesc("clouddb_vpc_peering_status",
		"Status of a VPC peering, 1 for the current one.",
		"project_id", "vpc_id", "peering_id", "status")
	peeringStatusChangedDesc = newDesc("clouddb_vpc_peering_status_changed_timestamp_seconds",
		"Time the exporter first saw a VPC peering's status, in Unix seconds.",
		"project_id", "vpc_id", "peering_id")
	peeringErrorDesc = newDesc("clouddb_vpc_peering_error",
		"Whether a VPC peering reports an error.",
		"project_id", "vpc_id", "peering_id")
	peeringErrorInfoDesc = newDesc("clouddb_vpc_peering_error_info",
		"The error message of a VPC peering, value 1.",
		"project_id", "vpc_id", "peering_id", "message")
)

// maxPeeringMessage bounds the label so that a hostile answer cannot make a huge series.
const maxPeeringMessage = 256

func collectPeerings(out *Sink, s *fleet.Snapshot) {
	p := s.ProjectID
	for i := range s.Peerings {
		pr := &s.Peerings[i]
		vpc, id := pr.VPCID, pr.ID
		out.gauge(peeringInfoDesc, 1, p, vpc, id, pr.PeerAccountID, pr.PeerRegionCode, pr.PeerVPCID, pr.ProvisionedID)
		stateSet(out, peeringStatusDesc, apiclient.PeeringStatuses, pr.Status, p, vpc, id)
		timestamp(out, peeringStatusChangedDesc, pr.StatusSince, p, vpc, id)
		// Free text goes on its own info metric only: alerts read it in an
		// annotation, so a changed message does not restart them.
		failed := pr.ErrorMessage != nil && *pr.ErrorMessage != ""
		out.gauge(peeringErrorDesc, boolValue(failed), p, vpc, id)
		if failed {
			out.gauge(peeringErrorInfoDesc, 1, p, vpc, id, peeringMessage(*pr.ErrorMessage))
		}
	}
}

func peeringMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if len(s) <= maxPeeringMessage {
		return s
	}
	const ellipsis = "..."
	cut := maxPeeringMessage - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " ") + ellipsis
}
