package cloudsim

import (
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type replicaSet struct {
	id, name                    string
	nodes, cpuMillis, memoryGBs int64
	environment                 string
	pooler                      bool
	port                        int
	life                        lifecycle
}

// The create response carries only these fields (docs/api.md, "Replica set").
type createdReplicaSet struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    string `json:"status"`
	Nodes     int64  `json:"nodes"`
	CPUMillis int64  `json:"cpu_millis"`
	MemoryGBs int64  `json:"memory_gbs"`
}

// newReplicaSet: the caller holds s.mu.
func (s *Sim) newReplicaSet(svc *service, rng *rand.Rand, name string, nodes, cpu, mem int64) *replicaSet {
	rs := &replicaSet{
		id:          s.newID(rng),
		name:        name,
		nodes:       nodes,
		cpuMillis:   cpu,
		memoryGBs:   mem,
		environment: svc.environment,
		port:        newPort(rng),
		life:        settle(apiclient.ReplicaSetActive),
	}
	svc.replicaSets[rs.id] = rs
	svc.rsOrder = append(svc.rsOrder, rs.id)
	return rs
}

func (rs *replicaSet) wire(projectID string, now time.Time) apiclient.ReplicaSet {
	out := apiclient.ReplicaSet{
		ID:        rs.id,
		Name:      rs.name,
		Status:    rs.life.status(now),
		Nodes:     apiclient.Int(rs.nodes),
		CPUMillis: apiclient.Int(rs.cpuMillis),
		MemoryGBs: apiclient.Int(rs.memoryGBs),
		Endpoint:  endpoint(rs.id, projectID, rs.port),
		Metadata:  &apiclient.Metadata{Environment: rs.environment},
	}
	if rs.pooler {
		out.ConnectionPooler = pooler(rs.id, projectID)
	}
	return out
}

func (svc *service) liveReplicaSets(now time.Time) []*replicaSet {
	return compactLive(&svc.rsOrder, svc.replicaSets, func(rs *replicaSet) bool { return rs.life.gone(now) })
}

func (s *Sim) replicaSetOf(c *call) (*replicaSet, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return nil, err
	}
	id := c.r.PathValue("replica_set_id")
	rs := svc.replicaSets[id]
	if rs != nil && rs.life.gone(c.now) {
		delete(svc.replicaSets, id)
		rs = nil
	}
	if rs == nil {
		return nil, notFoundf("replica set %s not found on service %s", id, svc.id)
	}
	if err := svc.checkWritable(c.now); err != nil {
		return nil, err
	}
	switch status := rs.life.status(c.now); {
	case rs.life.removed, status == apiclient.ReplicaSetCreating, status == apiclient.ReplicaSetResizing,
		status == apiclient.ReplicaSetDeleting:
		return nil, conflictf("replica set %s is %s; retry when it is active", rs.id, status)
	}
	return rs, nil
}

func (s *Sim) listReplicaSets(c *call) (int, any, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	live := svc.liveReplicaSets(c.now)
	out := make([]apiclient.ReplicaSet, len(live))
	for i, rs := range live {
		out[i] = rs.wire(svc.projectID, c.now)
	}
	return http.StatusOK, out, nil
}

func (s *Sim) createReplicaSet(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	name := b.text("name")
	cpu, mem, nodes := b.size("cpu_millis"), b.size("memory_gbs"), b.size("nodes")
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
	if status := svc.life.status(c.now); status != apiclient.ServiceReady {
		return 0, nil, conflictf("service %s is %s; replica sets need a READY service", svc.id, status)
	}
	rs := s.newReplicaSet(svc, s.rng, name, nodes, cpu, mem)
	rs.life.begin(c.now, apiclient.ReplicaSetActive, step{apiclient.ReplicaSetCreating, s.timings.ReplicaSet})
	return http.StatusAccepted, createdReplicaSet{
		ID: rs.id, Name: rs.name, Status: rs.life.status(c.now),
		Nodes: rs.nodes, CPUMillis: rs.cpuMillis, MemoryGBs: rs.memoryGBs,
	}, nil
}

func (s *Sim) deleteReplicaSet(c *call) (int, any, error) {
	rs, err := s.replicaSetOf(c)
	if err != nil {
		return 0, nil, err
	}
	rs.life.remove(c.now, apiclient.ReplicaSetDeleting, s.timings.ReplicaSet)
	return http.StatusAccepted, nil, nil
}

func (s *Sim) resizeReplicaSet(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	// Revision 2026 keeps the node count unless one is given.
	cpu, mem := b.sizeString("cpu_millis", false), b.sizeString("memory_gbs", false)
	nodes := int64(0)
	if s.rev == Revision2024 || b.has("nodes") {
		nodes = b.size("nodes")
	}
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	rs, err := s.replicaSetOf(c)
	if err != nil {
		return 0, nil, err
	}
	rs.cpuMillis, rs.memoryGBs = cpu, mem
	if nodes > 0 {
		rs.nodes = nodes
	}
	rs.life.begin(c.now, apiclient.ReplicaSetActive, step{apiclient.ReplicaSetResizing, s.timings.ReplicaSet})
	return http.StatusAccepted, message("Replica set resize accepted"), nil
}

func (s *Sim) enableReplicaSetPooler(c *call) (int, any, error) {
	return s.setReplicaSetPooler(c, true)
}

func (s *Sim) disableReplicaSetPooler(c *call) (int, any, error) {
	return s.setReplicaSetPooler(c, false)
}

func (s *Sim) setReplicaSetPooler(c *call, enabled bool) (int, any, error) {
	rs, err := s.replicaSetOf(c)
	if err != nil {
		return 0, nil, err
	}
	rs.pooler = enabled
	rs.life.touch()
	return http.StatusOK, message(poolerMessage(enabled)), nil
}

func (s *Sim) setReplicaSetEnvironment(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	env := b.enum("environment", apiclient.EnvironmentProd, apiclient.EnvironmentDev)
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	rs, err := s.replicaSetOf(c)
	if err != nil {
		return 0, nil, err
	}
	rs.environment = env
	rs.life.touch()
	return http.StatusOK, message("Environment set to " + env), nil
}

// replicaSetWrites are the replica set writes.
func (s *Sim) replicaSetWrites() []route {
	return []route{
		{"POST " + replicaSetsRoute, apiclient.OpCreateReplicaSet, authBasic, s.createReplicaSet},
		{"DELETE " + replicaSetRoute, apiclient.OpDeleteReplicaSet, authBasic, s.deleteReplicaSet},
		{"POST " + replicaSetRoute + "/resize", apiclient.OpResizeReplicaSet, authBasic, s.resizeReplicaSet},
		{"POST " + replicaSetRoute + "/enablePooler", apiclient.OpEnableReplicaSetPooler, authBasic, s.enableReplicaSetPooler},
		{"POST " + replicaSetRoute + "/disablePooler", apiclient.OpDisableReplicaSetPooler, authBasic, s.disableReplicaSetPooler},
		{"POST " + replicaSetRoute + "/setEnvironment", apiclient.OpSetReplicaSetEnvironment, authBasic, s.setReplicaSetEnvironment},
	}
}
