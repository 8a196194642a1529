package apiclient

import (
	"net/http"
	"slices"
	"strings"
)

// Operation names, here and in each resource's file; stable: metrics, audit and the allow list use them.
const (
	OpGetAuthInfo = "getAuthInfo"
)

// Operation is one operation of the API; the simulator keeps its own routes: it is the oracle.
type Operation struct {
	Name string
	// Below the base URL; {project_id} is the client's project, the other placeholders are filled in order.
	Method, Path string
	Success      int
	Async        bool
	// Only writes are offered by the admin surface; some reads are POSTs.
	Write bool
}

// IDs are the names of the path placeholders after {project_id}, in order.
func (o Operation) IDs() []string {
	var ids []string
	for _, part := range strings.Split(o.Path, "{")[1:] {
		if name, _, _ := strings.Cut(part, "}"); name != "project_id" {
			ids = append(ids, name)
		}
	}
	return ids
}

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

const (
	syncOp, asyncOp = false, true
	readOp, writeOp = false, true
)

var _ = register([]Operation{
	{OpGetAuthInfo, http.MethodGet, "/auth/info", http.StatusOK, syncOp, readOp},
})

// Example is what a read takes beyond its ids, for the tests that call every read from the catalog.
type Example struct {
	Op    string
	Arg   any
	Query string
}

// Package variables are all set before any init runs, so no file order matters.
var (
	registered [][]Operation
	examples   = map[string]Example{}
)

func register(ops []Operation, ex ...Example) []Operation {
	registered = append(registered, ops)
	for _, e := range ex {
		examples[e.Op] = e
	}
	return ops
}

var (
	catalog []Operation
	byName  map[string]Operation
)

func init() {
	slices.SortStableFunc(registered, func(a, b []Operation) int { return strings.Compare(a[0].Path, b[0].Path) })
	catalog = slices.Concat(registered...)
	byName = make(map[string]Operation, len(catalog))
	var reads, writes []string
	for _, o := range catalog {
		byName[o.Name] = o
		if o.Write {
			writes = append(writes, o.Name)
		} else {
			reads = append(reads, o.Name)
		}
	}
	Operations = slices.Concat(reads, writes)
}

// Catalog returns every operation of the API, in the spec's order.
func Catalog() []Operation { return append([]Operation(nil), catalog...) }

// Operations lists every operation name, reads first: the API metrics' operation label values.
var Operations []string

// Example returns what the read takes beyond its ids; false for a read of its ids alone.
func (o Operation) Example() (Example, bool) {
	e, ok := examples[o.Name]
	return e, ok
}
