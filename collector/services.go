package collector

import (
	"strconv"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	serviceInfoDesc   = newInfoDesc()
	serviceStatusDesc = newDesc("clouddb_service_status",
		"Status of a database service, 1 for the current one.",
		"project_id", "service_id", "status")
	servicePausedDesc = newDesc("clouddb_service_paused",
		"Whether a database service is paused.",
		"project_id", "service_id")
	serviceCreatedDesc = newDesc("clouddb_service_created_timestamp_seconds",
		"Creation time of a database service, in Unix seconds.",
		"project_id", "service_id")
	serviceStatusChangedDesc = newDesc("clouddb_service_status_changed_timestamp_seconds",
		"Time the exporter first saw a database service's status, in Unix seconds.",
		"project_id", "service_id")
	serviceResourcesDesc = newDesc("clouddb_service_resources",
		"Number of compute resources of a database service.",
		"project_id", "service_id")
	serviceCPUDesc = newDesc("clouddb_service_cpu_cores",
		"CPU of one compute resource of a database service, in cores.",
		"project_id", "service_id", "resource_id")
	serviceMemoryDesc = newDesc("clouddb_service_memory_bytes",
		"Memory of one compute resource of a database service, in bytes.",
		"project_id", "service_id", "resource_id")
	serviceVolumeDesc = newDesc("clouddb_service_volume_info",
		"Volume type of one compute resource of a database service, value 1.",
		"project_id", "service_id", "resource_id", "volume_type")
	serviceSharedDesc = newDesc("clouddb_service_shared_resources",
		"Whether a database service runs on shared resources.",
		"project_id", "service_id")
	serviceCPUUsageDesc = newDesc("clouddb_service_cpu_usage_cores",
		"CPU usage of a database service, in cores.",
		"project_id", "service_id")
	serviceMemoryUsageDesc = newDesc("clouddb_service_memory_usage_bytes",
		"Memory usage of a database service, in bytes.",
		"project_id", "service_id")
	serviceStorageUsageDesc = newDesc("clouddb_service_storage_usage_bytes",
		"Storage usage of a database service, in bytes.",
		"project_id", "service_id")
	serviceHAReplicasDesc = newDesc("clouddb_service_ha_replicas",
		"High-availability replicas of a database service.",
		"project_id", "service_id")
	serviceHASyncReplicasDesc = newDesc("clouddb_service_ha_sync_replicas",
		"Synchronous high-availability replicas of a database service.",
		"project_id", "service_id")
	serviceForkDesc = newDesc("clouddb_service_fork_info",
		"The service a database service was forked from, value 1.",
		"project_id", "service_id", "parent_project_id", "parent_service_id", "standby")
	serviceVPCEndpointDesc = newDesc("clouddb_service_vpc_endpoint_info",
		"How a database service is reached from its VPC, value 1.",
		"project_id", "service_id", "vpc_id", "host", "port")
	servicePoolerDesc = newDesc("clouddb_service_connection_pooler_enabled",
		"Whether a database service has a connection pooler.",
		"project_id", "service_id")
)

// serviceInfoLabels alone builds clouddb_service_info's labels, HELP and values.
var serviceInfoLabels = []struct {
	name, field string
	value       func(*apiclient.Service) string
}{
	{"service_id", "service_id", func(s *apiclient.Service) string { return s.ServiceID }},
	{"name", "name", func(s *apiclient.Service) string { return s.Name }},
	{"region_code", "region_code", func(s *apiclient.Service) string { return s.RegionCode }},
	{"service_type", "service_type", func(s *apiclient.Service) string { return s.ServiceType }},
	{"environment", "metadata.environment", (*apiclient.Service).Environment},
	{"host", "endpoint.host", func(s *apiclient.Service) string { return endpointHost(s.Endpoint) }},
	{"port", "endpoint.port", func(s *apiclient.Service) string { return endpointPort(s.Endpoint) }},
}

func newInfoDesc() *Desc {
	labels := []string{"project_id"}
	for _, l := range serviceInfoLabels {
		labels = append(labels, l.name)
	}
	return newDesc("clouddb_service_info",
		"Static attributes of a database service, value 1.",
		labels...)
}

func serviceInfo(out *Sink, svc *apiclient.Service, p string) {
	// On the stack (the sink copies): a large fleet must not allocate per service.
	var buf [16]string
	values := append(buf[:0], p)
	for _, l := range serviceInfoLabels {
		values = append(values, l.value(svc))
	}
	out.gauge(serviceInfoDesc, 1, values...)
}

func collectServices(out *Sink, s *fleet.Snapshot) {
	p := s.ProjectID
	for i := range s.Services {
		svc := &s.Services[i]
		id := svc.ServiceID
		serviceInfo(out, svc.Service, p)
		stateSet(out, serviceStatusDesc, apiclient.ServiceStatuses, svc.Status, p, id)
		out.gauge(servicePausedDesc, boolValue(svc.IsPaused()), p, id)
		out.gauge(serviceSharedDesc, boolValue(svc.Shared()), p, id)
		timestamp(out, serviceCreatedDesc, svc.Created.Time, p, id)
		timestamp(out, serviceStatusChangedDesc, svc.StatusSince, p, id)
		out.gauge(serviceResourcesDesc, float64(len(svc.Resources)), p, id)
		for i, r := range svc.Resources {
			if r.Spec == nil {
				continue
			}
			// Undecoded is unknown and null (a shared service) no size: neither is 0.
			if r.Spec.CPUMillis != nil && !resourceFieldDropped(svc.Service, i, "cpu_millis") {
				out.gauge(serviceCPUDesc, milliCoresToCores(*r.Spec.CPUMillis), p, id, r.ID)
			}
			if r.Spec.MemoryGBs != nil && !resourceFieldDropped(svc.Service, i, "memory_gbs") {
				out.gauge(serviceMemoryDesc, gigabytesToBytes(*r.Spec.MemoryGBs), p, id, r.ID)
			}
			out.gauge(serviceVolumeDesc, 1, p, id, r.ID, r.Spec.VolumeType)
		}
		out.gauge(servicePoolerDesc, boolValue(svc.ConnectionPooler != nil), p, id)
		collectService2026(out, svc.Service, p, id)
	}
}

func collectService2026(out *Sink, svc *apiclient.Service, p, id string) {
	if m := svc.Metrics; m != nil {
		optional(out, serviceCPUUsageDesc, m.MilliCPU, 1.0/1000, p, id)
		optional(out, serviceMemoryUsageDesc, m.MemoryMB, 1<<20, p, id)
		optional(out, serviceStorageUsageDesc, m.StorageMB, 1<<20, p, id)
	}
	if ha := svc.HAReplicas; ha != nil {
		optional(out, serviceHAReplicasDesc, ha.ReplicaCount, 1, p, id)
		optional(out, serviceHASyncReplicasDesc, ha.SyncReplicaCount, 1, p, id)
	}
	if f := svc.ForkedFrom; f != nil {
		out.gauge(serviceForkDesc, 1, p, id, f.ProjectID, f.ServiceID, strconv.FormatBool(f.IsStandby))
	}
	if e := svc.VPCAddress(); e != nil {
		out.gauge(serviceVPCEndpointDesc, 1, p, id, e.VPCID, e.Host, strconv.FormatInt(int64(e.Port), 10))
	}
}

func optional(out *Sink, d *Desc, v *apiclient.Int, scale float64, labelValues ...string) {
	if v != nil {
		out.gauge(d, float64(*v)*scale, labelValues...)
	}
}

func resourceFieldDropped(svc *apiclient.Service, i int, field string) bool {
	if len(svc.Dropped) == 0 {
		return false // the common case, without building the path
	}
	return svc.FieldDropped("resources." + strconv.Itoa(i) + ".spec." + field)
}
