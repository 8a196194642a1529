package collector

import (
	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	apiKeyInfoDesc = newDesc("clouddb_api_key_info",
		"The API key the exporter uses, value 1, from the authentication info (api_key, or apiKey in the first revision: name, public_key, project.name, project.plan_type, issuing_user.id; the user's e-mail and name are personal data and not exported); absent for OAuth credentials."+cachedNote,
		"project_id", "name", "public_key", "project_name", "plan_type", "issuing_user_id")
	apiKeyCreatedDesc = newDesc("clouddb_api_key_created_timestamp_seconds",
		"Creation time of the API key the exporter uses as Unix seconds, from api_key.created (apiKey.created in the first revision)."+cachedNote,
		"project_id", "public_key")
	projectInfoDesc = newDesc("clouddb_project_info",
		"A polled project, value 1, with its name from GET /projects (revision 2026) or else from the authentication info's api_key.project.name; absent when neither names it."+cachedNote,
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
