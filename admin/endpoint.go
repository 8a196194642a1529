package admin

import (
	"context"
	"net/url"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Resource kinds, for refreshing and tracking.
const (
	kindService    = "service"
	kindReplicaSet = "replica_set"
	kindVPC        = "vpc"
	kindPeering    = "peering"
)

// Path value names.
const (
	idProject    = "project_id"
	idService    = "service_id"
	idReplicaSet = "replica_set_id"
	idVPC        = "vpc_id"
	idPeering    = "peering_id"
)

// endpoint is one write operation of the admin surface. Its route is the
// upstream method and path under /api/v1.
type endpoint struct {
	op     string
	method string
	// path is the upstream path template below the API base URL.
	path string
	// ids are the path value names after project_id, in path order.
	ids []string
	// async operations answer 202 and are tracked until they settle.
	async bool
	// idempotent operations accept an Idempotency-Key.
	idempotent bool
	// guarded deletes need ?confirm=<id> when the resource is PROD.
	guarded bool
	// decode validates the body and returns the typed upstream body, nil
	// for operations that take none.
	decode func(raw []byte) (any, error)
	// call runs the upstream operation and returns its typed answer, nil
	// for operations answered without a body.
	call func(ctx context.Context, c *apiclient.Client, ids ids, body any) (any, error)
	// target tells which resource to refresh and, for asynchronous
	// operations, how it settles.
	target func(ids ids, result any) target
}

// pattern is the ServeMux pattern of the endpoint.
func (e *endpoint) pattern() string {
	return e.method + " " + apiPrefix + e.path
}

// ids are the path values of one request.
type ids map[string]string

// upstreamPath fills the endpoint's path template with escaped ids.
func (e *endpoint) upstreamPath(v ids) string {
	var b strings.Builder
	tmpl := e.path
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			b.WriteString(tmpl)
			return b.String()
		}
		end := strings.IndexByte(tmpl, '}')
		b.WriteString(tmpl[:open])
		b.WriteString(url.PathEscape(v[tmpl[open+1:end]]))
		tmpl = tmpl[end+1:]
	}
}

// Settled states an asynchronous operation waits for.
const (
	settleNone  = ""      // synchronous: refresh only
	settleReady = "ready" // service READY, replica set active
	settleGone  = "gone"  // deleted
)

// target is the resource a write affected.
type target struct {
	kind                                      string
	serviceID, replicaSetID, vpcID, peeringID string
	settle                                    string
}

// bodyless decodes the body of an operation that takes none.
func bodyless(raw []byte) (any, error) { return nil, decodeEmpty(raw) }

// serviceTarget is the target of a write to the service in the path.
func serviceTarget(settle string) func(ids, any) target {
	return func(v ids, _ any) target {
		return target{kind: kindService, serviceID: v[idService], settle: settle}
	}
}

// replicaSetTarget is the target of a write to the replica set in the path.
func replicaSetTarget(settle string) func(ids, any) target {
	return func(v ids, _ any) target {
		return target{kind: kindReplicaSet, serviceID: v[idService], replicaSetID: v[idReplicaSet], settle: settle}
	}
}

// endpoints lists every write operation, in the spec's order.
func endpoints() []*endpoint {
	var all []*endpoint
	all = append(all, serviceEndpoints()...)
	all = append(all, replicaSetEndpoints()...)
	all = append(all, vpcEndpoints()...)
	all = append(all, peeringEndpoints()...)
	return all
}
