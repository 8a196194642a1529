package apiclient

import (
	"net/http"
	"slices"
	"strings"
)

// Operation names, here and beside each resource's Client methods. They are
// stable: metrics, logs, audit records, the admin allow list and the
// simulator use them.
const (
	OpGetAuthInfo = "getAuthInfo"
	// OpListProjects is revision 2026's GET /projects.
	OpListProjects = "listProjects"
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

// accountOps are the operations on the caller rather than a resource.
var accountOps = []Operation{
	{OpGetAuthInfo, http.MethodGet, "/auth/info", http.StatusOK, syncOp, readOp},
	{OpListProjects, http.MethodGet, "/projects", http.StatusOK, syncOp, readOp}, // revision 2026
}

// catalog is every operation of the API, in the spec's order. Each
// resource's operations sit in its file beside their Client methods, so
// that adding one is an entry and a method there and, for a write, its
// admin endpoint.
var catalog = slices.Concat(accountOps, serviceOps, replicaSetOps, vpcOps, peeringOps)

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
