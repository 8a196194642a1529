package collector

import (
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	apiKeyInfoDesc = newDesc("clouddb_api_key_info",
		"The API key the exporter uses, value 1, from the authentication info (apiKey.name, apiKey.public_key, apiKey.project.name, apiKey.project.plan_type, apiKey.issuing_user.id; the user's e-mail and name are personal data and not exported)."+cachedNote,
		"project_id", "name", "public_key", "project_name", "plan_type", "issuing_user_id")
	apiKeyCreatedDesc = newDesc("clouddb_api_key_created_timestamp_seconds",
		"Creation time of the API key the exporter uses as Unix seconds, from apiKey.created."+cachedNote,
		"project_id", "public_key")
)

// collectAuth emits the metrics of the authentication info of s, if any.
func collectAuth(out *sink, s *fleet.Snapshot) {
	if s.Auth == nil {
		return
	}
	k := &s.Auth.APIKey
	out.gauge(apiKeyInfoDesc, 1, s.ProjectID, k.Name, k.PublicKey, k.Project.Name, k.Project.PlanType, k.IssuingUser.ID)
	timestamp(out, apiKeyCreatedDesc, k.Created.Time, s.ProjectID, k.PublicKey)
}
