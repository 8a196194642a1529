package collector

import (
	"strconv"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	serviceInfoDesc = newDesc("clouddb_service_info",
		"Static attributes of a database service, value 1, from the list of services (service_id, name, region_code, service_type, metadata.environment, endpoint.host, endpoint.port; empty when the API sends none)."+cachedNote,
		"project_id", "service_id", "name", "region_code", "service_type", "environment", "host", "port")
	serviceStatusDesc = newDesc("clouddb_service_status",
		"Status of a database service as a state set, from the status field: 1 for the current status, 0 for the other documented ones; an undocumented status is one more series with value 1."+cachedNote,
		"project_id", "service_id", "status")
	servicePausedDesc = newDesc("clouddb_service_paused",
		"Whether a database service is paused (1) or not (0), from the paused field."+cachedNote,
		"project_id", "service_id")
	serviceCreatedDesc = newDesc("clouddb_service_created_timestamp_seconds",
		"Creation time of a database service as Unix seconds, from the created field; absent when the API sends none."+cachedNote,
		"project_id", "service_id")
	serviceStatusChangedDesc = newDesc("clouddb_service_status_changed_timestamp_seconds",
		"Unix seconds at which the exporter first saw the current status of a database service (the API reports no transition times)."+cachedNote,
		"project_id", "service_id")
	serviceResourcesDesc = newDesc("clouddb_service_resources",
		"Number of compute resources of a database service (the primary plus HA replicas), the length of the resources list."+cachedNote,
		"project_id", "service_id")
	serviceCPUDesc = newDesc("clouddb_service_cpu_cores",
		"CPU of one compute resource of a database service in cores, from resources[].spec.cpu_millis divided by 1000."+cachedNote,
		"project_id", "service_id", "resource_id")
	serviceMemoryDesc = newDesc("clouddb_service_memory_bytes",
		"Memory of one compute resource of a database service in bytes, from resources[].spec.memory_gbs, GB read as GiB (2^30 bytes)."+cachedNote,
		"project_id", "service_id", "resource_id")
	serviceVolumeDesc = newDesc("clouddb_service_volume_info",
		"Volume type of one compute resource of a database service, value 1, from resources[].spec.volume_type (may be empty)."+cachedNote,
		"project_id", "service_id", "resource_id", "volume_type")
	servicePoolerDesc = newDesc("clouddb_service_connection_pooler_enabled",
		"Whether a database service has a connection pooler (1) or not (0): 1 when the connection_pooler field is present."+cachedNote,
		"project_id", "service_id")
)

// collectServices emits the metrics of every service of s.
func collectServices(out *sink, s *fleet.Snapshot) {
	p := s.ProjectID
	for i := range s.Services {
		svc := &s.Services[i]
		id := svc.ServiceID
		host, port := endpointLabels(svc.Endpoint)
		out.gauge(serviceInfoDesc, 1, p, id, svc.Name, svc.RegionCode, svc.ServiceType, svc.Environment(), host, port)
		stateSet(out, serviceStatusDesc, apiclient.ServiceStatuses, svc.Status, p, id)
		out.gauge(servicePausedDesc, boolValue(svc.Paused), p, id)
		timestamp(out, serviceCreatedDesc, svc.Created.Time, p, id)
		timestamp(out, serviceStatusChangedDesc, svc.StatusSince, p, id)
		out.gauge(serviceResourcesDesc, float64(len(svc.Resources)), p, id)
		for i, r := range svc.Resources {
			// A resource without a spec has no size to report; it still
			// counts in clouddb_service_resources.
			if r.Spec == nil {
				continue
			}
			// A value that did not decode is unknown, not zero.
			if !resourceFieldDropped(&svc.Service, i, "cpu_millis") {
				out.gauge(serviceCPUDesc, milliCoresToCores(r.Spec.CPUMillis), p, id, r.ID)
			}
			if !resourceFieldDropped(&svc.Service, i, "memory_gbs") {
				out.gauge(serviceMemoryDesc, gigabytesToBytes(r.Spec.MemoryGBs), p, id, r.ID)
			}
			out.gauge(serviceVolumeDesc, 1, p, id, r.ID, r.Spec.VolumeType)
		}
		out.gauge(servicePoolerDesc, boolValue(svc.ConnectionPooler != nil), p, id)
	}
}

// resourceFieldDropped reports whether field of the spec of resource i of
// svc did not decode.
func resourceFieldDropped(svc *apiclient.Service, i int, field string) bool {
	if len(svc.Dropped) == 0 {
		return false // the common case, without building the path
	}
	return svc.FieldDropped("resources." + strconv.Itoa(i) + ".spec." + field)
}
