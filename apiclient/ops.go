package apiclient

import (
	"net/http"
	"strings"
)

// Operation names. They are stable: metrics, logs, audit records, the
// admin allow list and the simulator use them.
const (
	OpGetAuthInfo = "getAuthInfo"
	// OpListProjects is revision 2026's GET /projects.
	OpListProjects = "listProjects"

	OpListServices          = "listServices"
	OpCreateService         = "createService"
	OpGetService            = "getService"
	OpDeleteService         = "deleteService"
	OpResizeService         = "resizeService"
	OpUpdatePassword        = "updatePassword"
	OpSetServiceEnvironment = "setServiceEnvironment"
	OpSetHA                 = "setHA"
	OpEnableServicePooler   = "enableServicePooler"
	OpDisableServicePooler  = "disableServicePooler"
	OpForkService           = "forkService"
	OpAttachToVPC           = "attachToVPC"
	OpDetachFromVPC         = "detachFromVPC"
	// Revision 2026 only.
	OpStartService  = "startService"
	OpStopService   = "stopService"
	OpRenameService = "renameService"
	// Revision 2026 only: usage series (a preview) and logs.
	OpGetServiceMetricsAvailableSeries = "getServiceMetricsAvailableSeries"
	OpGetServiceMetricsSeries          = "getServiceMetricsSeries"
	OpGetServiceLogs                   = "getServiceLogs"

	OpListReplicaSets          = "listReplicaSets"
	OpCreateReplicaSet         = "createReplicaSet"
	OpDeleteReplicaSet         = "deleteReplicaSet"
	OpResizeReplicaSet         = "resizeReplicaSet"
	OpEnableReplicaSetPooler   = "enableReplicaSetPooler"
	OpDisableReplicaSetPooler  = "disableReplicaSetPooler"
	OpSetReplicaSetEnvironment = "setReplicaSetEnvironment"

	OpListVPCs  = "listVPCs"
	OpCreateVPC = "createVPC"
	OpGetVPC    = "getVPC"
	OpRenameVPC = "renameVPC"
	OpDeleteVPC = "deleteVPC"

	OpListPeerings  = "listPeerings"
	OpCreatePeering = "createPeering"
	OpGetPeering    = "getPeering"
	OpDeletePeering = "deletePeering"
)

// Operation describes one operation of the API. The simulator keeps its own
// route table on purpose: it is the oracle this catalog is tested against.
type Operation struct {
	Name string
	// Path is below the base URL; {project_id} is the client's project, the
	// other placeholders are filled in order.
	Method, Path string
	// The one documented success status; any other is an error.
	Success int
	// Accepted (202), settling later through transitional states.
	Async bool
	// Only writes are offered by the admin surface; some reads are POSTs.
	Write bool
}

// IDs are the names of the path placeholders after {project_id}, in order.
func (o Operation) IDs() []string {
	var ids []string
	for rest := o.Path; ; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return ids
		}
		end := strings.IndexByte(rest[open:], '}') + open
		if name := rest[open+1 : end]; name != "project_id" {
			ids = append(ids, name)
		}
		rest = rest[end+1:]
	}
}

// Path templates shared by several operations.
const (
	servicesPath    = "/projects/{project_id}/services"
	servicePath     = servicesPath + "/{service_id}"
	replicaSetsPath = servicePath + "/replicaSets"
	replicaSetPath  = replicaSetsPath + "/{replica_set_id}"
	vpcsPath        = "/projects/{project_id}/vpcs"
	vpcPath         = vpcsPath + "/{vpc_id}"
	peeringsPath    = vpcPath + "/peerings"
	peeringPath     = peeringsPath + "/{peering_id}"
)

// Names for the catalog's boolean columns.
const (
	syncOp, asyncOp = false, true
	readOp, writeOp = false, true
)

// catalog is every operation of the API, in the spec's order. Adding one is
// a line here, a Client method and, for a write, its admin endpoint.
var catalog = []Operation{
	{OpGetAuthInfo, http.MethodGet, "/auth/info", http.StatusOK, syncOp, readOp},
	{OpListProjects, http.MethodGet, "/projects", http.StatusOK, syncOp, readOp}, // revision 2026

	{OpListServices, http.MethodGet, servicesPath, http.StatusOK, syncOp, readOp},
	{OpCreateService, http.MethodPost, servicesPath, http.StatusAccepted, asyncOp, writeOp},
	{OpGetService, http.MethodGet, servicePath, http.StatusOK, syncOp, readOp},
	{OpDeleteService, http.MethodDelete, servicePath, http.StatusAccepted, asyncOp, writeOp},
	{OpResizeService, http.MethodPost, servicePath + "/resize", http.StatusAccepted, asyncOp, writeOp},
	{OpUpdatePassword, http.MethodPost, servicePath + "/updatePassword", http.StatusNoContent, syncOp, writeOp},
	{OpSetServiceEnvironment, http.MethodPost, servicePath + "/setEnvironment", http.StatusOK, syncOp, writeOp},
	{OpSetHA, http.MethodPost, servicePath + "/setHA", http.StatusAccepted, asyncOp, writeOp},
	{OpEnableServicePooler, http.MethodPost, servicePath + "/enablePooler", http.StatusOK, syncOp, writeOp},
	{OpDisableServicePooler, http.MethodPost, servicePath + "/disablePooler", http.StatusOK, syncOp, writeOp},
	{OpForkService, http.MethodPost, servicePath + "/forkService", http.StatusAccepted, asyncOp, writeOp},
	{OpAttachToVPC, http.MethodPost, servicePath + "/attachToVPC", http.StatusAccepted, asyncOp, writeOp},
	{OpDetachFromVPC, http.MethodPost, servicePath + "/detachFromVPC", http.StatusAccepted, asyncOp, writeOp},
	{OpStartService, http.MethodPost, servicePath + "/start", http.StatusAccepted, asyncOp, writeOp},                               // revision 2026
	{OpStopService, http.MethodPost, servicePath + "/stop", http.StatusAccepted, asyncOp, writeOp},                                 // revision 2026
	{OpRenameService, http.MethodPost, servicePath + "/rename", http.StatusOK, syncOp, writeOp},                                    // revision 2026
	{OpGetServiceMetricsAvailableSeries, http.MethodGet, servicePath + "/metrics/available-series", http.StatusOK, syncOp, readOp}, // revision 2026
	{OpGetServiceMetricsSeries, http.MethodPost, servicePath + "/metrics/series", http.StatusOK, syncOp, readOp},                   // revision 2026: a POST that reads
	{OpGetServiceLogs, http.MethodGet, servicePath + "/logs", http.StatusOK, syncOp, readOp},                                       // revision 2026

	{OpListReplicaSets, http.MethodGet, replicaSetsPath, http.StatusOK, syncOp, readOp},
	{OpCreateReplicaSet, http.MethodPost, replicaSetsPath, http.StatusAccepted, asyncOp, writeOp},
	{OpDeleteReplicaSet, http.MethodDelete, replicaSetPath, http.StatusAccepted, asyncOp, writeOp},
	{OpResizeReplicaSet, http.MethodPost, replicaSetPath + "/resize", http.StatusAccepted, asyncOp, writeOp},
	{OpEnableReplicaSetPooler, http.MethodPost, replicaSetPath + "/enablePooler", http.StatusOK, syncOp, writeOp},
	{OpDisableReplicaSetPooler, http.MethodPost, replicaSetPath + "/disablePooler", http.StatusOK, syncOp, writeOp},
	{OpSetReplicaSetEnvironment, http.MethodPost, replicaSetPath + "/setEnvironment", http.StatusOK, syncOp, writeOp},

	{OpListVPCs, http.MethodGet, vpcsPath, http.StatusOK, syncOp, readOp},
	{OpCreateVPC, http.MethodPost, vpcsPath, http.StatusCreated, syncOp, writeOp},
	{OpGetVPC, http.MethodGet, vpcPath, http.StatusOK, syncOp, readOp},
	{OpRenameVPC, http.MethodPost, vpcPath + "/rename", http.StatusOK, syncOp, writeOp},
	{OpDeleteVPC, http.MethodDelete, vpcPath, http.StatusNoContent, syncOp, writeOp},

	{OpListPeerings, http.MethodGet, peeringsPath, http.StatusOK, syncOp, readOp},
	{OpCreatePeering, http.MethodPost, peeringsPath, http.StatusCreated, syncOp, writeOp},
	{OpGetPeering, http.MethodGet, peeringPath, http.StatusOK, syncOp, readOp},
	{OpDeletePeering, http.MethodDelete, peeringPath, http.StatusNoContent, syncOp, writeOp},
}

var byName = func() map[string]Operation {
	m := make(map[string]Operation, len(catalog))
	for _, o := range catalog {
		m[o.Name] = o
	}
	return m
}()

// Catalog returns every operation of the API, in the spec's order.
func Catalog() []Operation { return append([]Operation(nil), catalog...) }

// Lookup returns the named operation.
func Lookup(name string) (Operation, bool) {
	o, ok := byName[name]
	return o, ok
}

// Operations lists every operation name, reads first: the operation label
// values of the API metrics.
var Operations = func() []string {
	var reads, writes []string
	for _, o := range catalog {
		if o.Write {
			writes = append(writes, o.Name)
		} else {
			reads = append(reads, o.Name)
		}
	}
	return append(reads, writes...)
}()
