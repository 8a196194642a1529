package cloudsim

import (
	"net/http"
	"slices"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Fork strategies of forkService.
const (
	ForkLastSnapshot = apiclient.ForkLastSnapshot
	ForkNow          = apiclient.ForkNow
	ForkPITR         = apiclient.ForkPITR
)

// The provider picks when a create names no region.
const defaultRegion = "us-east-1"

func init() { revision2026Routes = append(revision2026Routes, (*Sim).routes2026) }

func (s *Sim) routes2026() []route {
	const one = "/v1/projects/{project_id}/services/{service_id}"
	return []route{
		{"GET /v1/projects", apiclient.OpListProjects, authBasic, s.listProjects},
		{"POST " + one + "/start", apiclient.OpStartService, authBasic, s.startService},
		{"POST " + one + "/stop", apiclient.OpStopService, authBasic, s.stopService},
		{"POST " + one + "/rename", apiclient.OpRenameService, authBasic, s.renameService},
	}
}

// listProjects: a key pair sees its project, a user its projects, an unrestricted credential all.
func (s *Sim) listProjects(c *call) (int, any, error) {
	var ids []string
	switch {
	case len(c.cred.Projects) > 0:
		ids = slices.Clone(c.cred.Projects)
	case c.cred.ProjectID != "":
		ids = []string{c.cred.ProjectID}
	default:
		for id := range s.projects {
			ids = append(ids, id)
		}
		slices.Sort(ids)
	}
	out := make([]apiclient.Project, len(ids))
	for i, id := range ids {
		out[i] = apiclient.Project{ID: id, Name: projectName(id)}
	}
	return http.StatusOK, out, nil
}

func projectName(id string) string { return "Project " + id }

func (s *Sim) startService(c *call) (int, any, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	if err := svc.checkWritable(c.now); err != nil {
		return 0, nil, err
	}
	if status := svc.life.status(c.now); status != apiclient.ServicePaused {
		return 0, nil, conflictf("service %s is %s; only a PAUSED service can be started", svc.id, status)
	}
	svc.life.begin(c.now, apiclient.ServiceReady, step{apiclient.ServiceResuming, s.timings.Configure})
	return http.StatusAccepted, svc.wire(c.now, s.rev), nil
}

func (s *Sim) stopService(c *call) (int, any, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	if err := svc.checkChangeable(c.now); err != nil {
		return 0, nil, err
	}
	svc.life.begin(c.now, apiclient.ServicePaused, step{apiclient.ServicePausing, s.timings.Configure})
	return http.StatusAccepted, svc.wire(c.now, s.rev), nil
}

func (s *Sim) renameService(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	name := b.text("name")
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	if err := svc.checkWritable(c.now); err != nil {
		return 0, nil, err
	}
	svc.name = name
	svc.life.touch()
	return http.StatusOK, svc.wire(c.now, s.rev), nil
}

func (b *body) sizes() (cpu, mem int64, shared bool) {
	cpu, mem = b.sizeString("cpu_millis", true), b.sizeString("memory_gbs", true)
	if b.first != nil {
		return 0, 0, false
	}
	if (cpu == 0) != (mem == 0) {
		b.failOn("memory_gbs", invalidf(`cpu_millis and memory_gbs must both be "shared" or both be sizes`))
		return 0, 0, false
	}
	return cpu, mem, cpu == 0
}

func (b *body) optionalEnum(name, def string, allowed ...string) string {
	if !b.has(name) {
		return def
	}
	return b.enum(name, allowed...)
}

func (s *Sim) createService2026(c *call, b *body) (int, any, error) {
	name := b.text("name")
	var addons []string
	if b.has("addons") {
		addons = b.set("addons", apiclient.AddonTimeSeries, apiclient.AddonAI)
	}
	region := defaultRegion
	if b.has("region_code") {
		region = b.text("region_code")
	}
	replicas := int64(0)
	if b.has("replica_count") {
		replicas = b.int("replica_count", 0, maxReplicaCount)
	}
	cpu, mem, shared := b.sizes()
	env := b.optionalEnum("environment_tag", apiclient.EnvironmentDev, apiclient.EnvironmentProd, apiclient.EnvironmentDev)
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	svc := s.newService(c.project, s.rng, name, region, serviceType(addons), cpu, mem, creationTime(c.now))
	svc.shared, svc.environment = shared, env
	s.setReplicaCount(svc, s.rng, int(replicas))
	s.provision(svc, c.now)
	out := svc.wire(c.now, s.rev)
	out.InitialPassword = initialPassword()
	return http.StatusAccepted, out, nil
}

func (s *Sim) forkService2026(c *call, b *body) (int, any, error) {
	strategy := b.enum("fork_strategy", ForkLastSnapshot, ForkNow, ForkPITR)
	var target time.Time
	if strategy == ForkPITR {
		raw := b.string("target_time")
		if b.first == nil {
			t, err := apiclient.ParseTime(raw)
			if err != nil {
				b.failOn("target_time", invalidf("target_time must be an RFC 3339 date-time, got %q", truncate(raw, 40)))
			}
			target = t
		}
	}
	src, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	name := src.name + "-fork"
	if b.has("name") {
		name = b.text("name")
	}
	cpu, mem, shared := src.cpuMillis, src.memoryGBs, src.shared
	if b.has("cpu_millis") || b.has("memory_gbs") {
		cpu, mem, shared = b.sizes()
	}
	env := b.optionalEnum("environment_tag", apiclient.EnvironmentDev, apiclient.EnvironmentProd, apiclient.EnvironmentDev)
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	if strategy == ForkPITR && (target.Before(src.created) || target.After(c.now)) {
		return 0, nil, &apiError{status: http.StatusBadRequest, code: "INVALID_REQUEST",
			message: "target_time must lie between the service's creation and now", details: map[string]any{"field": "target_time"}}
	}
	if err := src.checkChangeable(c.now); err != nil {
		return 0, nil, err
	}
	fork := s.newService(c.project, s.rng, name, src.region, src.serviceType, cpu, mem, creationTime(c.now))
	fork.shared, fork.environment = shared, env
	fork.forkedFrom = &apiclient.ForkedFrom{ProjectID: src.projectID, ServiceID: src.id}
	s.provision(fork, c.now)
	out := fork.wire(c.now, s.rev)
	out.InitialPassword = initialPassword()
	return http.StatusAccepted, out, nil
}

func (s *Sim) setHA2026(c *call, b *body) (int, any, error) {
	if !b.has("replica_count") && !b.has("sync_replica_count") {
		return 0, nil, invalidf("replica_count or sync_replica_count is required")
	}
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	replicas, sync := int64(len(svc.resourceIDs)-1), int64(svc.syncReplicas)
	if b.has("replica_count") {
		replicas = b.int("replica_count", 0, maxReplicaCount)
	}
	if b.has("sync_replica_count") {
		sync = b.int("sync_replica_count", 0, maxReplicaCount)
	}
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	if sync > replicas {
		return 0, nil, &apiError{status: http.StatusBadRequest, code: "INVALID_REQUEST",
			message: "sync_replica_count must not exceed replica_count", details: map[string]any{"field": "sync_replica_count"}}
	}
	if err := svc.checkChangeable(c.now); err != nil {
		return 0, nil, err
	}
	s.setReplicaCount(svc, s.rng, int(replicas))
	svc.syncReplicas = int(sync)
	s.reconfigure(svc, c.now)
	return s.acceptedService(svc, c.now)
}

// Capacity of a shared-resource service, which has no dedicated size.
const (
	sharedMilliCPU = 250
	sharedMemoryMB = 1024
)

// usage follows the usage series' load curve, constant within the
// provider's one-minute bucket.
func (svc *service) usage(now time.Time) *apiclient.ServiceMetrics {
	status := svc.life.status(now)
	if status == apiclient.ServiceQueued {
		return nil
	}
	out := &apiclient.ServiceMetrics{StorageMB: intPtr(svc.storageMB(now))}
	if !svc.active(now) {
		return out
	}
	cpuCap, memCap := svc.capacity()
	load := svc.load(now)
	out.MilliCPU = intPtr(int64(float64(cpuCap) * load))
	out.MemoryMB = intPtr(int64(float64(memCap) * (0.4 + 0.5*load)))
	return out
}
