package cloudsim

import (
	cryptorand "crypto/rand"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type service struct {
	id, projectID, name, region, serviceType string
	created                                  time.Time
	cpuMillis, memoryGBs                     int64
	// No dedicated size: cpuMillis and memoryGBs are 0.
	shared       bool
	syncReplicas int
	forkedFrom   *apiclient.ForkedFrom
	// The primary resource first, then one per HA replica.
	resourceIDs []string
	// firstOrdinal is the usage series' ordinal of resourceIDs[0]: each
	// node replacement (ReplaceNode) adds one, as the provider numbers a
	// new node after the ones it had.
	firstOrdinal int
	environment  string
	pooler       bool
	vpcID        string
	port         int
	life         lifecycle
	replicaSets  map[string]*replicaSet
	rsOrder      []string
	logs         logState
	// curve is the load's daily curve; the zero value is the default one.
	curve loadCurve
}

func serviceType(addons []string) string {
	switch {
	case slices.Contains(addons, apiclient.AddonTimeSeries):
		return apiclient.ServiceTypeTimeSeries
	case slices.Contains(addons, apiclient.AddonAI):
		return apiclient.ServiceTypeVector
	default:
		return apiclient.ServiceTypePostgres
	}
}

// creationTime has fractional seconds even on a whole-second clock: the real
// API sends them.
func creationTime(now time.Time) time.Time {
	t := now.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		t = t.Add(time.Microsecond)
	}
	return t
}

// newService: the caller starts any transition and holds s.mu.
func (s *Sim) newService(p *project, rng *rand.Rand, name, region, stype string, cpu, mem int64, created time.Time) *service {
	svc := &service{
		id:          s.newID(rng),
		projectID:   p.id,
		name:        name,
		region:      region,
		serviceType: stype,
		created:     created,
		cpuMillis:   cpu,
		memoryGBs:   mem,
		environment: apiclient.EnvironmentProd,
		port:        newPort(rng),
		life:        settle(apiclient.ServiceReady),
		replicaSets: map[string]*replicaSet{},
	}
	svc.resourceIDs = []string{s.newID(rng)}
	p.services[svc.id] = svc
	p.serviceOrder = append(p.serviceOrder, svc.id)
	return svc
}

func (s *Sim) setReplicaCount(svc *service, rng *rand.Rand, n int) {
	if want := 1 + n; want <= len(svc.resourceIDs) {
		svc.resourceIDs = svc.resourceIDs[:want]
		return
	}
	for len(svc.resourceIDs) < 1+n {
		svc.resourceIDs = append(svc.resourceIDs, s.newID(rng))
	}
}

func (svc *service) wire(now time.Time, rev string) apiclient.Service {
	status := svc.life.status(now)
	out := apiclient.Service{
		ServiceID:   svc.id,
		ProjectID:   svc.projectID,
		Name:        svc.name,
		RegionCode:  svc.region,
		ServiceType: svc.serviceType,
		Status:      status,
		Created:     apiclient.Time{Time: svc.created},
		Resources:   make([]apiclient.Resource, len(svc.resourceIDs)),
		Metadata:    &apiclient.Metadata{Environment: svc.environment},
	}
	for i, id := range svc.resourceIDs {
		spec := &apiclient.ResourceSpec{}
		if !svc.shared {
			spec.CPUMillis, spec.MemoryGBs = intPtr(svc.cpuMillis), intPtr(svc.memoryGBs)
		}
		out.Resources[i] = apiclient.Resource{ID: id, Spec: spec}
	}
	if status != apiclient.ServiceQueued {
		out.Endpoint = endpoint(svc.id, svc.projectID, svc.port)
	}
	if svc.pooler {
		out.ConnectionPooler = pooler(svc.id, svc.projectID)
	}
	if rev == Revision2024 {
		paused := status == apiclient.ServicePaused
		out.Paused = &paused
		return out
	}
	if out.ServiceType == apiclient.ServiceTypeTimeSeries {
		out.ServiceType = apiclient.ServiceTypeTimescaleDB
	}
	out.Metrics = svc.usage(now)
	replicas := len(svc.resourceIDs) - 1
	out.HAReplicas = &apiclient.HAReplicas{ReplicaCount: intPtr(int64(replicas)), SyncReplicaCount: intPtr(int64(svc.syncReplicas))}
	if svc.vpcID != "" && status != apiclient.ServiceQueued {
		out.VPCEndpoint = &apiclient.VPCEndpoint{Host: "vpc-" + host(svc.id, svc.projectID), Port: apiclient.Int(svc.port), VPCID: svc.vpcID}
	}
	if svc.forkedFrom != nil {
		ff := *svc.forkedFrom
		out.ForkedFrom = &ff
	}
	live := svc.liveReplicaSets(now)
	out.ReadReplicaSets = make([]apiclient.ReplicaSet, len(live))
	for i, rs := range live {
		out.ReadReplicaSets[i] = rs.wire(svc.projectID, now)
	}
	return out
}

func intPtr(n int64) *apiclient.Int {
	v := apiclient.Int(n)
	return &v
}

func (p *project) lookupService(id string, now time.Time) (*service, error) {
	svc := p.services[id]
	if svc != nil && svc.life.gone(now) {
		delete(p.services, id)
		svc = nil
	}
	if svc == nil {
		return nil, notFoundf("service %s not found in project %s", id, p.id)
	}
	return svc, nil
}

func (p *project) liveServices(now time.Time) []*service {
	return compactLive(&p.serviceOrder, p.services, func(svc *service) bool { return svc.life.gone(now) })
}

func (svc *service) checkWritable(now time.Time) error {
	if svc.life.removed || svc.life.status(now) == apiclient.ServiceDeleting {
		return conflictf("service %s is being deleted", svc.id)
	}
	return nil
}

// Only READY or UNSTABLE (operators resize to recover) accept changes.
func (svc *service) checkChangeable(now time.Time) error {
	if err := svc.checkWritable(now); err != nil {
		return err
	}
	switch status := svc.life.status(now); status {
	case apiclient.ServiceReady, apiclient.ServiceUnstable:
		return nil
	default:
		return conflictf("service %s is %s; retry when it is READY", svc.id, status)
	}
}

func (s *Sim) reconfigure(svc *service, now time.Time) {
	svc.life.begin(now, apiclient.ServiceReady, step{apiclient.ServiceConfiguring, s.timings.Configure})
}

func (s *Sim) provision(svc *service, now time.Time) {
	svc.life.begin(now, apiclient.ServiceReady,
		step{apiclient.ServiceQueued, s.timings.Provision},
		step{apiclient.ServiceConfiguring, s.timings.Provision})
}

func initialPassword() apiclient.Secret { return apiclient.Secret(cryptorand.Text()) }

func (s *Sim) serviceOf(c *call) (*service, error) {
	return c.project.lookupService(c.r.PathValue("service_id"), c.now)
}

func (s *Sim) listServices(c *call) (int, any, error) {
	live := c.project.liveServices(c.now)
	out := make([]apiclient.Service, len(live))
	for i, svc := range live {
		out[i] = svc.wire(c.now, s.rev)
	}
	return http.StatusOK, out, nil
}

func (s *Sim) createService(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	if s.rev != Revision2024 {
		return s.createService2026(c, b)
	}
	name := b.text("name")
	addons := b.set("addons", apiclient.AddonTimeSeries, apiclient.AddonAI)
	region := b.text("region_code")
	cpu, mem := b.sizeString("cpu_millis", false), b.sizeString("memory_gbs", false)
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	svc := s.newService(c.project, s.rng, name, region, serviceType(addons), cpu, mem, creationTime(c.now))
	s.provision(svc, c.now)
	out := svc.wire(c.now, s.rev)
	out.InitialPassword = initialPassword()
	return http.StatusAccepted, out, nil
}

func (s *Sim) getService(c *call) (int, any, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, svc.wire(c.now, s.rev), nil
}

func (s *Sim) deleteService(c *call) (int, any, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	// A second delete is accepted and does not restart the clock.
	if !svc.life.removed {
		svc.life.remove(c.now, apiclient.ServiceDeleting, s.timings.Delete)
	}
	return http.StatusAccepted, nil, nil
}

func (s *Sim) resizeService(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	cpu, mem := b.sizeString("cpu_millis", false), b.sizeString("memory_gbs", false)
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	if err := svc.checkChangeable(c.now); err != nil {
		return 0, nil, err
	}
	svc.cpuMillis, svc.memoryGBs, svc.shared = cpu, mem, false
	s.reconfigure(svc, c.now)
	return s.acceptedService(svc, c.now)
}

func (s *Sim) updatePassword(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	b.nonEmpty("password")
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
	// The password itself is not kept: nothing in the simulator reads it.
	svc.life.touch()
	return http.StatusNoContent, nil, nil
}

func (s *Sim) setServiceEnvironment(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	env := b.enum("environment", apiclient.EnvironmentProd, apiclient.EnvironmentDev)
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
	svc.environment = env
	svc.life.touch()
	return http.StatusOK, message("Environment set to " + env), nil
}

func (s *Sim) setHA(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	if s.rev != Revision2024 {
		return s.setHA2026(c, b)
	}
	n := b.int("replica_count", 0, maxReplicaCount)
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	if err := svc.checkChangeable(c.now); err != nil {
		return 0, nil, err
	}
	s.setReplicaCount(svc, s.rng, int(n))
	svc.syncReplicas = min(svc.syncReplicas, int(n))
	s.reconfigure(svc, c.now)
	return http.StatusAccepted, nil, nil
}

func (s *Sim) enableServicePooler(c *call) (int, any, error) {
	return s.setServicePooler(c, true)
}

func (s *Sim) disableServicePooler(c *call) (int, any, error) {
	return s.setServicePooler(c, false)
}

func (s *Sim) setServicePooler(c *call, enabled bool) (int, any, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	if err := svc.checkWritable(c.now); err != nil {
		return 0, nil, err
	}
	svc.pooler = enabled
	svc.life.touch()
	return http.StatusOK, message(poolerMessage(enabled)), nil
}

func poolerMessage(enabled bool) string {
	if enabled {
		return "Connection pooler enabled"
	}
	return "Connection pooler disabled"
}

func (s *Sim) forkService(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	if s.rev != Revision2024 {
		return s.forkService2026(c, b)
	}
	name, region := b.text("name"), b.text("region_code")
	cpu, mem := b.sizeString("cpu_millis", false), b.sizeString("memory_gbs", false)
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	src, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	if err := src.checkChangeable(c.now); err != nil {
		return 0, nil, err
	}
	fork := s.newService(c.project, s.rng, name, region, src.serviceType, cpu, mem, creationTime(c.now))
	fork.environment = src.environment
	s.provision(fork, c.now)
	out := fork.wire(c.now, s.rev)
	out.InitialPassword = initialPassword()
	out.ForkedFrom = &apiclient.ForkedFrom{ProjectID: src.projectID, ServiceID: src.id}
	return http.StatusAccepted, out, nil
}

func (s *Sim) vpcAttachment(c *call) (*service, *vpc, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return nil, nil, err
	}
	vpcID := b.text("vpc_id")
	if s.rev != Revision2024 && b.first == nil && strings.TrimLeft(vpcID, "0123456789") != "" {
		b.failOn("vpc_id", invalidf("vpc_id must match ^[0-9]+$, got %q", truncate(vpcID, 32)))
	}
	if err := b.err(); err != nil {
		return nil, nil, err
	}
	svc, err := s.serviceOf(c)
	if err != nil {
		return nil, nil, err
	}
	v, err := c.project.lookupVPC(vpcID)
	if err != nil {
		return nil, nil, err
	}
	if err := svc.checkChangeable(c.now); err != nil {
		return nil, nil, err
	}
	return svc, v, nil
}

func (s *Sim) attachToVPC(c *call) (int, any, error) {
	svc, v, err := s.vpcAttachment(c)
	if err != nil {
		return 0, nil, err
	}
	if svc.vpcID != "" {
		return 0, nil, conflictf("service %s is already attached to VPC %s", svc.id, svc.vpcID)
	}
	svc.vpcID = v.id
	s.reconfigure(svc, c.now)
	return s.acceptedMessage("Service " + svc.id + " is being attached to VPC " + v.id)
}

func (s *Sim) detachFromVPC(c *call) (int, any, error) {
	svc, v, err := s.vpcAttachment(c)
	if err != nil {
		return 0, nil, err
	}
	if svc.vpcID != v.id {
		return 0, nil, conflictf("service %s is not attached to VPC %s", svc.id, v.id)
	}
	svc.vpcID = ""
	s.reconfigure(svc, c.now)
	return s.acceptedMessage("Service " + svc.id + " is being detached from VPC " + v.id)
}

func (s *Sim) acceptedService(svc *service, now time.Time) (int, any, error) {
	if s.rev == Revision2024 {
		return http.StatusAccepted, nil, nil
	}
	return http.StatusAccepted, svc.wire(now, s.rev), nil
}

func (s *Sim) acceptedMessage(text string) (int, any, error) {
	if s.rev == Revision2024 {
		return http.StatusAccepted, nil, nil
	}
	return http.StatusAccepted, message(text), nil
}

// serviceWrites are the first revision's service writes.
func (s *Sim) serviceWrites() []route {
	return []route{
		{"POST " + servicesRoute, apiclient.OpCreateService, authBasic, s.createService},
		{"DELETE " + serviceRoute, apiclient.OpDeleteService, authBasic, s.deleteService},
		{"POST " + serviceRoute + "/resize", apiclient.OpResizeService, authBasic, s.resizeService},
		{"POST " + serviceRoute + "/updatePassword", apiclient.OpUpdatePassword, authBasic, s.updatePassword},
		{"POST " + serviceRoute + "/setEnvironment", apiclient.OpSetServiceEnvironment, authBasic, s.setServiceEnvironment},
		{"POST " + serviceRoute + "/setHA", apiclient.OpSetHA, authBasic, s.setHA},
		{"POST " + serviceRoute + "/enablePooler", apiclient.OpEnableServicePooler, authBasic, s.enableServicePooler},
		{"POST " + serviceRoute + "/disablePooler", apiclient.OpDisableServicePooler, authBasic, s.disableServicePooler},
		{"POST " + serviceRoute + "/forkService", apiclient.OpForkService, authBasic, s.forkService},
		{"POST " + serviceRoute + "/attachToVPC", apiclient.OpAttachToVPC, authBasic, s.attachToVPC},
		{"POST " + serviceRoute + "/detachFromVPC", apiclient.OpDetachFromVPC, authBasic, s.detachFromVPC},
	}
}
