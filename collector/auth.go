package collector

import (
	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	apiKeyInfoDesc = newDesc("clouddb_api_key_info",
		"The API key the exporter uses, value 1.",
		"project_id", "name", "public_key", "project_name", "plan_type", "issuing_user_id")
	apiKeyCreatedDesc = newDesc("clouddb_api_key_created_timestamp_seconds",
		"Creation time of the API key the exporter uses, in Unix seconds.",
		"project_id", "public_key")
	projectInfoDesc = newDesc("clouddb_project_info",
		"A polled project and its name, value 1.",
		"project_id", "name")
)

func collectAuth(out *Sink, s *fleet.Snapshot) {
	name := s.ProjectName
	var k *apiclient.APIKeyInfo
	if s.Auth != nil {
		k = s.Auth.Key()
	}
	if name == "" && k != nil && k.Project.ID == s.ProjectID {
		name = k.Project.Name
	}
	if name != "" {
		out.gauge(projectInfoDesc, 1, s.ProjectID, name)
	}
	if k == nil {
		return
	}
	out.gauge(apiKeyInfoDesc, 1, s.ProjectID, k.Name, k.PublicKey, k.Project.Name, k.Project.PlanType, k.IssuingUser.ID)
	timestamp(out, apiKeyCreatedDesc, k.Created.Time, s.ProjectID, k.PublicKey)
}
